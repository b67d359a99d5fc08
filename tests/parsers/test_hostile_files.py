"""Hostile input: bounded memory, no blocking on non-files, one bad name does not sink
the rest, crafted SQLite cannot hang `kernels`; and a CLI fuzz run over a folder of all of them.

Everything here is built in tmp_path: sparse files via truncate (no real 2 GB writes), gzip
bombs as many small gzip members (a multi-member gzip is one stream to every reader).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuscope.parsers import registry
from gpuscope.parsers.magma import read as magma
from gpuscope.parsers.profilers import markers
from gpuscope.parsers.profilers import nsys
from gpuscope.parsers.profilers import pyprof
from gpuscope.parsers.profilers import sqlite_bounded
from gpuscope.parsers import files as textfile
from gpuscope.parsers.profilers import torch_trace
from gpuscope.parsers.registry import read_profiles as read_runs

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
IS_ROOT = os.geteuid() == 0
MEMORY_LIMIT = 2 << 30  # address space: Python + numpy + pandas + pyarrow map far more than they touch
RSS_LIMIT_KB = 1 << 20  # 1 GB, as ru_maxrss counts (KB on Linux)
TIMEOUT_S = 60

MAGMA_TEXT = (DATA / "magma" / "testing_dgemm.out").read_bytes()
PYPROF_CSV = (DATA / "pyprof" / "resnet_csv.csv").read_bytes()


# --- builders --------------------------------------------------------------------------------

def gzip_bomb(path: Path, member: bytes, copies: int, head: bytes = b"") -> None:
    """`head` then `member` repeated `copies` times, as a gzip file of `copies + 1` members."""
    one = gzip.compress(member, 9)
    with path.open("wb") as out:
        out.write(gzip.compress(head))
        for _ in range(copies):
            out.write(one)


def sparse(path: Path, size: int) -> None:
    with path.open("wb") as out:
        out.truncate(size)


def recursive_view_sqlite(path: Path) -> None:
    """An nsys-looking export whose kernel 'table' is a view that never ends."""
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
        "INSERT INTO StringIds VALUES (1, 'k');"
        "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT x AS start, x + 1 AS \"end\", 0 AS deviceId, 7 AS streamId, 1 AS demangledName, x AS correlationId FROM c;"
    )
    con.commit()
    con.close()


def deep_folder(base: Path, total: int = 5000) -> Path:
    """A folder whose path is longer than PATH_MAX (4096), made with dir_fd (no path is ever that long)."""
    name = "d" * 200
    fd = os.open(base, os.O_RDONLY)
    made = 0
    try:
        while made < total:
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
            made += len(name) + 1
        out = os.open("testing_deep.out", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, MAGMA_TEXT)
        os.close(out)
    finally:
        os.close(fd)
    return base / name


def hostile_folder(base: Path) -> dict[str, str]:
    """Every hostile input in `base`, plus good files; {entry name: what it is}."""
    base.mkdir(parents=True, exist_ok=True)
    made: dict[str, str] = {}

    def add(name: str, what: str) -> Path:
        made[name] = what
        return base / name

    add("good_dgemm.out", "good").write_bytes(MAGMA_TEXT)
    add("good_pyprof.csv", "good").write_bytes(PYPROF_CSV)
    add("empty.out", "empty").write_bytes(b"")
    add("random.bin", "random").write_bytes(os.urandom(64 * 1024))
    sparse(add("sparse.out", "sparse"), 2 << 30)
    os.mkfifo(add("pipe.out", "fifo"))
    os.symlink("/dev/zero", add("zero.out", "device"))
    # 3 GB of MAGMA-looking rows and of PyProf CSV rows, from files of a few MB
    gzip_bomb(add("magma_bomb.out.gz", "bomb"), b" 1088  1088  1088     13.81 ( 186.52)\n" * (1 << 19), 160, MAGMA_TEXT)
    gzip_bomb(add("pyprof_bomb.csv.gz", "bomb"), b'"k","1","1","1"\n' * (1 << 20), 190, b'"Kernel","Sil(ns)","FLOPs","Bytes"\n')
    add("truncated.csv.gz", "truncated").write_bytes(gzip.compress(PYPROF_CSV * 50)[:300])
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), buffer)
    add("wrong_schema.parquet", "parquet").write_bytes(buffer.getvalue())
    con = sqlite3.connect(add("not_nsys.sqlite", "sqlite"))
    con.executescript("CREATE TABLE foo(x); INSERT INTO foo VALUES (1);")
    con.commit()
    con.close()
    recursive_view_sqlite(add("recursive.sqlite", "view"))
    os.symlink("loop_b.out", add("loop_a.out", "loop"))
    os.symlink("loop_a.out", add("loop_b.out", "loop"))
    odd = os.fsencode(base) + b"/caf\xe9"
    os.mkdir(odd)
    made[os.fsdecode(b"caf\xe9")] = "non-utf8"
    with open(odd + b"/testing_dgemm_\xff.out", "wb") as out:
        out.write(MAGMA_TEXT)
    with open(odd + b"/run_\xff.csv", "wb") as out:
        out.write(PYPROF_CSV)
    add("evil\x1b[2J\x1b]0;pwned\x07.out", "escape").write_bytes(MAGMA_TEXT)
    add("deep", "deep").mkdir()
    deep_folder(base / "deep")
    if not IS_ROOT:
        locked = add("locked", "unreadable")
        locked.mkdir()
        (locked / "testing_dgemm.out").write_bytes(MAGMA_TEXT)
        locked.chmod(0)
    return made


# --- running the CLI under limits --------------------------------------------------------------

def _limits() -> None:  # in the child, before exec: memory bounded, and a hang ends in SIGALRM
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.alarm(TIMEOUT_S)


def run_limited(args: list[str], tmp: Path) -> tuple[int, str, str, int, float]:
    """(exit code, stdout, stderr, peak RSS in KB, seconds) of `gpuscope ARGS` in a child with
    RLIMIT_AS and an alarm. wait4 gives this child's own peak RSS."""
    out, err = tmp / "stdout", tmp / "stderr"
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("GPUSCOPE_MAX_FILE_MB", None)
    start = time.monotonic()
    with out.open("wb") as o, err.open("wb") as e:
        child = subprocess.Popen([GPUSCOPE, *args], stdout=o, stderr=e, stdin=subprocess.DEVNULL, preexec_fn=_limits, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - start
    return (child.returncode, out.read_bytes().decode("utf-8", "replace"), err.read_bytes().decode("utf-8", "replace"),
            usage.ru_maxrss, took)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("hostile") / "in"
    made = hostile_folder(base)
    yield base, made
    for path in base.iterdir():  # a FIFO and an unreadable folder must not trouble the clean-up
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


PEAKS: dict[str, int] = {}


@pytest.mark.parametrize("command", ["magma", "kernels", "scaling"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cli_fuzz_hostile_folder(hostile: tuple[Path, dict[str, str]], tmp_path: Path, command: str, fmt: str) -> None:
    """No traceback, no hang, under 1 GB of RSS, and every hostile entry named with a reason."""
    base, made = hostile
    code, out, err, peak_kb, took = run_limited([command, str(base), "--format", fmt, "--width", "20000"], tmp_path)
    PEAKS[f"{command} {fmt}"] = peak_kb
    print(f"{command} --format {fmt}: exit {code}, peak RSS {peak_kb / 1024:.0f} MB, {took:.1f} s")
    both = (json.dumps(json.loads(out), ensure_ascii=False) if fmt == "json" and out.strip() else out) + err
    assert code in (0, 1), f"exit {code} (signal?) after {took:.1f} s\n{err[-3000:]}"
    assert "Traceback" not in both, err[-3000:]
    assert peak_kb < RSS_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB"
    assert "pipe.out" in both and "FIFO" in both and "character device" in both  # skipped, with the reason
    if command == "scaling":  # no log among them: said, with every file it could not read named
        assert code == 1 and "no runs found" in both
        for what in ("bomb", "sparse", "loop", "truncated"):
            assert all(name in both for name, w in made.items() if w == what), what
        return
    for name, what in made.items():
        if what == "good" or (command == "magma" and what == "non-utf8"):
            continue
        shown = {"non-utf8": "caf\ufffd", "escape": "evil", "deep": "name too long"}.get(what, name)
        assert shown.lower() in both.lower(), f"{what} entry {name!r} not named in the output"
    assert "pipe.out" in both and "FIFO" in both and "character device" in both  # skipped, with the reason
    if command == "magma":
        assert "good_dgemm.out" in both and "evil" in both  # read, not sunk by its neighbours
        assert "caf\ufffd/testing_dgemm_\ufffd.out" in both
    else:
        assert "good_pyprof.csv" in both and "caf\ufffd/run_\ufffd.csv" in both
        assert "CUPTI_ACTIVITY_KIND_KERNEL is a view" in both


# --- unit tests, one per point ------------------------------------------------------------------

def test_gzip_bomb_stops_at_the_limit(tmp_path: Path) -> None:
    """Point 1: decompression is bounded; the old gzip.decompress took the whole 3 GB."""
    bomb = tmp_path / "bomb.csv.gz"
    gzip_bomb(bomb, b'"k","1","1","1"\n' * (1 << 20), 8, b'"Kernel","Sil(ns)","FLOPs","Bytes"\n')  # 128 MB
    data, found = textfile.read_bytes(bomb, "bomb", max_bytes=16 << 20)
    assert data is None and found[0].kind == "huge" and "decompresses" in found[0].message
    assert pyprof.read_kernels(bomb).findings[0].kind == "huge"


def test_sparse_file_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 1: the size is checked before anything is allocated, and MemoryError is a finding."""
    big = tmp_path / "sparse.out"
    sparse(big, 100 << 30)
    data, found = textfile.read_bytes(big, "sparse.out")
    assert data is None and found[0].kind == "huge" and "100.0 GB" in found[0].message
    small = tmp_path / "small.out"
    small.write_bytes(MAGMA_TEXT)

    def no_memory(fd: int, n: int) -> bytes:
        raise MemoryError

    monkeypatch.setattr(textfile.os, "read", no_memory)
    data, found = textfile.read_bytes(small, "small.out")
    assert data is None and found[0].kind == "huge"


def test_line_budget_refuses_a_file_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.csv"
    path.write_bytes(b'"Kernel","Sil(ns)","FLOPs","Bytes"\n' + b'"k","1","1","1"\n' * 1000)
    monkeypatch.setattr(pyprof, "MAX_LINES", 100)
    assert [f.kind for f in pyprof.read_kernels(path).findings] == ["huge"]


def test_magma_tree_budget_names_the_files_over_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        (tmp_path / f"testing_{i}.out").write_bytes(MAGMA_TEXT)
    monkeypatch.setattr(magma, "MAX_LINES", MAGMA_TEXT.count(b"\n") * 2 + 2)
    result = magma.read_tree([tmp_path])
    assert result.files_read == 2
    over = [f for f in result.findings if f.kind == "huge"]
    assert [f.file for f in over] == ["testing_2.out"] and "budget" in over[0].message


@pytest.mark.parametrize("reader", ["magma", "kernels", "pyprof", "nsys", "torch", "markers", "text"])
def test_fifo_and_device_are_skipped_not_read(tmp_path: Path, reader: str) -> None:
    """Point 2: a FIFO used to block forever (nobody writes), /dev/zero to be read to the limit."""
    fifo = tmp_path / "pipe.out"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.csv"
    os.symlink("/dev/zero", zero)
    for path in (fifo, zero):
        if reader == "magma":
            found = magma.read_tree([path]).findings
        elif reader == "kernels":
            found = read_runs([path]).findings
        elif reader == "markers":
            found = markers.read_markers(path).findings
        elif reader == "text":
            found = textfile.read_text(path)[1]
        else:
            found = {"pyprof": pyprof.read, "nsys": nsys.read, "torch": torch_trace.read}[reader](path).findings
        assert any(f.kind == "not-a-file" and ("FIFO" in f.message or "character device" in f.message) for f in found), found


def test_fifo_in_a_folder_is_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.out")
    (tmp_path / "good.out").write_bytes(MAGMA_TEXT)
    (tmp_path / "good.csv").write_bytes(PYPROF_CSV)
    result = magma.read_tree([tmp_path])
    assert result.files_read == 1 and any(f.file == "pipe.out" and f.kind == "not-a-file" for f in result.findings)
    runs = read_runs([tmp_path])
    assert len(runs.runs) == 1 and any(f.file.endswith("pipe.out") and f.kind == "not-a-file" for f in runs.findings)


def test_non_utf8_names_do_not_sink_the_read(tmp_path: Path) -> None:
    """Point 4: labels are str without surrogates, so printing or JSON never fails on them."""
    folder = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(folder)
    with open(folder + b"/testing_\xff.out", "wb") as out:
        out.write(MAGMA_TEXT)
    with open(folder + b"/run_\xff.csv", "wb") as out:
        out.write(PYPROF_CSV)
    result = magma.read_tree([tmp_path])
    labels = set(result.rows["file"].astype(str))
    assert labels == {"caf\ufffd/testing_\ufffd.out"}
    runs = read_runs([tmp_path])
    assert len(runs.runs) == 1 and runs.runs[0].file.endswith("caf\ufffd/run_\ufffd.csv")
    for text in [*labels, runs.runs[0].file, *(f.file for f in result.findings + runs.findings)]:
        text.encode("utf-8")  # strict: no surrogate left


def test_non_utf8_names_print_on_a_strict_utf8_stdout(tmp_path: Path) -> None:
    """Point 4 for the text readers and the run logs too: an nvprof summary and a run log under a
    name that is not UTF-8 are labelled with U+FFFD, and `kernels` and `scaling` print on a
    strict UTF-8 stdout (en_US.UTF-8; this machine's C.UTF-8 escapes surrogates) without a
    traceback."""
    folder = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(folder)
    with open(folder + b"/summary_\xff.txt", "wb") as out:
        out.write((ROOT.parent / "examples" / "profiles" / "nvprof_gpu_summary.txt").read_bytes())
    for workers in (b"workers-1", b"workers-2"):  # the resource count from the folder's name
        os.mkdir(folder + b"/" + workers)
        with open(folder + b"/" + workers + b"/run_\xff.log", "wb") as out:
            out.write((ROOT.parent / "examples" / "scaling" / workers.decode() / "run-1.log").read_bytes())
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    for command in ("kernels", "scaling"):
        done = subprocess.run([GPUSCOPE, command, str(tmp_path), "--format", "text"], capture_output=True, env=env, timeout=TIMEOUT_S)
        assert b"Traceback" not in done.stderr and done.returncode == 0, (command, done.stderr[-600:])
        assert "caf\ufffd/".encode() in done.stdout + done.stderr, command


def test_symlink_loop_and_long_path_are_named(tmp_path: Path) -> None:
    os.symlink("b.out", tmp_path / "a.out")
    os.symlink("a.out", tmp_path / "b.out")
    deep_folder(tmp_path)
    (tmp_path / "good.out").write_bytes(MAGMA_TEXT)
    result = magma.read_tree([tmp_path])
    assert result.files_read == 1
    messages = {(f.file[:5], f.message) for f in result.findings if f.kind == "unreadable"}
    assert ("a.out", "cannot read: Too many levels of symbolic links") in messages
    assert any("name too long" in m for _, m in messages)
    found = read_runs([tmp_path]).findings
    assert any(f.file.endswith("a.out") and f.kind == "symlink-loop" and "symbolic link loop" in f.message for f in found)  # the registry's words, as the browser says them
    assert any("name too long" in f.message for f in found)


def test_permission_denied_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 4: `kernels` says 'permission denied', not 'not a profiler export'. Tests run as root
    here, where chmod denies nothing: the open is made to fail as it would for another user."""
    path = tmp_path / "run.csv"
    path.write_bytes(PYPROF_CSV)
    real_open = os.open

    def denied(name: object, *args: object, **kwargs: object) -> int:
        if str(name) == str(path):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(textfile.os, "open", denied)
    found = registry.read(path).findings
    assert [f.kind for f in found] == ["unreadable"] and "permission denied" in found[0].message.lower()
    walked = read_runs([tmp_path]).findings
    assert any("permission denied" in f.message.lower() for f in walked)
    assert not any("not a profiler export" in f.message for f in walked)


@pytest.mark.skipif(IS_ROOT, reason="root reads a chmod 000 folder anyway")
def test_unreadable_subfolder_is_named(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "testing.out").write_bytes(MAGMA_TEXT)
    locked.chmod(0)
    try:
        assert any(f.kind == "unreadable" and "locked" in f.file for f in magma.read_tree([tmp_path]).findings)
        assert any(f.kind == "unreadable" and "locked" in f.file for f in read_runs([tmp_path]).findings)
    finally:
        locked.chmod(0o755)


def test_recursive_view_is_refused_fast(tmp_path: Path) -> None:
    """Point 5: an 8 KB file with a recursive view ran for over a minute."""
    path = tmp_path / "view.sqlite"
    recursive_view_sqlite(path)
    start = time.process_time()  # CPU time the OS recorded: the same on a busy machine
    result = nsys.read_kernels(path)
    assert time.process_time() - start < 5
    refused = [f for f in result.findings if f.kind == "refused"]
    assert refused and "CUPTI_ACTIVITY_KIND_KERNEL" in refused[0].message and result.table.empty


def test_slow_query_is_interrupted_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 5: every query has a deadline; the table it read is named."""
    path = tmp_path / "slow.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE StringIds(id, value);"  # no key: the join is a nested loop
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, \"end\", deviceId, streamId, demangledName);"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000) "
        "INSERT INTO StringIds SELECT 1, 'k' FROM c;"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT x, x + 1, 0, 7, 1 FROM c;"
    )
    con.commit()
    con.close()
    monkeypatch.setattr(sqlite_bounded, "QUERY_SECONDS", 0.05)
    start = time.process_time()
    result = nsys.read_kernels(path)
    assert time.process_time() - start < 10
    assert [f.kind for f in result.findings] == ["refused"] and "CUPTI_ACTIVITY_KIND_KERNEL" in result.findings[0].message


@pytest.mark.parametrize("value", ["abc", "0", "-5", ""])
def test_a_bad_limit_in_the_environment_keeps_the_default(value: str) -> None:
    env = {**os.environ, "GPUSCOPE_MAX_FILE_MB": value, "GPUSCOPE_MAX_LINES": value}
    code = "from gpuscope.parsers import files as t; print(t.MAX_BYTES, t.MAX_LINES)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(64 * 1024 * 1024), "1000000"]


@pytest.mark.parametrize("screen_name", ["magma", "kernels"])
async def test_screen_over_a_fifo_loads_and_quits(tmp_path: Path, screen_name: str) -> None:
    # A FIFO in the folder hung the read and the screen then ignored q.
    import asyncio

    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.studies.kernels import KernelsScreen
    from gpuscope.tui.screens.studies.magma import MagmaScreen
    from loading_helpers import settled

    (tmp_path / "testing_dgemm.out").write_bytes(MAGMA_TEXT)
    (tmp_path / "run.csv").write_bytes(PYPROF_CSV)
    os.mkfifo(tmp_path / "pipe.out")
    kind = MagmaScreen if screen_name == "magma" else KernelsScreen
    app = GpuscopeApp(first_screen=lambda: kind([tmp_path]))
    async with app.run_test(size=(160, 40)) as pilot:
        await asyncio.wait_for(settled(app, pilot, kind), timeout=30)
        await pilot.press("f" if screen_name == "magma" else "q")
        if screen_name == "magma":
            text = "\n".join(s.text for s in app.screen._compositor.render_strips())
            assert "pipe.out" in text and "FIFO" in text, text
            await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
