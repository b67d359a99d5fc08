"""Finds a Slurm job's cgroup and reads what the job was given and what it uses.

Every function takes `root` (normally "/") and reads only below it, so tests build fake
/proc and /sys/fs/cgroup trees. Nothing raises for an unreadable or odd file: the reading
comes back with a `problems` line and the field left None, because one bad file must not
hide the rest of the job.

Layouts (monitor-anchors.md 4.1): cgroup v1 `<ctrl>/slurm[_<node>]/uid_U/job_J/step_S/task_T`;
v2 `<slice>/[<node>_]slurmstepd.scope/<jobdir>/step_S/user/task_T` where <jobdir> is `job_J`
up to 25.11 and the SLUID (`s` + 13 base32 chars) from 26.05. The job directory is taken
from a member's /proc/PID/cgroup *without interpreting its name*, so SLUID names, multiple
slurmd and pam_slurm_adopt's `step_extern` all work the same way.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_MOUNT = "sys/fs/cgroup"
V2_MOUNTS = ("", "unified")
"""Pure v2 is mounted at /sys/fs/cgroup; hybrid systems mount it at /sys/fs/cgroup/unified."""
V1_CONTROLLERS = ("memory", "cpuset", "freezer", "cpuacct")
V1_NO_LIMIT = 1 << 62
"""v1 says "no limit" with PAGE_COUNTER_MAX pages (9223372036854771712 on 4 KiB pages)."""
MAX_CPUS = 1 << 16
"""Highest cpu id a cpulist may name (the kernel's NR_CPUS is at most 8192): a garbled
`0-99999999999` is an error, not a set that fills the memory."""
NOT_A_JOB = {"system", "slurm"}
"""slurmstepd.scope/system holds slurmstepd itself; step_*/slurm too: not the user's work."""


@dataclass(frozen=True)
class JobCgroup:
    """Where a job's cgroup is: v2 has one directory, v1 one per controller."""

    version: int
    path: str
    """Cgroup path inside the hierarchy, e.g. /system.slice/slurmstepd.scope/job_42."""
    dirs: dict[str, Path] = field(default_factory=dict, compare=False)
    """v2: {"unified": dir}; v1: {"memory": dir, "cpuset": dir, ...} (absolute, below root)."""
    found_by: str = ""

    def shown(self, root: str | os.PathLike[str]) -> str:
        """The path a user would `ls` (root stripped): the memory dir on v1."""
        main = self.dirs.get("unified") or self.dirs.get("memory") or next(iter(self.dirs.values()))
        return "/" + main.relative_to(Path(root)).as_posix()


@dataclass
class CgroupReading:
    cpu_ids: tuple[int, ...] = ()
    memory_limit: int | None = None
    memory_used: int | None = None
    memory_peak: int | None = None
    memory_stat: dict[str, int] = field(default_factory=dict)
    """anon/file/shmem in bytes (v1 total_rss/total_cache/total_shmem mapped to these names)."""
    pids: frozenset[int] = frozenset()
    evidence: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """Kernel cpulist `0-3,8,10-11` (also `0-31:2/4` strides) -> sorted ids; ValueError if garbled."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        span, _, stride = part.strip().partition(":")
        lo, _, hi = span.partition("-")
        if not all(x.isascii() and x.isdigit() and len(x) <= 6 for x in (lo, hi or lo)):
            raise ValueError(f"bad cpu range {part!r}")
        first, last = int(lo), int(hi or lo)
        if last < first or last >= MAX_CPUS:
            raise ValueError(f"bad cpu range {part!r}")
        used, _, group = stride.partition("/") if stride else ("1", "", "1")
        if not all(x.isascii() and x.isdigit() and len(x) <= 6 for x in (used, group)) or int(group) == 0:
            raise ValueError(f"bad cpu stride {part!r}")
        used, group = int(used), int(group)
        cpus.update(c for c in range(first, last + 1) if (c - first) % group < used)
    return tuple(sorted(cpus))


def _read(path: Path, problems: list[str]) -> str | None:
    """File text, or None: missing is silent (caller decides), unreadable becomes a problem."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")  # names in /proc/PID/cgroup are any bytes
    except FileNotFoundError:
        return None
    except PermissionError:
        problems.append(f"cannot read {path}: permission denied")
    except OSError as exc:
        problems.append(f"cannot read {path}: {exc.strerror or exc}")
    return None


def _int(text: str | None, path: Path, problems: list[str]) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        problems.append(f"unexpected content in {path}: {text.strip()[:40]!r}")
        return None


def job_path_of(cgroup_path: str, v2: bool) -> str | None:
    """The job's directory in a /proc/PID/cgroup path, or None when it is not a Slurm job."""
    parts = cgroup_path.split("/")
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if v2 and (part == "slurmstepd.scope" or part.endswith("_slurmstepd.scope")) and nxt not in NOT_A_JOB:
            return "/".join(parts[: i + 2])
        if not v2 and re.fullmatch(r"uid_\d+", part) and i > 0 and re.fullmatch(r"slurm(_.+)?", parts[i - 1]):
            return "/".join(parts[: i + 2])
    return None


def _v2_dir(root: Path, path: str) -> Path | None:
    for mount in V2_MOUNTS:
        d = root / CGROUP_MOUNT / mount / path.lstrip("/")
        if d.is_dir():
            return d
    return None


def _v1_dirs(root: Path, path: str, fields: dict[str, str]) -> dict[str, Path]:
    """Controller -> dir; `fields` maps controller to its /proc/PID/cgroup field ("cpu,cpuacct")."""
    dirs = {}
    for ctrl in V1_CONTROLLERS:
        for mount in (fields.get(ctrl), ctrl):
            d = root / CGROUP_MOUNT / mount / path.lstrip("/") if mount else None
            if d is not None and d.is_dir():
                dirs[ctrl] = d
                break
    return dirs


def cgroup_of_pid(root: str | os.PathLike[str], pid: int) -> JobCgroup | None:
    """The Slurm job cgroup that process `pid` is in (v2 preferred), or None."""
    base = Path(root)
    text = _read(base / "proc" / str(pid) / "cgroup", [])
    if not text:
        return None
    v1_fields: dict[str, str] = {}
    v1_path = None
    for line in text.splitlines():
        hid, _, rest = line.partition(":")
        ctrls, _, path = rest.partition(":")
        if hid == "0" and not ctrls:
            job = job_path_of(path, v2=True)
            found = _v2_dir(base, job) if job else None
            if job and found:
                return JobCgroup(2, job, {"unified": found}, f"/proc/{pid}/cgroup")
            continue
        job = job_path_of(path, v2=False)
        for ctrl in ctrls.split(","):
            if job and ctrl in V1_CONTROLLERS:
                v1_fields[ctrl], v1_path = ctrls, job
    dirs = _v1_dirs(base, v1_path, v1_fields) if v1_path else {}
    return JobCgroup(1, v1_path, dirs, f"/proc/{pid}/cgroup") if v1_path and dirs else None


def slurm_scopes(base: Path) -> list[Path]:
    """Every slurmstepd.scope (any CgroupSlice, any `<node>_` prefix), v2 and hybrid mounts."""
    found: list[Path] = []
    for mount in V2_MOUNTS:
        top = base / CGROUP_MOUNT / mount
        found += sorted(top.glob("*/*slurmstepd.scope")) + sorted(top.glob("*/*/*slurmstepd.scope"))
    return [p for p in found if p.name == "slurmstepd.scope" or p.name.endswith("_slurmstepd.scope")]


def cgroup_of_job(root: str | os.PathLike[str], job_id: str, sluid: str | None = None) -> JobCgroup | None:
    """Find a job's cgroup without a member pid: `job_<id>`, then the SLUID, then a directory
    whose processes carry SLURM_JOB_ID=<id> (26.05 names dirs by SLUID; environ is readable for
    one's own processes and for root)."""
    base = Path(root)
    if not re.fullmatch(r"\d+", job_id):
        return None  # ids become path names and glob patterns: digits only
    sluid = sluid if sluid and re.fullmatch(r"[0-9A-Za-z]+", sluid) else None
    for scope in slurm_scopes(base):
        for name, how in ((f"job_{job_id}", "job_<id>"), (sluid, "SLUID")):
            if name and (scope / name).is_dir():
                d = scope / name
                return JobCgroup(2, "/" + d.relative_to(_mount_of(base, d)).as_posix(), {"unified": d}, f"{how} under {scope.name}")
    for ctrl in V1_CONTROLLERS:
        for d in sorted((base / CGROUP_MOUNT / ctrl).glob(f"slurm*/uid_*/job_{job_id}")):
            path = "/" + d.relative_to(base / CGROUP_MOUNT / ctrl).as_posix()
            return JobCgroup(1, path, _v1_dirs(base, path, {}), f"job_{job_id} under /{CGROUP_MOUNT}/{ctrl}")
    for scope in slurm_scopes(base):
        for d in sorted(p for p in scope.iterdir() if p.is_dir() and p.name not in NOT_A_JOB):
            for pid in sorted(procs_below(d, 2))[:4]:
                if environ(base, pid).get("SLURM_JOB_ID") == str(job_id):
                    return JobCgroup(2, "/" + d.relative_to(_mount_of(base, d)).as_posix(), {"unified": d}, f"SLURM_JOB_ID of pid {pid} in {d.name}")
    return None


def _mount_of(base: Path, d: Path) -> Path:
    unified = base / CGROUP_MOUNT / "unified"
    return unified if unified in d.parents else base / CGROUP_MOUNT


def cgroup_from_shown(root: str | os.PathLike[str], shown: str) -> JobCgroup | None:
    """Rebuild a JobCgroup from `JobCgroup.shown()` (what JobScope.cgroup keeps) for refresh."""
    base = Path(root)
    rel = shown.lstrip("/")
    prefix = CGROUP_MOUNT + "/"
    if not rel.startswith(prefix):
        return None
    head, _, tail = rel[len(prefix):].partition("/")
    if head in V1_CONTROLLERS and job_path_of("/" + tail, v2=False):
        dirs = _v1_dirs(base, "/" + tail, {})
        return JobCgroup(1, "/" + tail, dirs, "previous reading") if dirs else None
    d = base / rel
    return JobCgroup(2, "/" + d.relative_to(_mount_of(base, d)).as_posix(), {"unified": d}, "previous reading") if d.is_dir() else None


def procs_below(top: Path, version: int, problems: list[str] | None = None) -> frozenset[int]:
    """PIDs in `top` and every cgroup below it (v2 keeps them in leaves); skips slurmstepd's own dirs."""
    problems = [] if problems is None else problems
    pids: set[int] = set()
    for here, subdirs, _files in os.walk(top):
        subdirs[:] = [s for s in subdirs if not (version == 2 and s == "slurm")]
        folder = Path(here)
        text = _read(folder / "cgroup.procs", problems)
        if text is None and version == 1:
            text = _read(folder / "tasks", problems)  # thread ids: old kernels lack cgroup.procs
        pids.update(int(t) for t in (text or "").split() if t.isascii() and t.isdigit() and len(t) <= 18)
    return frozenset(pids)


def environ(root: str | os.PathLike[str], pid: int) -> dict[str, str]:
    """A process's environment (empty when unreadable: other users' processes)."""
    try:
        raw = (Path(root) / "proc" / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0") if b"=" in item)
    return {k: v for k, _, v in pairs}


def read_job_cgroup(root: str | os.PathLike[str], cg: JobCgroup) -> CgroupReading:
    """Allocation (cores, memory limit) and use (memory now/peak, processes) from the cgroup."""
    out = CgroupReading()
    if cg.version == 2:
        d = cg.dirs["unified"]
        cpus_file, limit_file, used_file, peak_file = (d / n for n in ("cpuset.cpus.effective", "memory.max", "memory.current", "memory.peak"))
        stat_keys = {"anon": "anon", "file": "file", "shmem": "shmem"}
        procs_dir, mem = d, d
    else:
        mem, cpuset = cg.dirs.get("memory"), cg.dirs.get("cpuset")
        cpus_file = cpuset / "cpuset.cpus" if cpuset else None
        limit_file, used_file, peak_file = ((mem / n) if mem else None for n in ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.max_usage_in_bytes"))
        stat_keys = {"total_rss": "anon", "total_cache": "file", "total_shmem": "shmem"}
        procs_dir = cg.dirs.get("freezer") or mem or cpuset
    if cpus_file is not None:
        text = _read(cpus_file, out.problems)
        try:
            out.cpu_ids = parse_cpu_list(text) if text is not None else ()
            if text is not None:
                out.evidence.append(f"cpu ids from {cpus_file.name} of cgroup")
        except ValueError:
            out.problems.append(f"unexpected content in {cpus_file}: {text.strip()[:40]!r}")
    if limit_file is not None:
        text = _read(limit_file, out.problems)
        if text is not None and text.strip() == "max":
            out.evidence.append(f"{limit_file.name} = max: the cgroup sets no memory limit")
        else:
            out.memory_limit = _int(text, limit_file, out.problems)
            if out.memory_limit is not None and out.memory_limit >= V1_NO_LIMIT:
                out.memory_limit = None
                out.evidence.append(f"{limit_file.name}: no limit set")
            elif out.memory_limit is not None:
                out.evidence.append(f"memory limit from {limit_file.name} of cgroup")
    if used_file is not None:
        out.memory_used = _int(_read(used_file, out.problems), used_file, out.problems)
        out.memory_peak = _int(_read(peak_file, out.problems), peak_file, out.problems)
        if out.memory_peak is None and not peak_file.exists():
            out.evidence.append(f"no {peak_file.name} (kernel < 5.19, e.g. RHEL 8): peak unknown")
        if mem is not None:
            stat_file = used_file.parent / "memory.stat"
            for line in (_read(stat_file, out.problems) or "").splitlines():
                key, _, value = line.partition(" ")
                if key in stat_keys and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 20:
                    out.memory_stat[stat_keys[key]] = int(value)
    if procs_dir is not None:
        out.pids = procs_below(procs_dir, cg.version, out.problems)
    return out
