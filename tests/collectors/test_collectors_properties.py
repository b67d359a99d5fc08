"""Property tests of the collectors' parsers of outside text: `scontrol show job -d` records,
`scontrol listpids`, Slurm host lists and id lists, `/proc/PID/stat` and `status`, kernel
cpulists and cgroup files. Generated valid inputs give the expected values; arbitrary text
(or bytes) never raises: a parser's answer is a value, None, or (parse_cpu_list, documented)
ValueError."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuscope.collectors import cgroups, procfs, scope, slurm
from gpuscope.collectors.processes import _parse_stat

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a budget that finds the shapes in a few seconds; the properties stay
ANY_TEXT = st.text(alphabet=st.characters(codec=None, max_codepoint=0x2FF), max_size=300)
"""Arbitrary text, with controls, C1, Latin-1 and combining marks (brackets, '=' and digits are among them)."""
SOUP = st.lists(st.sampled_from(["JobId=", "5", "Nodes=", "CPU_IDs=", "0-3", ",", "[", "]", "-", "cn", "Mem=", "GRES=", "gpu:", "(IDX:", ")", "\n", "   ", " ", "=", "²", "9" * 30, "UserId=", "a(", "TRES=cpu=1,mem=", "NodeList=", "\n\n"]), max_size=60).map("".join)
"""Text made of scontrol's own tokens, so the parser's deeper branches are reached."""


# --- host lists and id lists ---------------------------------------------------------------

@st.composite
def hostlists(draw):
    """(text, expected names) of a valid Slurm host list: prefixes with zero-padded ranges."""
    names: list[str] = []
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        prefix = draw(st.from_regex(r"[a-z][a-z0-9-]{0,6}[a-z]", fullmatch=True))
        if draw(st.booleans()):
            parts.append(prefix)
            names.append(prefix)
            continue
        width = draw(st.integers(1, 4))
        ranges = []
        for _ in range(draw(st.integers(1, 3))):
            lo = draw(st.integers(0, 10**width // 2))
            hi = draw(st.integers(lo, min(lo + 20, 10**width - 1)))
            ranges.append((lo, hi))
        parts.append(prefix + "[" + ",".join(f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi:0{width}d}" for lo, hi in ranges) + "]")
        names += [f"{prefix}{n:0{width}d}" for lo, hi in ranges for n in range(lo, hi + 1)]
    return ",".join(parts), names


@SETTINGS
@given(hostlists())
def test_valid_hostlists_expand_as_slurm_does(case: tuple[str, list[str]]) -> None:
    text, names = case
    assert slurm.expand_hostlist(text) == names
    for name in names:
        assert slurm.hostlist_contains(text, name)
    assert not slurm.hostlist_contains(text, "zz-not-a-node")


@SETTINGS
@given(hostlists(), st.from_regex(r"[a-z][a-z0-9-]{0,8}[0-9]{0,5}", fullmatch=True))
def test_hostlist_contains_agrees_with_expand(case: tuple[str, list[str]], host: str) -> None:
    text, names = case
    assert slurm.hostlist_contains(text, host) == (host in names)


@SETTINGS
@given(st.one_of(ANY_TEXT, SOUP), st.one_of(ANY_TEXT, st.just("cn1")))
def test_hostlists_never_raise(text: str, host: str) -> None:
    names = slurm.expand_hostlist(text)
    assert len(names) <= slurm.MAX_IDS
    slurm.hostlist_contains(text, host)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 20)), max_size=6))
def test_valid_id_lists(spans: list[tuple[int, int]]) -> None:
    text = ",".join(f"{lo}-{lo + n}" if n else str(lo) for lo, n in spans)
    assert slurm.id_list(text) == tuple(i for lo, n in spans for i in range(lo, lo + n + 1))


@SETTINGS
@given(st.one_of(ANY_TEXT, SOUP))
def test_id_lists_and_sizes_never_raise(text: str) -> None:
    assert len(slurm.id_list(text)) <= slurm.MAX_IDS
    value = slurm.mem_bytes(text)
    assert value is None or value >= 0


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from(["", "K", "M", "G", "T"]))
def test_valid_sizes(number: int, unit: str) -> None:
    assert slurm.mem_bytes(f"{number}{unit}") == number * 1024 ** "KMGTP".index(unit or "M") * 1024


# --- scontrol show job -d, listpids --------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@st.composite
def job_records(draw):
    job = str(draw(st.integers(1, 10**7)))
    user, uid = draw(NAMES), draw(st.integers(0, 2**31))
    state = draw(st.sampled_from(["RUNNING", "PENDING", "COMPLETING", "SUSPENDED"]))
    cpus = draw(st.integers(1, 256))
    host, hostlist = draw(hostlists().filter(lambda c: len(c[1]) >= 1).map(lambda c: (c[1][0], c[0])))
    first = draw(st.integers(0, 100))
    cpu_ids = tuple(range(first, first + draw(st.integers(1, 16))))
    mem_mb = draw(st.integers(1, 10**6))
    gpus = tuple(sorted(draw(st.sets(st.integers(0, 15), max_size=4))))
    gres = f" GRES=gpu:a100:{len(gpus)}(IDX:{','.join(map(str, gpus))})" if gpus else ""
    text = (
        f"JobId={job} JobName={draw(NAMES)}\n"
        f"   UserId={user}({uid}) GroupId={user}({uid}) MCS_label=N/A\n"
        f"   JobState={state} Reason=None Dependency=(null)\n"
        f"   NodeList={hostlist}\n"
        f"   NumNodes=1 NumCPUs={cpus} NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
        f"   AllocTRES=cpu={cpus},mem={mem_mb}M,node=1\n"
        f"     Nodes={host} CPU_IDs={cpu_ids[0]}-{cpu_ids[-1]} Mem={mem_mb}{gres}\n"
        f"   MinCPUsNode=1 MinMemoryNode={mem_mb}M MinTmpDiskNode=0\n"
        f"   Command=/bin/sh WorkDir=/home/{user}\n"
    )
    return text, dict(job=job, user=user, uid=uid, state=state, cpus=cpus, host=host, hostlist=hostlist, cpu_ids=cpu_ids, mem=mem_mb << 20, gpus=gpus)


@SETTINGS
@given(job_records())
def test_valid_records_give_their_values(case: tuple[str, dict]) -> None:
    text, want = case
    info = slurm.parse_show_job(text, want["job"])
    assert info is not None
    assert (info.job_id, info.user, info.uid, info.state, info.num_cpus) == (want["job"], want["user"], want["uid"], want["state"], want["cpus"])
    assert (info.node_list, info.mem_per_node, info.tres_mem) == (want["hostlist"], want["mem"], want["mem"])
    alloc = slurm.node_alloc(info, want["host"])
    assert alloc is not None and (alloc.cpu_ids, alloc.mem_bytes, alloc.gpu_indices) == (want["cpu_ids"], want["mem"], want["gpus"])


@SETTINGS
@given(st.one_of(ANY_TEXT, SOUP), st.one_of(ANY_TEXT, SOUP), st.integers(-9, 2))
def test_show_job_and_listpids_never_raise(out: str, err: str, code: int) -> None:
    runner = lambda argv: slurm.CommandResult(code, out, err)  # noqa: E731
    info, problem = slurm.show_job(runner, "5")
    assert info is not None or problem
    if info is not None:
        slurm.node_alloc(info, "cn1")
    pids, problem = slurm.list_pids(runner, "5")
    assert all(isinstance(p, int) and p >= 0 for p in pids)
    slurm.job_sluid(runner, "5")


@SETTINGS
@given(st.lists(st.tuples(st.integers(1, 4_000_000), st.sampled_from(["5", "6", "5_1"])), max_size=20))
def test_valid_listpids(rows: list[tuple[int, str]]) -> None:
    text = "PID      JOBID    STEPID   LOCALID GLOBALID\n" + "".join(f"{pid:<8} {job:<8} batch    0       0\n" for pid, job in rows)
    pids, problem = slurm.list_pids(lambda argv: slurm.CommandResult(0, text, ""), "5")
    assert problem is None and pids == {pid for pid, job in rows if job == "5"}


# --- /proc/PID/stat and status -------------------------------------------------------------

COMM = st.binary(min_size=0, max_size=64)
"""comm is any bytes but NUL (a ')', spaces, newlines, invalid UTF-8 included)."""


@SETTINGS
@given(COMM.map(lambda b: b.replace(b"\0", b"")), st.integers(0, 4_000_000), st.sampled_from("RSDZTtXIW"),
       st.integers(0, 10**9), st.integers(0, 10**9), st.integers(1, 10**5), st.integers(0, 10**12), st.integers(0, 10**9), st.integers(0, 8191))
def test_valid_stat_lines(comm: bytes, ppid: int, state: str, utime: int, stime: int, threads: int, start: int, rss: int, cpu: int) -> None:
    fields = [state, ppid, 1, 1, 0, -1, 4194304, 0, 0, 0, 0, utime, stime, 0, 0, 20, 0, threads, 0, start, 12345678, rss]
    fields += [0] * 13 + [17, cpu, 0, 0]  # fields 25-37, exit_signal (38), processor (39)
    line = b"1234 (" + comm + b") " + " ".join(map(str, fields)).encode() + b"\n"
    assert procfs.stat_ppid(line) == ppid
    parsed = _parse_stat(line)
    assert parsed is not None
    assert parsed[0] == comm and parsed[1:] == (ppid, state, utime + stime, threads, start, rss, cpu)


@SETTINGS
@given(st.binary(max_size=400))
def test_stat_and_status_never_raise(data: bytes) -> None:
    ppid = procfs.stat_ppid(data)
    assert ppid is None or ppid >= 0
    _parse_stat(data)
    uid = procfs.status_uid(data)
    assert uid is None or uid >= 0


@SETTINGS
@given(COMM.map(lambda b: b.replace(b"\0", b"").replace(b"\n", b"")), st.integers(0, 2**32 - 2))
def test_valid_status(name: bytes, uid: int) -> None:
    data = b"Name:\t" + name + b"\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t%d\t%d\t%d\t%d\nGid:\t0\t0\t0\t0\n" % (uid, uid, uid, uid)
    assume(not name.startswith(b"Uid:"))
    assert procfs.status_uid(data) == uid


# --- cgroups: cpulists, cgroup files -------------------------------------------------------

@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 64)), max_size=8))
def test_valid_cpulists(spans: list[tuple[int, int]]) -> None:
    text = ",".join(f"{lo}-{lo + n}" if n else str(lo) for lo, n in spans) + "\n"
    assert cgroups.parse_cpu_list(text) == tuple(sorted({c for lo, n in spans for c in range(lo, lo + n + 1)}))


@SETTINGS
@given(st.one_of(ANY_TEXT, st.lists(st.sampled_from(["0", "1", "-", ",", ":", "/", "9" * 12, "²", " ", "\n"]), max_size=30).map("".join)))
def test_cpulists_raise_only_value_error(text: str) -> None:
    try:
        ids = cgroups.parse_cpu_list(text)
    except ValueError:
        return
    assert all(0 <= i < cgroups.MAX_CPUS for i in ids)


CGROUP_FILES = ("cpuset.cpus.effective", "memory.max", "memory.current", "memory.peak", "memory.stat", "cgroup.procs")


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({name: st.binary(max_size=120) for name in CGROUP_FILES}), st.binary(max_size=200), st.binary(max_size=200))
def test_cgroup_and_proc_files_never_raise(files: dict[str, bytes], proc_cgroup: bytes, stat: bytes) -> None:
    root = Path(tempfile.mkdtemp(prefix="gpuscope-prop-"))
    try:
        job = root / "sys/fs/cgroup/system.slice/slurmstepd.scope/job_5"
        (job / "step_0").mkdir(parents=True)
        for name, data in files.items():
            (job / name).write_bytes(data)
        (job / "step_0" / "cgroup.procs").write_bytes(files["cgroup.procs"])
        pid_dir = root / "proc" / "77"
        pid_dir.mkdir(parents=True)
        (pid_dir / "cgroup").write_bytes(proc_cgroup)
        (pid_dir / "stat").write_bytes(stat)
        (pid_dir / "status").write_bytes(stat)
        (pid_dir / "environ").write_bytes(proc_cgroup)
        cgroups.cgroup_of_pid(root, 77)
        cg = cgroups.cgroup_of_job(root, "5")
        assert cg is not None
        reading = cgroups.read_job_cgroup(root, cg)
        assert reading.memory_limit is None or reading.memory_limit >= 0 or files["memory.max"].strip().startswith(b"-")
        scope.descendants(root, {1})
        scope.user_pids(root, 1000)
        job_scope = scope.resolve_scope(job="5", root=root, env={}, runner=lambda argv: slurm.CommandResult(0, "", ""))
        scope.refresh(job_scope, root)
        scope.refresh(scope.resolve_scope(pid=77, root=root, env={}), root)
    finally:
        shutil.rmtree(root)


@SETTINGS
@given(ANY_TEXT, st.booleans())
def test_job_path_of_never_raises(text: str, v2: bool) -> None:
    path = cgroups.job_path_of(text, v2)
    assert path is None or text.startswith(path)
