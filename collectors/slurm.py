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
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from itertools import islice, product
from typing import Callable, Iterable, Sequence

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.units import slurm_size

TIMEOUT_S = 5.0
JOB_ID = re.compile(r"\d+(_\d+)?(\+\d+)?")
"""Plain, array (`12_3`) and heterogeneous (`12+1`) ids; anything else is refused before running."""
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][\w/:.()]*)=")
"""A key starts a line or follows a space: values like `cpu=8,mem=10G` hold '=' after no space."""
_GPU_IDX = re.compile(r"gpu[^(),]*\(IDX:([^)]*)\)")
MAX_IDS = 1 << 16
"""Most ids one range or host list may expand to (Slurm's CPU ids and nodes are far fewer):
a garbled `0-99999999999` must not take the memory of the machine."""


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    """The command was killed at the timeout; stdout/stderr hold what it wrote before."""
    truncated: bool = False
    """The command wrote more than `MAX_OUTPUT` bytes: it was killed and the rest is not read."""


Runner = Callable[[Sequence[str]], CommandResult]

MAX_OUTPUT = 4 << 20
"""Bytes kept of a command's stdout (and of its stderr): `scontrol show job -d` of a huge
array job is a few hundred KB; a runaway or hostile reply must not take seconds and GBs."""
DRAIN_S = 0.2
"""After the command exits, how long to wait for the end of its output: a child it left
behind holding stdout open must not make us wait for the timeout and drop the reply."""


class SubprocessRunner:
    """Runs a command with a timeout and a bound on what is read; never raises on its output.

    Raises FileNotFoundError (no such command) and other OSError from starting it. Output is
    decoded as UTF-8 with replacement; on timeout the command's process group is killed and
    what it wrote before is returned with `timed_out` set.
    """

    def __init__(self, timeout: float = TIMEOUT_S, max_output: int = MAX_OUTPUT) -> None:
        self.timeout = timeout
        self.max_output = max_output

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        env = {**os.environ, "LC_ALL": "C"}
        # Own session: at the end we kill the group we created, so a wrapper script's children
        # cannot keep the pipes open and make us wait past the timeout.
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        assert proc.stdout is not None and proc.stderr is not None
        kept: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
        sizes = dict.fromkeys(kept, 0)
        timed_out = truncated = False
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as sel:
            for stream in (proc.stdout, proc.stderr):
                sel.register(stream, selectors.EVENT_READ)
            while sel.get_map():
                if proc.poll() is not None:
                    deadline = min(deadline, time.monotonic() + DRAIN_S)
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = proc.returncode is None
                    break
                for key, _ in sel.select(min(left, 0.05)):
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    room = self.max_output - sizes[fd]
                    kept[fd].append(chunk[:room])
                    sizes[fd] += min(len(chunk), room)
                    if len(chunk) > room:
                        truncated = True
                if truncated:
                    break
        if not (timed_out or truncated) and proc.poll() is None:  # closed its output but runs on
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the command if still running, and anything it left behind
        except (ProcessLookupError, PermissionError):
            pass
        proc.stdout.close()
        proc.stderr.close()
        returncode = proc.wait()
        out, err = (b"".join(parts).decode("utf-8", "replace") for parts in kept.values())
        return CommandResult(returncode, out, err, timed_out=timed_out, truncated=truncated)


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
    if result.timed_out:
        timeout = getattr(runner, "timeout", TIMEOUT_S)
        kept = "; what it wrote before is used" if result.stdout.strip() else ""
        return result, f"`{what}` did not answer within {timeout:g} s: slurmctld may be down or overloaded{kept}"
    if result.truncated:
        return result, f"`{what}` wrote more than {MAX_OUTPUT >> 20} MB: only the first {MAX_OUTPUT >> 20} MB are read"
    if result.returncode != 0:
        text = (result.stderr or result.stdout).strip()
        if "Invalid job id" in text:
            return result, f"Slurm job {argv[-1]} does not exist (finished jobs are forgotten after MinJobAge, 300 s by default)"
        if "configuration source" in text or "slurm.conf" in text:
            return result, f"`{what}` found no Slurm configuration (set SLURM_CONF?)"
        last = clean(text.splitlines()[-1]) if text else f"exit status {result.returncode}"
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
    work_dir: str | None = None
    """`WorkDir=`: where the job runs (raw: a path, cleaned where shown)."""
    stdout: str | None = None
    """`StdOut=`: the job's output file (scontrol prints it expanded; absent before 20.02).
    The per-node and per-task fields (%N, %t) stay as typed: one file each."""
    stderr: str | None = None
    """`StdErr=`: the job's error file (the same path as StdOut unless asked apart)."""
    fields: dict[str, str] = field(default_factory=dict, compare=False)


def mem_bytes(text: str | None) -> int | None:
    """Slurm sizes: `10G`, `500M`, `3000` (MB when bare), binary multiples."""
    size, per = slurm_size(text)
    return size if not per else None


def _hostlist_parts(text: str) -> list[list[str | list[tuple[str, str]]]]:
    """Each comma-separated name as pieces: literal text, or a bracket's ranges [(lo, hi)].

    A bracket that is not ranges of digits (`cn[a-b]`, `cn[3-1]`) is kept as literal text:
    such a name then matches nothing, instead of raising."""
    parts = []
    for part in re.findall(r"(?:[^,\[]|\[[^\]]*\]?)+", text):
        pieces: list[str | list[tuple[str, str]]] = []
        for i, piece in enumerate(re.split(r"\[([^\]]*)\]", part)):
            ranges = []
            if i % 2:
                for rng in piece.split(","):
                    lo, _, hi = rng.partition("-")
                    hi = hi or lo
                    if not (_number(lo) and _number(hi) and int(lo) <= int(hi)):
                        ranges = []
                        break
                    ranges.append((lo, hi))
            if ranges:
                pieces.append(ranges)
            elif i % 2:
                pieces.append(f"[{piece}]")
            else:
                pieces.append(piece)
        parts.append(pieces)
    return parts


def _range_names(lo: str, hi: str) -> range:
    return range(int(lo), int(hi) + 1)


def expand_hostlist(text: str, limit: int = MAX_IDS) -> list[str]:
    """`cn[01-03,07],gpu1` -> cn01 cn02 cn03 cn07 gpu1 (zero padding kept; several [] nest).

    At most `limit` names (ask `hostlist_contains` whether a host is in a list: it expands
    nothing); a bracket that is not digit ranges stays as written."""
    hosts: list[str] = []
    for pieces in _hostlist_parts(text):
        choices: list[Iterable[str]] = []
        for piece in pieces:
            if isinstance(piece, str):
                choices.append([piece])
            else:
                choices.append([str(n).zfill(len(lo)) for lo, hi in piece for n in islice(_range_names(lo, hi), limit)])
        for combo in product(*choices):
            if len(hosts) >= limit:
                return hosts
            hosts.append("".join(combo))
    return hosts


def hostlist_contains(text: str, host: str) -> bool:
    """Whether `host` is one of the names of host list `text`, without expanding it."""

    def match(rest: str, pieces: list[str | list[tuple[str, str]]]) -> bool:
        if not pieces:
            return not rest
        piece, more = pieces[0], pieces[1:]
        if isinstance(piece, str):
            return rest.startswith(piece) and match(rest[len(piece):], more)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        for k in range(1, digits + 1):
            number = rest[:k]
            if any(int(lo) <= int(number) <= int(hi) and number == str(int(number)).zfill(len(lo)) for lo, hi in piece) and match(rest[k:], more):
                return True
        return False

    return any(match(host, pieces) for pieces in _hostlist_parts(text))


def _pairs(line: str) -> dict[str, str]:
    keys = list(_KEY.finditer(line))
    return {k.group(1): line[k.end(): keys[i + 1].start() if i + 1 < len(keys) else len(line)].strip() for i, k in enumerate(keys)}


def id_list(text: str, limit: int = MAX_IDS) -> tuple[int, ...]:
    """`0-3,8` -> 0 1 2 3 8 (Slurm's CPU_IDs, GPU IDX); parts that are not ids are skipped;
    at most `limit` ids."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        if _number(lo) and (_number(hi) or not hi):
            out += islice(range(int(lo), int(hi or lo) + 1), max(0, limit - len(out)))
    return tuple(out)


def _number(text: str) -> bool:
    """ASCII digits of a sane length (`int()` takes '²' and refuses 5000 digits)."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


def _int(text: str | None) -> int | None:
    return int(text) if text and _number(text) else None


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
        work_dir=_path(top.get("WorkDir")),
        stdout=_path(top.get("StdOut")),
        stderr=_path(top.get("StdErr")),
        fields=top,
    )


def _path(value: str | None) -> str | None:
    """A path field, or None when absent or `(null)`."""
    return value if value and value != "(null)" else None


def node_alloc(info: JobInfo, hostname: str) -> NodeAlloc | None:
    """This node's `Nodes=` record (the only one when the job has one node)."""
    for alloc in info.nodes:
        if hostlist_contains(alloc.nodes, hostname):
            return alloc
    return info.nodes[0] if len(info.nodes) == 1 and (info.num_nodes or 1) == 1 else None


def show_job(runner: Runner, job_id: str) -> tuple[JobInfo | None, str | None]:
    if not JOB_ID.fullmatch(job_id):
        return None, f"{job_id!r} is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"
    result, problem = run(runner, ["scontrol", "show", "job", "-d", job_id])
    partial = result is not None and (result.timed_out or result.truncated)
    if result is None or (problem and not partial):
        return None, problem
    try:
        info = parse_show_job(result.stdout, job_id)
    except Exception as exc:  # noqa: BLE001 - a reply we cannot read is a problem line, not a crash
        return None, clean(f"could not read `scontrol show job -d {job_id}` output: {type(exc).__name__}: {exc}")
    if info is None:
        return None, problem or f"could not read `scontrol show job -d {job_id}` output"
    return info, problem


def list_pids(runner: Runner, job_id: str) -> tuple[frozenset[int], str | None]:
    """PIDs slurmstepd tracks for the job *on this node* (works with proctrack/linuxproc too)."""
    if not JOB_ID.fullmatch(job_id):
        return frozenset(), f"{job_id!r} is not a Slurm job id"
    result, problem = run(runner, ["scontrol", "listpids", job_id])
    if result is not None and problem and ("no steps" in result.stderr or "does not exist on this node" in result.stderr):
        return frozenset(), None  # not an error: no process of the job runs here (the scope says why)
    partial = result is not None and (result.timed_out or result.truncated)
    if result is None or (problem and not partial):
        return frozenset(), problem
    # Header `PID JOBID STEPID LOCALID GLOBALID`, then one row per process. The JOBID column is
    # the numeric id, so it can only be checked for plain ids (array/het ids differ from it).
    rows = [line.split() for line in result.stdout.splitlines()]
    plain = job_id.isdigit()
    return frozenset(int(r[0]) for r in rows if len(r) >= 2 and _number(r[0]) and (not plain or r[1] == job_id)), problem


def job_sluid(runner: Runner, job_id: str) -> str | None:
    """The SLUID (26.05+) from accounting; only asked when no other way found the cgroup."""
    if not JOB_ID.fullmatch(job_id):
        return None
    result, problem = run(runner, ["sacct", "-X", "-n", "-P", "-o", "sluid", "-j", job_id])
    value = result.stdout.strip().splitlines()[0].strip() if result and not problem and result.stdout.strip() else ""
    return value if re.fullmatch(r"s[0-9A-Z]{13}", value) else None
