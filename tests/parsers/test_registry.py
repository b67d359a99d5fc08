"""The registry of file kinds: every real file in ../shared/data
and examples/ is recognised as its kind, with a reason; recognition reads at most HEAD_BYTES;
hostile files (FIFO, device, symlink loop, unreadable, 5 GB, binary garbage, escape sequences
in names) give a problem, never an exception or a hang; the study readers take
files through it (kernels) or agree with it (runlogs, magma)."""

from __future__ import annotations

import fnmatch
import gzip
import os
import stat
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers import files, media, registry
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.magma import kind as magma_kind
from gpuscope.parsers import tables as generic_tables
from gpuscope.parsers import logs as plain_log
from gpuscope.parsers.files import HEAD_BYTES
from gpuscope.parsers.registry import KINDS, READERS, recognise

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")

# (glob below the folder, kind): the first glob a file's path matches says its kind.
SHARED_KINDS = (
    ("MANIFEST.md", "markdown"),
    ("magma/experiments/*.out", "magma"),
    ("magma/experiments/*.err", "log"),
    ("magma/magma-durations.csv", "csv"),
    ("formats/extrap/*.txt", "log"),
    ("formats/mlperf/*result_*.txt", "mlperf-log"),
    ("formats/slurm/sacct-*.txt", "sacct"),
    ("profiles/nsys_csv/*.csv", "nsys"),
    ("profiles/nsys_sqlite/*.sqlite", "nsys"),
    ("profiles/pytorch_trace/*.pt.trace.json.gz", "torch-trace"),
    ("pyprof/data/pcm/pyprof_kernels/*.gzip", "pyprof"),
    ("pyprof/data/mpi/init_times_mpi.gzip", "parquet"),  # Parquet under .gzip, but not PyProf's columns
    ("pyprof/data/pcm/init_times.csv", "csv"),
    ("scaling/*/result_*.txt", "mlperf-log"),
    ("scaling/*.json", "json"),
    ("specmoe/*.csv", "csv"),
    ("specmoe/*.json", "json"),
)
EXAMPLE_KINDS = (
    ("NOTICE", "text"),
    ("expected.toml", "expected"),
    ("magma/*.out", "magma"),
    ("magma/*.err", "log"),
    ("scaling/*.log", "seed-log"),
    ("specmoe/*.csv", "csv"),
    ("specmoe/*.json", "json"),
    ("mlperf/results/*/result_*.txt", "mlperf-log"),
    ("mlperf/systems/*.json", "json"),
    ("profiles/*.pt.trace.json.gz", "torch-trace"),
    ("profiles/*.sqlite", "nsys"),
    ("profiles/*nvtx_pushpop_trace.csv", "nsys"),
    ("profiles/ncu_*.csv", "ncu"),
    ("profiles/nvprof_*.txt", "nvprof"),
    ("profiles/run_0_config_*.csv", "pyprof"),
    ("slurm/slurm-*.out", "seed-log"),
    ("slurm/sacct.txt", "sacct"),
    ("slurm/StreamTest.log", "reframe"),
    ("analysis/*.log", "log"),
    ("analysis/*.md", "markdown"),
    ("analysis/*.parquet", "parquet"),
    ("analysis/figures/*.png", "image"),
    ("analysis/figures/*.pdf", "pdf"),
    ("recording/*.gsrec", "recording"),
    ("recording/README.md", "markdown"),
)
EVERY_KIND = {"magma", "pyprof", "nsys", "ncu", "nvprof", "torch-trace", "mlperf-log", "seed-log", "reframe", "sacct",
              "csv", "parquet", "json", "markdown", "image", "pdf", "log", "expected", "recording"}


def expected_kind(rel: str, table: tuple[tuple[str, str], ...]) -> str | None:
    return next((kind for pattern, kind in table if fnmatch.fnmatch(rel, pattern)), None)


def check_folder(folder: Path, table: tuple[tuple[str, str], ...]) -> set[str]:
    wrong, seen = [], set()
    for path in files.walk(folder):
        rel = path.relative_to(folder).as_posix()
        want = expected_kind(rel, table)
        got = recognise(path)
        seen.add(got.kind)
        if want is None or got.kind != want or got.problem is not None or not got.reason or not got.summary:
            wrong.append((rel, want, got.kind, got.reason, got.problem))
        assert got.screen == registry.reader(got.kind).VIEW  # type: ignore[union-attr]
    assert not wrong, "\n".join(map(str, wrong))
    return seen


@needs_shared
def test_every_shared_file_is_its_kind() -> None:
    check_folder(SHARED, SHARED_KINDS)


def test_every_example_file_is_its_kind_and_every_kind_has_an_example() -> None:
    seen = check_folder(EXAMPLES, EXAMPLE_KINDS)
    assert EVERY_KIND <= seen, f"no example of {sorted(EVERY_KIND - seen)}"


def test_every_example_reads_without_a_reader_bug() -> None:
    for path in files.walk(EXAMPLES):
        got = registry.read(path)
        kind = got.meta.get("kind")
        assert kind is not None, path
        assert not [f for f in got.findings if f.kind in ("reader-bug", "unknown-format", "unreadable")], (path, got.findings)
        if kind not in ("markdown", "image", "pdf", "text"):
            assert got.table is not None, path


def test_reasons_say_why() -> None:
    magma = recognise(next(EXAMPLES.glob("magma/aws/eks/gpu/size4/results/magma/magma-1-iter-1-*.out")))
    assert magma.reason.startswith("`% MAGMA 2.8.0") and "banner on line 1" in magma.reason
    assert magma.summary.endswith("MAGMA testing_dgemm")
    assert recognise(EXAMPLES / "analysis/comprehensive_summary.parquet").reason == "PAR1 magic: Parquet"
    assert "`:::MLLOG`" in recognise(next(EXAMPLES.glob("mlperf/results/*/ssd/result_0.txt"))).reason
    assert recognise(EXAMPLES / "analysis/figures/speedup.png").summary.endswith("PNG 320x200")
    assert recognise(EXAMPLES / "analysis/figures/speedup.pdf").summary.endswith("PDF 1.4 · 2 pages")
    log = recognise(EXAMPLES / "analysis/analysis.log").summary
    assert "1 error" in log and "1 warning" in log and "1 success" in log


def test_kinds_are_declared_once() -> None:
    assert EVERY_KIND | {"text"} == set(KINDS)
    screens = {"magma", "kernels", "scaling", "replay", "table", "markdown", "log", "image", "pdf", "text"}
    assert {r.VIEW for r in READERS} <= screens


# ------------------------------------------------------------------ one protocol
PROTOCOL = ("KIND", "TITLE", "VIEW", "BOUNDED", "match", "describe", "read")


def test_every_reader_declares_the_protocol() -> None:
    for entry in READERS:
        missing = [name for name in PROTOCOL if not hasattr(entry, name)]
        assert not missing, (entry, missing)
        assert isinstance(entry.KIND, str) and isinstance(entry.TITLE, str) and isinstance(entry.VIEW, str)
        assert isinstance(entry.BOUNDED, bool)
        assert callable(entry.match) and callable(entry.describe) and callable(entry.read)
    assert len(set(KINDS)) == len(KINDS), "a kind is one entry"


def test_a_new_kind_is_one_module_and_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import pandas as pd

    kind = types.ModuleType("roofline_kind")
    kind.KIND, kind.TITLE, kind.VIEW, kind.BOUNDED = "roofline", "Roofline points", "table", False
    kind.match = lambda name, head: "`# roofline` first line" if files.head_bytes(head).startswith(b"# roofline") else None
    kind.describe = files.describe_rows
    kind.read = lambda path: FileRead(pd.DataFrame({"ai": [1.5]}), [], {"rows": 1})
    monkeypatch.setattr(registry, "READERS", (kind, *registry.READERS))
    path = tmp_path / "points.txt"
    path.write_text("# roofline\nai\n1.5\n")
    seen = recognise(path)
    assert (seen.kind, seen.screen, seen.reason) == ("roofline", "table", "`# roofline` first line")
    got = registry.read(path)
    assert got.meta["kind"] == "roofline" and got.table["ai"].tolist() == [1.5]
    assert registry.reader("roofline") is kind


@needs_shared
def test_kernels_takes_the_files_the_registry_calls_profiles() -> None:
    """`kernels` reads through the registry: over a whole tree, the files it reads as profiles
    are exactly those the browser shows as kernels kinds."""
    for folder in (SHARED / "profiles", SHARED / "pyprof/data/pcm/pyprof_kernels", EXAMPLES):
        profiles = {str(p) for p in files.walk(folder) if recognise(p).screen == "kernels"}
        runs = registry.read_profiles([folder])
        read = {run.file for run in runs.runs}
        assert read <= profiles and profiles, folder


def test_a_readme_that_mentions_magma_is_not_magma(tmp_path: Path) -> None:
    readme = tmp_path / "README"
    readme.write_text("These are MAGMA 2.8.0 outputs; columns in Gflop/s.\n")
    assert recognise(readme).kind == "text"
    assert magma_kind.mentions_magma(readme.read_bytes())  # magma's own walk still reads it


# ------------------------------------------------------------------ bounded reads
def test_recognise_reads_at_most_head_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    big = tmp_path / "big.log"
    big.write_bytes(b"ERROR first line\n" + b"x" * (HEAD_BYTES - 17) + os.urandom(1 << 20))  # garbage after the head
    zipped = tmp_path / "trace.json.gz"
    zipped.write_bytes(gzip.compress(b'{"traceEvents": [' + b'{"ph": "X"},' * 200_000 + b"{}]}"))
    monkeypatch.setattr(os, "read", counting_read)
    seen = recognise(big)
    assert seen.kind == "log" and seen.problem is None
    assert recognise(zipped).kind == "torch-trace"
    assert asked and max(asked) <= HEAD_BYTES and len(asked) == 2


def test_recognition_of_a_large_tree_is_fast(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"f{i}.csv").write_text("a,b\n" + "1,2\n" * 5000)
    start = time.process_time()  # CPU time the OS recorded: heads only, never whole files
    kinds = {recognise(p).kind for p in files.walk(tmp_path)}
    assert kinds == {"csv"} and time.process_time() - start < 3  # ~50 ms here


# ------------------------------------------------------------------ hostile files
def test_fifo_is_a_problem_and_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    seen = recognise(fifo)
    assert seen.kind is None and seen.problem is not None and "FIFO" in seen.problem.message
    assert registry.read(fifo).findings[0].kind == "not-a-file"


def test_device_is_a_problem() -> None:
    seen = recognise("/dev/zero")
    assert seen.kind is None and "character device" in seen.problem.message  # type: ignore[union-attr]


def test_symlink_loop_and_dangling_link(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "gone").symlink_to(tmp_path / "nothing")
    assert sorted(p.name for p in files.walk(tmp_path)) == ["a", "b", "gone"]
    loop = recognise(tmp_path / "a")
    assert loop.kind is None and loop.problem.kind == "symlink-loop" and "loop" in loop.reason  # type: ignore[union-attr]
    assert recognise(tmp_path / "gone").problem.kind == "missing"  # type: ignore[union-attr]


def test_link_to_a_folder_is_named_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "x.csv").write_text("a\n1\n")
    (tmp_path / "link").symlink_to(tmp_path)  # a loop through a folder link
    walked = [p.relative_to(tmp_path).as_posix() for p in files.walk(tmp_path)]
    assert walked == ["link", "real/x.csv"]
    assert recognise(tmp_path / "link").problem.kind == "folder"  # type: ignore[union-attr]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_unreadable_file_and_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.log"
    secret.write_text("ERROR\n")
    secret.chmod(0)
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "x.csv").write_text("a\n1\n")
    closed.chmod(0)
    try:
        assert recognise(secret).problem.message == "permission denied"  # type: ignore[union-attr]
        assert closed in list(files.walk(tmp_path))
        assert "cannot list folder" in recognise(closed).problem.message  # type: ignore[union-attr]
    finally:
        closed.chmod(stat.S_IRWXU)


def test_five_gigabyte_file_is_recognised_from_its_head(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as out:
        out.write(b"step 1 ok\n" * 1000)
        out.truncate(5 << 30)  # sparse: costs no disk
    before = _bytes_read()
    seen = recognise(huge)
    assert _bytes_read() - before < 1 << 20  # the head, as the kernel counted what was read
    assert seen.kind == "log" and seen.problem is not None and seen.problem.kind == "huge"
    assert "5.0 GB" in seen.summary and "5.0 GB" in seen.problem.message


def _bytes_read() -> int:
    """Bytes this process has read through read() calls so far (the kernel's rchar)."""
    with open("/proc/self/io", encoding="ascii") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar:"))


def test_kinds_read_within_budgets_are_not_huge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    table = tmp_path / "t.parquet"
    pd.DataFrame({"a": range(1000)}).to_parquet(table)
    log = tmp_path / "run.log"
    log.write_text("step 1 ok\n" * 1000)
    monkeypatch.setattr(registry, "MAX_BYTES", 100)  # both files are over it
    assert recognise(table).kind == "parquet" and recognise(table).problem is None  # read by row groups within budgets
    assert recognise(log).problem is not None and recognise(log).problem.kind == "huge"  # read whole: only head and tail


def test_binary_garbage_is_a_problem(tmp_path: Path) -> None:
    junk = tmp_path / "blob"
    junk.write_bytes(bytes(range(256)) * 64)
    named = tmp_path / "results.csv"
    named.write_bytes(b"\x00\x01\x02garbage" * 100)
    for path in (junk, named):
        seen = recognise(path)
        assert seen.kind is None and seen.problem is not None and seen.problem.kind == "binary"


def test_empty_file_is_recognised_by_name(tmp_path: Path) -> None:
    (tmp_path / "run.err").write_bytes(b"")
    seen = recognise(tmp_path / "run.err")
    assert seen.kind == "log" and seen.summary == "0 B · empty"


def test_names_with_escape_sequences_and_bad_bytes_are_shown_clean(tmp_path: Path) -> None:
    name = "evil\x1b]0;owned\x07\x1b[2J.log"
    (tmp_path / name).write_text("ERROR x\n")
    bad = os.fsdecode(b"bad\xff\xfe.txt")
    (tmp_path / bad).write_text("fine\n")
    for path in files.walk(tmp_path):
        seen = recognise(path)
        assert seen.kind == "log"
        assert "\x1b" not in seen.name and "\x07" not in seen.name and "\udcff" not in seen.name
        assert seen.name.isprintable()


def test_a_rule_that_raises_is_a_problem_not_an_exception(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str, head: object) -> str | None:
        raise RuntimeError("bug")

    kind = SimpleNamespace(KIND="x", TITLE="X", VIEW="text", BOUNDED=False, match=broken, describe=lambda head, size: "", read=lambda p: FileRead(None))
    monkeypatch.setattr(registry, "READERS", (kind,))
    (tmp_path / "a.txt").write_text("x\n")
    seen = recognise(tmp_path / "a.txt")
    assert seen.kind is None and seen.problem.kind == "reader-bug"  # type: ignore[union-attr]


def test_read_of_missing_file_is_a_finding(tmp_path: Path) -> None:
    got = registry.read(tmp_path / "nope.csv")
    assert got.table is None and got.findings[0].kind == "missing"


# ------------------------------------------------------------------ generic readers
def test_generic_tables_records_columns_and_bad_lines(tmp_path: Path) -> None:
    records = tmp_path / "r.json"
    records.write_text('[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]')
    columns = tmp_path / "c.json"
    columns.write_text('{"a": [1, 2, 3], "b": [4, 5, 6]}')
    lines = tmp_path / "l.jsonl"
    lines.write_text('{"a": 1}\n{"a": 2}\nnot json\n')
    ragged = tmp_path / "t.csv"
    ragged.write_text("a,b\n1,2\n3,4,5\n6,7\n")
    tsv = tmp_path / "t.tsv"
    tsv.write_text("a\tb\n1\t2\n")
    assert generic_tables.read(records).table.shape == (2, 2)
    assert list(generic_tables.read(columns).table.columns) == ["a", "b"]
    got = generic_tables.read(lines)
    assert got.table["a"].tolist() == [1, 2] and got.findings[0].kind == "bad-line"
    got = generic_tables.read(ragged)
    assert got.table["a"].tolist() == [1, 6] and got.findings[0].count == 1
    assert generic_tables.read(tsv).table.shape == (1, 2)


@needs_shared
def test_generic_tables_real_files() -> None:
    cells = generic_tables.read(SHARED / "specmoe/evalSwitchB8/results/research_paper_table.csv").table
    assert cells.shape == (25, 8) and cells["Speedup"].iloc[0] == "15.85×"
    runs = generic_tables.read(SHARED / "specmoe/evalSwitchB8/results/strategy_A_batch_1.json").table
    assert len(runs) == 10 and "inference_latency_ms" in runs
    parquet = generic_tables.read(SHARED / "pyprof/data/mpi/init_times_mpi.gzip")
    assert parquet.meta == {"rows": 64, "columns": 11}


def test_plain_log_counts_lines_index_and_tail(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    text = "start\nWARNING: slow\nERROR: bad\nTraceback (most recent call last):\nERRORS=0 is fine\nANALYSIS COMPLETED SUCCESSFULLY\n"
    path.write_text(text)
    got = plain_log.read(path)
    assert (got.meta["errors"], got.meta["warnings"], got.meta["successes"]) == (2, 1, 1)
    assert got.meta["error_lines"] == [3, 4] and got.meta["warning_lines"] == [2] and got.meta["success_lines"] == [6]
    assert got.table["line"].tolist() == [2, 3, 4, 6]
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"][:-1]
    assert got.meta["offsets"].tolist() == starts
    assert got.meta["tail"][-1] == "ANALYSIS COMPLETED SUCCESSFULLY"
    chunks = list(plain_log.line_index(path, chunk=7))
    assert sum((c.tolist() for c in chunks), []) == starts


def test_plain_log_over_the_limit_says_so(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"ERROR a\n" * 1000 + b"WARNING late\n")
    got = plain_log.read(path, limit=4000)
    assert got.meta["errors"] == 500 and got.meta["warnings"] == 0
    assert got.findings[0].kind == "partial" and got.meta["tail"][-1] == "WARNING late"


def test_media_sizes(tmp_path: Path) -> None:
    assert media.image_size((EXAMPLES / "analysis/figures/speedup.png").read_bytes()) == ("PNG", 320, 200)
    assert media.image_size(b"GIF89a\x10\x00\x20\x00") == ("GIF", 16, 32)
    jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x00\x30\x00\x40\x03"
    assert media.image_size(jpeg) == ("JPEG", 64, 48)
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Pages /Count 1 >> endobj 2 0 obj << /Type /Page >> endobj\n")
    assert media.read_pdf(pdf).meta["pages"] == 1
    packed = tmp_path / "packed.pdf"
    packed.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /ObjStm >> stream\nxx\nendstream endobj\n")
    got = media.read_pdf(packed)
    assert got.meta["pages"] is None and "n/a" in got.findings[0].message


# ------------------------------------------------------------------ properties
names = st.sampled_from(["a.csv", "b.log", "c.json", "d.md", "e.out", "expected.toml", "f.parquet", "g", "h.txt",
                         "i.pt.trace.json.gz", "j.gzip", "k.sqlite", "l.png", "m.pdf", "\x1b[2Jn.tsv"])
heads = st.one_of(
    st.binary(max_size=2048),
    st.text(max_size=1024).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"PAR1", b"SQLite format 3\x00", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"%PDF-1.4",
                     b"% MAGMA 2.8.0", b":::MLLOG {", b"JobID|State", b"[{", b"==PROF==", b"\x1f\x8b", b"\xff\xff\xff\xff"]).flatmap(
        lambda magic: st.binary(max_size=512).map(lambda rest: magic + rest)),
)


@given(name=names, head=heads)
@settings(max_examples=100, deadline=None)
def test_every_rule_on_any_head_returns_a_reason_or_none(name: str, head: bytes) -> None:
    for entry in READERS:
        reason = entry.match(name, head)
        assert reason is None or (isinstance(reason, str) and reason)
        if entry.describe is not None:
            assert isinstance(entry.describe(head, len(head) + 10), str)


@given(name=names, data=heads)
@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_recognise_and_read_never_raise(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    seen = recognise(path)
    assert seen.kind is None or seen.kind in KINDS
    assert (seen.kind is None) == (seen.screen is None)
    got = registry.read(path)
    assert isinstance(got.findings, list)


@given(text=st.text(max_size=2000), suffix=st.sampled_from(["", ".tsv", ".csv"]))
@settings(max_examples=100, deadline=None)
def test_csv_and_json_parsers_never_raise(text: str, suffix: str) -> None:
    table, findings = generic_tables.parse_csv(text, "x", suffix)
    assert table is not None or findings
    table, findings = generic_tables.parse_json(text, "x")
    assert table is not None or findings


@given(data=st.binary(max_size=4096))
@settings(max_examples=100, deadline=None)
def test_media_and_log_classes_never_raise(data: bytes) -> None:
    found = media.image_size(data)
    assert found is None or (found[0] in ("PNG", "GIF", "JPEG") and found[1] >= 0)
    assert media.pdf_pages(data) is None or media.pdf_pages(data) > 0
    counts = plain_log.count_classes(data)
    assert set(counts) == set(plain_log.CLASSES) and all(n >= 0 for n in counts.values())


@given(data=st.binary(max_size=20000))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_plain_log_read_never_raises_and_counts_lines(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(data)
    got = plain_log.read(path)
    if got.table is not None:
        assert got.meta["lines"] == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        assert sum(got.meta[k] for k in ("errors", "warnings", "successes")) == len(got.table)


@pytest.mark.parametrize("orient", ["records", "columns", "split"])
def test_pandas_json_shapes_are_tables_not_traces(tmp_path, orient) -> None:
    """A list of records is a table (a trace's events have `ph` phases); pandas' column and
    split shapes read as the same table."""
    import pandas as pd

    frame = pd.DataFrame({"system": ["8xA100", "4xA100"], "speedup": [4.5, 2.9]})
    path = tmp_path / f"{orient}.json"
    frame.to_json(path, orient=orient)
    assert registry.recognise(path).kind == "json"
    got = registry.read(path).table
    assert got.to_dict("list") == frame.to_dict("list")


def test_source_code_naming_profiler_columns_is_not_an_export(tmp_path) -> None:
    """gpuscope's own readers name every profiler's columns (`Sil(ns)`, `==PROF==`, `(ns)`):
    a source file is never taken for the export it reads."""
    repo = Path(__file__).resolve().parents[2] / "parsers" / "profilers"
    for name in ("pyprof.py", "nsys.py", "ncu.py", "nvprof.py", "csv_common.py"):
        assert recognise(repo / name).kind == "text", name
    one = tmp_path / "one.csv"
    one.write_text("a,b\n1,2\n")
    assert recognise(one).summary.endswith("1 row")
    line = tmp_path / "one.txt"
    line.write_text("hello\n")
    assert recognise(line).summary.endswith("1 line")
