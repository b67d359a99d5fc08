"""Asks Slurm about a job: `scontrol show job -d` (allocation) and `scontrol listpids` (processes).

Commands run through an injectable runner (tests pass fakes), as argument lists with a
timeout and LC_ALL=C (scontrol's messages are matched as text). Failures never raise: each
function returns a problem line the screen can show ("scontrol not found: ..."), because a
watch view must keep working on a laptop, a login node or with slurmctld down.

Format of `scontrol show job -d` (formats-scaling.md 2.4, src/api/job_info.c): `Key=Value`
pairs, first line `JobId=`, continuation lines indented 3 spaces, with -d one line per node
indented 5 spaces: `Nodes=cn[01-02] CPU_IDs=0-15 Mem=64000 GRES=gpu:a100:2(IDX:0-1)`.
`TRES=` until 22.05, `ReqTRES=`/`AllocTRES=` from 23.02; `GRES_IDX=gpu(IDX:0)` before 19.05.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from itertools import product
from typing import Callable, Sequence

TIMEOUT_S = 5.0
JOB_ID = re.compile(r"\d+(_\d+)?(\+\d+)?")
"""Plain, array (`12_3`) and heterogeneous (`12+1`) ids; anything else is refused before running."""
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][\w/:.()]*)=")
"""A key starts a line or follows a space: values like `cpu=8,mem=10G` hold '=' after no space."""
_GPU_IDX = re.compile(r"gpu[^(),]*\(IDX:([^)]*)\)")
_MEM = re.compile(r"(\d+(?:\.\d+)?)([KMGTP]?)", re.I)


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str]], CommandResult]


class SubprocessRunner:
    """Runs a command with a timeout; raises FileNotFoundError / subprocess.TimeoutExpired."""

    def __init__(self, timeout: float = TIMEOUT_S) -> None:
        self.timeout = timeout

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        env = {**os.environ, "LC_ALL": "C"}
        # Own session: on timeout we kill the group we created, so a wrapper script's children
        # cannot keep the pipes open and make us wait past the timeout.
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended just as the timeout fired
                pass
            proc.communicate()
            raise
        return CommandResult(proc.returncode, out, err)


def run(runner: Runner, argv: Sequence[str]) -> tuple[CommandResult | None, str | None]:
    """Run one Slurm command; a failure becomes one clear sentence instead of an exception."""
    what = " ".join(argv)
    try:
        result = runner(argv)
    except FileNotFoundError:
        return None, f"{argv[0]} not found: Slurm client tools are not installed on this node"
    except subprocess.TimeoutExpired as exc:
        return None, f"`{what}` did not answer within {exc.timeout:g} s: slurmctld may be down or overloaded"
    except OSError as exc:
        return None, f"cannot run {argv[0]}: {exc.strerror or exc}"
    if result.returncode != 0:
        text = (result.stderr or result.stdout).strip()
        if "Invalid job id" in text:
            return result, f"Slurm job {argv[-1]} does not exist (finished jobs are forgotten after MinJobAge, 300 s by default)"
        if "configuration source" in text or "slurm.conf" in text:
            return result, f"`{what}` found no Slurm configuration (set SLURM_CONF?)"
        last = text.splitlines()[-1] if text else f"exit status {result.returncode}"
        return result, f"`{what}` failed: {last}"
    return result, None


@dataclass(frozen=True)
class NodeAlloc:
    """One `Nodes=` line of `scontrol show job -d`."""

    nodes: str
    cpu_ids: tuple[int, ...] = ()
    """Slurm's *abstract* CPU ids (scontrol(1)): they need not match the kernel's numbering."""
    mem_bytes: int | None = None
    gpu_indices: tuple[int, ...] = ()
    gres: str = ""


@dataclass(frozen=True)
class JobInfo:
    job_id: str
    state: str | None = None
    user: str | None = None
    uid: int | None = None
    num_cpus: int | None = None
    num_nodes: int | None = None
    node_list: str | None = None
    sluid: str | None = None
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    tres_mem: int | None = None
    nodes: tuple[NodeAlloc, ...] = ()
    fields: dict[str, str] = field(default_factory=dict, compare=False)


def mem_bytes(text: str | None) -> int | None:
    """Slurm sizes: `10G`, `500M`, `3000` (MB when bare), binary multiples."""
    m = _MEM.fullmatch((text or "").strip())
    if not m:
        return None
    return int(float(m.group(1)) * 1024 ** "KMGTP".index((m.group(2) or "M").upper()) * 1024)


def expand_hostlist(text: str) -> list[str]:
    """`cn[01-03,07],gpu1` -> cn01 cn02 cn03 cn07 gpu1 (zero padding kept; several [] nest)."""
    hosts: list[str] = []
    for part in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", text):
        pieces = re.split(r"\[([^\]]*)\]", part)
        choices: list[list[str]] = []
        for i, piece in enumerate(pieces):
            if i % 2 == 0:
                choices.append([piece])
                continue
            names: list[str] = []
            for rng in piece.split(","):
                lo, _, hi = rng.partition("-")
                names += [str(n).zfill(len(lo)) for n in range(int(lo), int(hi or lo) + 1)]
            choices.append(names)
        hosts += ["".join(combo) for combo in product(*choices)]
    return hosts


def _pairs(line: str) -> dict[str, str]:
    keys = list(_KEY.finditer(line))
    return {k.group(1): line[k.end(): keys[i + 1].start() if i + 1 < len(keys) else len(line)].strip() for i, k in enumerate(keys)}


def id_list(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (hi.isdigit() or not hi):
            out += range(int(lo), int(hi or lo) + 1)
    return tuple(out)


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def parse_show_job(text: str, job_id: str | None = None) -> JobInfo | None:
    """Parse `scontrol show job -d` text; with several records (arrays) pick `job_id`'s."""
    records = [r for r in re.split(r"\n\s*\n", text) if "JobId=" in r]
    chosen = next((r for r in records if job_id and re.search(rf"\bJobId={re.escape(job_id)}\b", r)), records[0] if records else None)
    if chosen is None:
        return None
    top: dict[str, str] = {}
    nodes: list[NodeAlloc] = []
    for line in chosen.splitlines():
        pairs = _pairs(line.strip())
        if "Nodes" in pairs and ("CPU_IDs" in pairs or "Mem" in pairs):
            gres = pairs.get("GRES") or pairs.get("GRES_IDX") or ""  # GRES_IDX= before 19.05
            idx = [i for group in _GPU_IDX.findall(gres) for i in id_list(group)]
            nodes.append(NodeAlloc(pairs["Nodes"], id_list(pairs.get("CPU_IDs", "")), mem_bytes(pairs.get("Mem")), tuple(idx), gres))
        else:
            for k, v in pairs.items():
                top.setdefault(k, v)
    user, _, uid = top.get("UserId", "").partition("(")
    tres = top.get("AllocTRES") or top.get("TRES") or ""  # TRES= until 22.05 (formats-scaling.md 2.4)
    tres_mem = re.search(r"(?:^|,)mem=([^,]+)", tres)
    return JobInfo(
        job_id=top.get("JobId", job_id or ""),
        state=top.get("JobState"),
        user=user or None,
        uid=_int(uid.rstrip(")")),
        num_cpus=_int(top.get("NumCPUs")),
        num_nodes=_int(top.get("NumNodes")),
        node_list=top.get("NodeList") if top.get("NodeList") not in (None, "(null)") else None,
        sluid=top.get("SLUID"),
        mem_per_node=mem_bytes(top.get("MinMemoryNode")),
        mem_per_cpu=mem_bytes(top.get("MinMemoryCPU")),
        tres_mem=mem_bytes(tres_mem.group(1)) if tres_mem else None,
        nodes=tuple(nodes),
        fields=top,
    )


def node_alloc(info: JobInfo, hostname: str) -> NodeAlloc | None:
    """This node's `Nodes=` record (the only one when the job has one node)."""
    for alloc in info.nodes:
        if hostname in expand_hostlist(alloc.nodes):
            return alloc
    return info.nodes[0] if len(info.nodes) == 1 and (info.num_nodes or 1) == 1 else None


def show_job(runner: Runner, job_id: str) -> tuple[JobInfo | None, str | None]:
    if not JOB_ID.fullmatch(job_id):
        return None, f"{job_id!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"
    result, problem = run(runner, ["scontrol", "show", "job", "-d", job_id])
    if problem or result is None:
        return None, problem
    info = parse_show_job(result.stdout, job_id)
    return (info, None) if info else (None, f"could not read `scontrol show job -d {job_id}` output")


def list_pids(runner: Runner, job_id: str) -> tuple[frozenset[int], str | None]:
    """PIDs slurmstepd tracks for the job *on this node* (works with proctrack/linuxproc too)."""
    if not JOB_ID.fullmatch(job_id):
        return frozenset(), f"{job_id!r} is not a Slurm job id"
    result, problem = run(runner, ["scontrol", "listpids", job_id])
    if result is not None and problem and ("no steps" in result.stderr or "does not exist on this node" in result.stderr):
        return frozenset(), None  # not an error: no process of the job runs here (the scope says why)
    if problem or result is None:
        return frozenset(), problem
    # Header `PID JOBID STEPID LOCALID GLOBALID`, then one row per process. The JOBID column is
    # the numeric id, so it can only be checked for plain ids (array/het ids differ from it).
    rows = [line.split() for line in result.stdout.splitlines()]
    plain = job_id.isdigit()
    return frozenset(int(r[0]) for r in rows if len(r) >= 2 and r[0].isdigit() and (not plain or r[1] == job_id)), None


def job_sluid(runner: Runner, job_id: str) -> str | None:
    """The SLUID (26.05+) from accounting; only asked when no other way found the cgroup."""
    if not JOB_ID.fullmatch(job_id):
        return None
    result, problem = run(runner, ["sacct", "-X", "-n", "-P", "-o", "sluid", "-j", job_id])
    value = result.stdout.strip().splitlines()[0].strip() if result and not problem and result.stdout.strip() else ""
    return value if re.fullmatch(r"s[0-9A-Z]{13}", value) else None
