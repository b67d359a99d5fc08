"""Decides which processes and resources a watch view is about: a Slurm job, a user, a process
tree or the whole node, and says where every number came from.

`resolve_scope` runs once (it may call scontrol, one controller RPC); `refresh` runs every tick
and only re-reads files (cgroup, /proc), never Slurm. Sources for a job, best first
(monitor-anchors.md 4.1-4.3): the job cgroup found through a member's /proc/PID/cgroup (our
own process when started inside the allocation, else a PID from `scontrol listpids`), then
`job_<id>` / SLUID / SLURM_JOB_ID under slurmstepd.scope; `scontrol show job -d` for this
node's CPUs, memory and GPU indices; the job's environment for GPUs (SLURM_JOB_GPUS,
CUDA_VISIBLE_DEVICES). A node scope has empty `pids`, meaning every process; for the other
kinds an empty set means no process.

Label, evidence and problems quote outside text (scontrol's messages and fields, user names,
cgroup paths): they leave here cleaned of escape sequences (`metrics.safe_text`), so every
screen, table and stderr line that shows them is safe; `cgroup` stays raw (it is a path that
`refresh` reads again) and is cleaned where shown.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
import re
from pathlib import Path
from typing import Iterable, Mapping

from gpuscope.collectors import cgroups, procfs, slurm
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import AllocatedGpu, JobScope
from gpuscope.parsers.runlogs.formats import slurm_seconds

_UUID = re.compile(r"(GPU|MIG)-[0-9A-Za-z/.-]+")
_ENV_SAMPLE = 8
"""Processes whose environ we read for GPU variables (per-task binding: the union matters)."""


def resolve_scope(job: str | int | None = None, user: str | None = None, pid: int | None = None, root: str | os.PathLike[str] = "/", env: Mapping[str, str] | None = None, runner: slurm.Runner | None = None, self_pid: int | None = None) -> JobScope:
    """Scope from --job / --pid / --user (first given wins), else SLURM_JOB_ID of the environment
    (started inside an allocation), else the node."""
    env = os.environ if env is None else env
    runner = slurm.SubprocessRunner() if runner is None else runner
    try:
        return _resolve(job, user, pid, Path(root), env, runner, self_pid)
    except Exception as exc:  # noqa: BLE001 - output we could not read must not stop the host, GPU and process views
        kind, what = ("job", job) if job is not None else ("pid", pid) if pid is not None else ("user", user) if user is not None else ("job", env.get("SLURM_JOB_ID"))
        return _cleaned(JobScope(kind=kind, label=f"{kind} {what}", job_id=str(what) if kind == "job" else None,
                                 problems=(f"could not work out the {kind} scope: {type(exc).__name__}: {exc}",)))


def _resolve(job: str | int | None, user: str | None, pid: int | None, root: Path, env: Mapping[str, str], runner: slurm.Runner, self_pid: int | None) -> JobScope:
    if job is not None:
        return _cleaned(_job_scope(str(job), Path(root), env, runner, self_pid, auto=False))
    if pid is not None:
        return _cleaned(_pid_scope(int(pid), Path(root)))
    if user is not None:
        return _cleaned(_user_scope(str(user), Path(root)))
    if env.get("SLURM_JOB_ID"):
        return _cleaned(_job_scope(env["SLURM_JOB_ID"], Path(root), env, runner, self_pid, auto=True))
    return _cleaned(JobScope(kind="node", label=f"node {hostname(Path(root))}", evidence=("node scope: every process on this machine",)))


def _cleaned(scope: JobScope) -> JobScope:
    """The scope with its texts (label, evidence, problems, a job's user) safe to display."""
    return dataclasses.replace(
        scope, label=clean(scope.label), evidence=tuple(clean(e) for e in scope.evidence),
        problems=tuple(dict.fromkeys(clean(p) for p in scope.problems)),
        user=clean(scope.user) if scope.user is not None and scope.kind == "job" else scope.user,
    )


def missing(job: str | int | None = None, user: str | None = None, pid: int | None = None, root: str | os.PathLike[str] = "/", runner: slurm.Runner | None = None) -> str | None:
    """Why the asked-for scope does not exist ("no such user: x"), or None when it does or
    cannot be told (scontrol missing or slurmctld down: the scope's problems say so then).
    The command line checks this first: a scope that does not exist is a usage error (as
    `htop -u nosuchuser`), not an empty view. A job costs one `scontrol show job` call."""
    base = Path(root)
    if pid is not None:
        return None if int(pid) > 0 and (base / "proc" / str(pid)).is_dir() else clean(f"no such process: {pid}")
    if user is not None:
        return None if _uid_for(base, str(user)) is not None else clean(f"no such user: {user}")
    if job is not None:
        job_id = str(job)
        if not slurm.JOB_ID.fullmatch(job_id):
            return f"{job_id!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"
        _info, problem = slurm.show_job(slurm.SubprocessRunner() if runner is None else runner, job_id)
        return clean(problem) if problem and "does not exist" in problem else None
    return None


def refresh(scope: JobScope, root: str | os.PathLike[str] = "/") -> JobScope:
    """Re-read processes and memory use/peak from files only (no scontrol) for this tick."""
    base = Path(root)
    if scope.kind == "node":
        return scope
    if scope.kind == "user":
        uid = _uid_for(base, scope.user or "")
        return dataclasses.replace(scope, pids=user_pids(base, uid) if uid is not None else frozenset())
    cg = cgroups.cgroup_from_shown(base, scope.cgroup) if scope.cgroup else None
    if cg is not None:
        reading = cgroups.read_job_cgroup(base, cg)
        return dataclasses.replace(scope, pids=reading.pids, memory_used=reading.memory_used, memory_peak=reading.memory_peak)
    if scope.cgroup:
        gone = f"the job cgroup {clean(scope.cgroup)} is gone: the job has ended on this node"
        problems = scope.problems if gone in scope.problems else (*scope.problems, gone)
        return dataclasses.replace(scope, pids=frozenset(), memory_used=None, problems=problems)
    # No cgroup (proctrack/linuxproc, pid scope): the processes still alive plus their
    # descendants, so children started since the last tick are seen.
    alive = frozenset(p for p in scope.pids if (base / "proc" / str(p)).is_dir())
    return dataclasses.replace(scope, pids=alive | descendants(base, alive))


def _job_scope(job_id: str, base: Path, env: Mapping[str, str], runner: slurm.Runner, self_pid: int | None, auto: bool) -> JobScope:
    evidence: list[str] = [f"job {job_id} from SLURM_JOB_ID: gpuscope runs inside the allocation"] if auto else []
    problems: list[str] = []
    if not slurm.JOB_ID.fullmatch(job_id):
        return JobScope(kind="job", label=f"job {job_id}", job_id=job_id, problems=(f"{job_id!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)",))
    info, problem = slurm.show_job(runner, job_id)
    hung = "did not answer" in (problem or "")  # then skip sacct too: one wait is enough
    if problem:
        problems.append(problem)
        if "does not exist" in problem:
            return JobScope(kind="job", label=f"job {job_id}", job_id=job_id, evidence=tuple(evidence), problems=tuple(problems))
    inside = env.get("SLURM_JOB_ID") == job_id
    cg = cgroups.cgroup_of_pid(base, os.getpid() if self_pid is None else self_pid) if inside else None
    listed: frozenset[int] = frozenset()
    if not (problem or "").startswith("scontrol not found"):
        listed, problem = slurm.list_pids(runner, job_id)
        problems += [problem] if problem else []
    for member in sorted(listed):
        cg = cg or cgroups.cgroup_of_pid(base, member)
    sluid = (env.get("SLURM_JOB_SLUID") if inside else None) or (info.sluid if info else None)
    cg = cg or cgroups.cgroup_of_job(base, job_id, sluid)
    if cg is None and sluid is None and not hung and cgroups.slurm_scopes(base):
        sluid = slurm.job_sluid(runner, job_id)  # 26.05 names the cgroup by SLUID: ask sacct
        cg = cgroups.cgroup_of_job(base, job_id, sluid) if sluid else None
    reading = cgroups.read_job_cgroup(base, cg) if cg else None
    if cg and reading:
        evidence.append(f"cgroup {cg.shown(base)} (v{cg.version}) found via {cg.found_by}")
        evidence += reading.evidence
        problems += reading.problems
    pids = (reading.pids if reading else frozenset()) | listed
    evidence += [f"processes from cgroup.procs below {cg.shown(base)}"] if reading else []
    evidence += ["processes from scontrol listpids"] if listed else []

    here = hostname(base)
    alloc = slurm.node_alloc(info, here) if info else None
    if info and info.state and info.state != "RUNNING":
        problems.append(f"job {job_id} is {info.state}" + (": it has no processes yet" if info.state == "PENDING" else ""))
    elif info and info.node_list and not pids and not slurm.hostlist_contains(info.node_list, here):
        problems.append(f"job {job_id} runs on {info.node_list}, not on this node ({here}): run gpuscope there, e.g. srun --jobid={job_id} --overlap --pty gpuscope")
    elif not pids and not problems:
        problems.append(f"no process of job {job_id} found on this node (no job cgroup, and scontrol listpids lists none)")
    envs = [env] if inside else [cgroups.environ(base, p) for p in sorted(pids)[:_ENV_SAMPLE]]

    cpus, cpu_ids = _cpus(info, alloc, reading, envs, evidence, problems)
    limit = _memory_limit(info, alloc, reading, cpus, envs, evidence)
    used, peak = (reading.memory_used, reading.memory_peak) if reading else (None, None)
    if reading is None and pids:
        # The process table already reads every RSS; the view sums the scope's rows itself.
        evidence.append("memory used: no job cgroup (proctrack/linuxproc?): the sum of the processes' RSS, page cache not counted")
    gpus = _gpus(alloc, envs, evidence)
    user = (info.user if info else None) or next((e["SLURM_JOB_USER"] for e in envs if e.get("SLURM_JOB_USER")), None)
    label = f"job {job_id}" + (f" ({', '.join(x for x in (user, info.state if info else None) if x)})" if user or info else "")
    return JobScope(
        kind="job", label=label, pids=pids, job_id=job_id, user=user, cpus_allocated=cpus, cpu_ids=cpu_ids,
        memory_limit=limit, memory_used=used, memory_peak=peak, gpus=gpus, cgroup=cg.shown(base) if cg else None,
        work_dir=info.work_dir if info else None, stdout=info.stdout if info else None,
        evidence=tuple(evidence), problems=tuple(dict.fromkeys(problems)), time_limit_s=_time_limit(info),
        stderr=info.stderr if info else None,
    )


def _time_limit(info: slurm.JobInfo | None) -> float | None:
    """`TimeLimit` of scontrol show job in seconds; None when UNLIMITED, absent or unreadable."""
    seconds = slurm_seconds(info.fields.get("TimeLimit", "")) if info else float("nan")
    return None if seconds != seconds else seconds


def _cpus(info: slurm.JobInfo | None, alloc: slurm.NodeAlloc | None, reading: cgroups.CgroupReading | None, envs: list[Mapping[str, str]], evidence: list[str], problems: list[str]) -> tuple[int | None, tuple[int, ...]]:
    count: int | None = None
    if alloc and alloc.cpu_ids:
        count = len(alloc.cpu_ids)
        evidence.append(f"cpus: {count} on this node from scontrol show job -d (Nodes={alloc.nodes} CPU_IDs)")
    elif info and info.num_cpus and (info.num_nodes or 1) == 1:
        count = info.num_cpus
        evidence.append(f"cpus: {count} from scontrol show job NumCPUs")
    cg_ids = reading.cpu_ids if reading else ()
    if count is None and cg_ids:
        count = len(cg_ids)
        evidence.append(f"cpus: {count} from the job cgroup's cpuset")
    if count is None:
        on_node = next((e["SLURM_CPUS_ON_NODE"] for e in envs if e.get("SLURM_CPUS_ON_NODE", "").isdigit()), None)
        if on_node:
            count = int(on_node)
            evidence.append(f"cpus: {count} from SLURM_CPUS_ON_NODE")
    if cg_ids and len(cg_ids) == count:
        return count, cg_ids
    if cg_ids:
        problems.append(f"the job cgroup's cpuset has {len(cg_ids)} cpus but Slurm allocated {count}: cores are not confined (ConstrainCores=no?)")
    if alloc and alloc.cpu_ids:
        evidence.append("cpu ids: Slurm's abstract CPU_IDs (may differ from the kernel's numbering)")
        return count, alloc.cpu_ids
    return count, ()


def _memory_limit(info: slurm.JobInfo | None, alloc: slurm.NodeAlloc | None, reading: cgroups.CgroupReading | None, cpus: int | None, envs: list[Mapping[str, str]], evidence: list[str]) -> int | None:
    if reading and reading.memory_limit is not None:
        return reading.memory_limit
    candidates = [
        (alloc.mem_bytes if alloc else None, "Mem= of this node in scontrol show job -d"),
        (info.mem_per_node if info else None, "MinMemoryNode in scontrol show job"),
        ((info.mem_per_cpu or 0) * (cpus or 0) if info else None, "MinMemoryCPU x cpus in scontrol show job"),
        (info.tres_mem if info and (info.num_nodes or 1) == 1 else None, "mem= in the job's TRES"),
    ]
    mem_env = next((e["SLURM_MEM_PER_NODE"] for e in envs if e.get("SLURM_MEM_PER_NODE", "").isdigit()), None)
    candidates.append((slurm.mem_bytes(mem_env), "SLURM_MEM_PER_NODE"))
    for value, source in candidates:
        if value:  # 0 means "all of the node's memory" in Slurm: not a limit we can show
            evidence.append(f"memory limit: {value // 2**20} MiB from {source}")
            return value
    return None


def _gpus(alloc: slurm.NodeAlloc | None, envs: list[Mapping[str, str]], evidence: list[str]) -> tuple[AllocatedGpu, ...]:
    indices: tuple[int, ...] = ()
    source = ""
    if alloc and alloc.gpu_indices:
        indices, source = alloc.gpu_indices, f"scontrol show job -d (GRES={alloc.gres})"
    for key in ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS"):
        found = tuple(dict.fromkeys(i for e in envs for i in slurm.id_list(e.get(key, ""))))
        if found and not indices:
            indices, source = found, key
    tokens = list(dict.fromkeys(t.strip() for e in envs for t in e.get("CUDA_VISIBLE_DEVICES", "").split(",") if t.strip() and t.strip() != "NoDevFiles"))
    uuids = [t for t in tokens if _UUID.fullmatch(t)]
    gpus: list[AllocatedGpu]
    if any(u.startswith("MIG-") for u in uuids):
        # MIG instances are always UUIDs (gres.shtml); Slurm's IDX then counts MIG devices, not GPUs.
        gpus = [AllocatedGpu(None, u, "MIG instance UUID from CUDA_VISIBLE_DEVICES") for u in uuids]
    elif indices:
        paired = len(uuids) == len(indices)
        gpus = [AllocatedGpu(i, uuids[n] if paired else None, f"global index from {source}" + ("; UUID from CUDA_VISIBLE_DEVICES, same order" if paired else "")) for n, i in enumerate(indices)]
    elif uuids:
        gpus = [AllocatedGpu(None, u, "UUID from CUDA_VISIBLE_DEVICES") for u in uuids]
    else:
        gpus = [AllocatedGpu(int(t), None, "CUDA_VISIBLE_DEVICES (job-local numbering when ConstrainDevices=yes)") for t in tokens if t.isdigit()]
    if gpus:
        evidence.append("gpus: " + ", ".join(g.uuid or str(g.index) for g in gpus) + f" ({gpus[0].evidence})")
    return tuple(gpus)


def _pid_scope(pid: int, base: Path) -> JobScope:
    if not (base / "proc" / str(pid)).is_dir():
        return JobScope(kind="pid", label=f"pid {pid}", problems=(f"process {pid} does not exist",))
    pids = frozenset({pid}) | descendants(base, {pid})
    return JobScope(kind="pid", label=f"pid {pid} and its descendants", pids=pids, evidence=("processes: the pid and its descendants (parent links in /proc/PID/stat)",))


def _user_scope(name: str, base: Path) -> JobScope:
    uid = _uid_for(base, name)
    if uid is None:
        return JobScope(kind="user", label=f"user {name}", user=name, problems=(f"no such user: {name}",))
    return JobScope(kind="user", label=f"user {name}", user=name, pids=user_pids(base, uid), evidence=(f"processes: every process whose real uid is {uid}",))


def hostname(base: Path) -> str:
    try:
        return procfs.read_bytes(str(base / "proc/sys/kernel/hostname")).decode("utf-8", "replace").strip().split(".")[0]
    except OSError:
        return os.uname().nodename.split(".")[0]


def _proc_pids(base: Path) -> list[int]:
    try:
        return [int(p.name) for p in (base / "proc").iterdir() if p.name.isdigit()]
    except OSError:
        return []


def descendants(base: Path, roots: Iterable[int]) -> frozenset[int]:
    """Every process below `roots` via the ppid field of /proc/PID/stat."""
    children: dict[int, list[int]] = {}
    for p in _proc_pids(base):
        try:
            ppid = procfs.stat_ppid(procfs.read_bytes(str(base / "proc" / str(p) / "stat")))
        except OSError:
            continue  # exited between listing and reading
        if ppid is not None:
            children.setdefault(ppid, []).append(p)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return frozenset(found)


def user_pids(base: Path, uid: int) -> frozenset[int]:
    pids = set()
    for p in _proc_pids(base):
        try:
            status = procfs.read_bytes(str(base / "proc" / str(p) / "status"))
        except OSError:
            continue  # exited, or hidden (hidepid)
        if procfs.status_uid(status) == uid:
            pids.add(p)
    return frozenset(pids)


def _uid_for(base: Path, name: str) -> int | None:
    if name.isascii() and name.isdigit() and len(name) <= 18:
        return int(name)
    if base == Path("/"):  # the real system: LDAP/SSSD users are only visible through NSS
        try:
            return pwd.getpwnam(name).pw_uid
        except KeyError:
            return None
    try:
        for line in (base / "etc/passwd").read_text("utf-8", "replace").splitlines():
            parts = line.split(":")
            if len(parts) > 2 and parts[0] == name and parts[2].isdigit():
                return int(parts[2])
    except OSError:
        pass
    return None
