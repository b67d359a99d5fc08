"""Decoded size is budgeted, not just file size: a few-KB Parquet file that decodes to gigabytes,
and an nsys export of more kernel rows than the row limit, give their first rows and a finding (or a refusal
that says why), under 1 GB of peak RSS, through every entry point: the registry's `read()`, the
kernels reader, the browser's table view and `gpuscope kernels FILE`. Out of memory is a finding.

The hostile files are written by tests/hostile_decoded_gen.py into tmp_path. Peak RSS is measured
in a child process (wait4's ru_maxrss), with an address-space limit so a regression fails the test
instead of the machine.
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_decoded_gen import big_strings, dictionary_bomb, nsys_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers import parquet_read, registry
from gpuscope.parsers import tables as generic_tables
from gpuscope.parsers.profilers import nsys
from gpuscope.parsers.profilers import pyprof
from gpuscope.parsers.profilers import sqlite_bounded
from gpuscope.tui.model.table_read import HEAD_ROWS, read_all, read_head

ROOT = Path(__file__).resolve().parents[2]
REAL_PYPROF = ROOT.parent / "shared" / "data" / "pyprof" / "data" / "pcm" / "pyprof_kernels" / \
    "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
RSS_LIMIT_KB = 1 << 20  # 1 GB, as ru_maxrss counts (KB on Linux)
ADDRESS_LIMIT = 3 << 30  # Python + numpy + pandas + pyarrow map far more than they touch
MB = 1 << 20


# --- in process, with small budgets --------------------------------------------------------------

def test_dictionary_bomb_gives_its_first_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = dictionary_bomb(tmp_path / "bomb.parquet", rows=100_000)
    assert path.stat().st_size < 16 * 1024  # 800 MB once decoded
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 4 * MB)
    got = registry.read(path)
    assert got.meta["kind"] == "parquet"
    table = got.table
    assert 400 < len(table) < 512  # 4 MB of 8 KB strings
    assert (table["name"].str.len() == 8192).all() and table["time"].eq(1).all()
    [partial] = got.findings
    assert (partial.severity, partial.kind, partial.count) == ("warning", "partial", 100_000 - len(table))
    assert partial.message == (f"read the first {len(table):,} rows of 100,000: decoded size over the 4.0 MB budget "
                               "(GPUSCOPE_MAX_DECODED_MB raises it)")


def test_a_row_group_over_the_budget_is_refused_before_it_is_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = big_strings(tmp_path / "big.parquet", rows=8, group=8)
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 4 * MB)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", lambda *a, **k: pytest.fail("decoded"))
    got = generic_tables.read(path)
    assert got.table is None
    assert [(f.severity, f.kind) for f in got.findings] == [("error", "huge")]
    assert "row group 1 of 1 holds 8.0 MB uncompressed, over the 4.0 MB budget" in got.findings[0].message


def test_row_groups_are_read_while_they_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = big_strings(tmp_path / "big.parquet", rows=8, group=1)
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 4 * MB)
    got = generic_tables.read(path)
    assert list(got.table["name"].str[:8]) == ["00000000", "00000001", "00000002"]
    assert got.findings[0].kind == "partial" and got.findings[0].count == 5
    assert "row group 4 of 8 holds 1.0 MB uncompressed, over what is left of the 4.0 MB budget" in got.findings[0].message


def test_pyprof_parquet_over_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 4 * MB)
    bomb = dictionary_bomb(tmp_path / "bomb.gzip", rows=100_000, pyprof=True)
    assert registry.recognise(bomb).kind == "pyprof"
    got = pyprof.read_kernels(bomb)
    assert 400 < len(got.table) < 512 and got.meta["rows_in_file"] == 100_000
    assert [f.kind for f in got.findings] == ["partial"]
    big = big_strings(tmp_path / "big.gzip", rows=8, group=8, pyprof=True)
    got = pyprof.read_kernels(big)
    assert got.table.empty and [f.kind for f in got.findings] == ["huge"] and "GPUSCOPE_MAX_DECODED_MB" in got.findings[0].message


def test_table_view_says_how_much_it_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = dictionary_bomb(tmp_path / "bomb.parquet", rows=100_000)
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 4 * MB)
    head = read_head(path)
    assert len(head.frame) == HEAD_ROWS and head.total_rows == 100_000 and not head.complete and not head.final
    full = read_all(path)
    assert not full.complete and full.total_rows == 100_000 and 400 < len(full.frame) < 512
    assert full.findings[0].kind == "partial"
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 1 * MB)  # not even the head fits
    head = read_head(path)
    assert 0 < len(head.frame) < HEAD_ROWS and head.total_rows == 100_000 and not head.complete


@pytest.mark.skipif(not REAL_PYPROF.is_file(), reason="../shared/data/pyprof is absent")
def test_real_pyprof_parquet_over_a_small_budget_keeps_its_first_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """36 MB decoded in one row group: within the default budget whole, refused under 16 MB, and
    under a row limit its first rows exactly as pandas reads them."""
    whole = pd.read_parquet(REAL_PYPROF)
    got = pyprof.read_kernels(REAL_PYPROF)
    assert len(got.table) == len(whole) == 192_590 and not [f for f in got.findings if f.kind in ("partial", "huge")]
    monkeypatch.setattr(parquet_read, "MAX_LINES", 10_000)
    got = pyprof.read_kernels(REAL_PYPROF)
    assert list(got.table["kernel"]) == list(whole["Kernel"][:10_000])
    assert list(got.table["duration_ns"]) == list(whole["Sil(ns)"][:10_000])
    assert got.findings[0].message == "read the first 10,000 rows of 192,590: over the 10,000 row limit (GPUSCOPE_MAX_LINES raises it)"
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 16 * MB)
    got = pyprof.read_kernels(REAL_PYPROF)
    assert got.table.empty and "row group 1 of 1 holds 34.2 MB uncompressed" in got.findings[0].message


def test_nsys_export_over_the_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = nsys_rows(tmp_path / "rows.sqlite", rows=5000, nvtx=3000)
    monkeypatch.setattr(sqlite_bounded, "MAX_LINES", 1000)
    got = nsys.read_kernels(path)
    assert len(got.table) == 1000 and list(got.table["start_ns"][:3]) == [0, 1000, 2000]
    assert got.meta["gpu_name"] == "NVIDIA A100-SXM4-40GB" and len(got.meta["nvtx"]) == 1000
    assert [(f.kind, f.count) for f in got.findings] == [("partial", 4000), ("partial", 2000)]
    assert got.findings[0].message == ("read the first 1,000 rows of 5,000 in CUPTI_ACTIVITY_KIND_KERNEL (as stored): "
                                       "over the 1,000 row limit (GPUSCOPE_MAX_LINES raises it)")
    monkeypatch.setattr(sqlite_bounded, "MAX_LINES", 10_000)
    got = nsys.read_kernels(path)
    assert len(got.table) == 5000 and len(got.meta["nvtx"]) == 3000 and not got.findings


def test_out_of_memory_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table_path = dictionary_bomb(tmp_path / "bomb.parquet", rows=1000)
    kernels_path = dictionary_bomb(tmp_path / "bomb.gzip", rows=1000, pyprof=True)
    export = nsys_rows(tmp_path / "rows.sqlite", rows=10)

    def no_memory(*_a: object, **_k: object) -> None:
        raise pa.ArrowMemoryError("malloc of size 8589934592 failed")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", no_memory)
    for got in (generic_tables.read(table_path), registry.read(table_path)):
        assert [(f.kind, f.message) for f in got.findings] == [("huge", "not enough memory to read it")]
    assert [(f.kind, f.message) for f in pyprof.read_kernels(kernels_path).findings] == [("huge", "not enough memory to read it")]
    def no_memory_either(*_a: object, **_k: object) -> None:
        raise MemoryError

    monkeypatch.setattr(sqlite_bounded.pd, "read_sql_query", no_memory_either)
    assert [(f.kind, f.message) for f in nsys.read_kernels(export).findings] == [("huge", "not enough memory to read it")]


@st.composite
def parquet_files(draw: st.DrawFn) -> tuple[bytes, list[str | None], list[int]]:
    texts = draw(st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "kernel", "x" * 300]), st.text(max_size=40)), max_size=300))
    numbers = list(range(len(texts)))
    buffer = io.BytesIO()
    pq.write_table(pa.table({"t": pa.array(texts, pa.string()), "n": pa.array(numbers, pa.int64())}), buffer,
                   row_group_size=draw(st.integers(1, 400)), use_dictionary=draw(st.booleans()),
                   compression=draw(st.sampled_from(["none", "zstd", "snappy"])), store_schema=draw(st.booleans()))
    return buffer.getvalue(), texts, numbers


@given(parquet_files(), st.integers(0, 40_000), st.integers(0, 400))
@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_budgeted_read_is_a_prefix_within_the_budget(made: tuple[bytes, list[str | None], list[int]], budget: int, max_rows: int) -> None:
    data, texts, numbers = made
    table, total, findings = parquet_read.read_budgeted(io.BytesIO(data), "f", max_rows=max_rows, max_bytes=budget)
    assert total == len(texts)
    rows = 0 if table is None else table.num_rows
    if table is not None:
        assert table.column("t").to_pylist() == texts[:rows] and table.column("n").to_pylist() == numbers[:rows]
        decoded = sum(len((t or "").encode()) + 4 for t in texts[:rows]) + 8 * rows
        assert decoded <= budget
    assert rows <= max_rows
    if rows == total:
        assert not findings
    else:
        [finding] = findings
        assert finding.kind == ("partial" if rows else "huge")
        assert finding.count == (total - rows if rows else 1)


# --- in a child process, at the real scale and the default budgets (the row limit: a tenth of it) ---

def _limits() -> None:  # in the child, before exec: memory bounded, and a hang ends in SIGALRM
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))
    signal.alarm(240)


CHILD = """
import json, sys
from pathlib import Path
from gpuscope.parsers import registry
path = Path(sys.argv[1])
kind = registry.recognise(path).kind
# the browser's table view: the head at once, then every row, then its model
from gpuscope.tui.model.table import TableModel
from gpuscope.tui.model.table_read import read_all, read_head
head = len(read_head(path).frame)
full = read_all(path)
TableModel(full)
rows, total, complete, findings = len(full.frame), full.total_rows, full.complete, full.findings
print(json.dumps({"kind": kind, "head": head, "rows": rows, "total": total, "complete": complete, "findings": [f.message for f in findings]}))
"""


def _run(args: list[str], tmp: Path, limits: dict[str, str] | None = None) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in KB) of a child with the address-space limit, under
    the default budgets unless `limits` sets some through the environment."""
    out, err = tmp / "stdout", tmp / "stderr"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSCOPE_MAX")} | (limits or {})
    with out.open("wb") as o, err.open("wb") as e:
        child = subprocess.Popen(args, stdout=o, stderr=e, stdin=subprocess.DEVNULL, preexec_fn=_limits, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), out.read_text(errors="replace"), err.read_text(errors="replace"), usage.ru_maxrss


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("decoded")
    dictionary_bomb(base / "dictionary_bomb.parquet")
    dictionary_bomb(base / "dictionary_bomb_pyprof.gzip", pyprof=True)
    big_strings(base / "big_strings.parquet")
    big_strings(base / "big_strings_pyprof.gzip", pyprof=True)
    return base


@pytest.mark.xdist_group("decoded_hostile")  # one worker builds the module's hostile files
@pytest.mark.parametrize("name, kind", [("dictionary_bomb.parquet", "parquet"), ("big_strings.parquet", "parquet"),
                                        ("dictionary_bomb_pyprof.gzip", "pyprof"), ("big_strings_pyprof.gzip", "pyprof")])
def test_table_view_and_registry_stay_under_1_gb(hostile: Path, tmp_path: Path, name: str, kind: str) -> None:
    path = hostile / name
    assert path.stat().st_size < 160 * 1024  # 1.3 GB or 8 GB once decoded
    code, out, err, peak_kb = _run([sys.executable, "-c", CHILD, str(path)], tmp_path)
    print(f"{name}: peak RSS {peak_kb / 1024:.0f} MB")
    assert code == 0 and "Traceback" not in err, err[-3000:]
    assert peak_kb < RSS_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB"
    got = json.loads(out)
    total = 1_000_000 if "dictionary" in name else 1300
    assert got["kind"] == kind and got["total"] == total and not got["complete"] and 0 < got["rows"] < total
    assert f"of {total:,}: " in got["findings"][0] and "GPUSCOPE_MAX_DECODED_MB raises it" in got["findings"][0]


@pytest.mark.xdist_group("decoded_hostile")
@pytest.mark.parametrize("name", ["dictionary_bomb_pyprof.gzip", "big_strings_pyprof.gzip"])
def test_kernels_command_on_a_parquet_bomb_stays_under_1_gb(hostile: Path, tmp_path: Path, name: str) -> None:
    code, out, err, peak_kb = _run([GPUSCOPE, "kernels", str(hostile / name), "--format", "json"], tmp_path)
    print(f"kernels {name}: exit {code}, peak RSS {peak_kb / 1024:.0f} MB")
    assert code == 0 and "Traceback" not in out + err, err[-3000:]
    assert peak_kb < RSS_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB"
    assert "GPUSCOPE_MAX_DECODED_MB raises it" in out and "read the first" in out


def test_kernel_rows_over_the_row_limit_set_in_the_environment(tmp_path: Path) -> None:
    # GPUSCOPE_MAX_LINES at a tenth of its default: the same budget, read from the environment by
    # the command, on a tenth of the rows. A million rows cost ten times the CPU, and their 20 s
    # query limit is wall-clock time, which a loaded machine overran.
    path = nsys_rows(tmp_path / "rows.sqlite", rows=120_000)
    said = "read the first 100,000 rows of 120,000 in CUPTI_ACTIVITY_KIND_KERNEL"
    code, out, err, peak_kb = _run([GPUSCOPE, "kernels", str(path), "--format", "json"], tmp_path, {"GPUSCOPE_MAX_LINES": "100000"})
    print(f"kernels: exit {code}, peak RSS {peak_kb / 1024:.0f} MB")
    assert code == 0 and "Traceback" not in out + err, err[-3000:]
    assert peak_kb < RSS_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB"
    assert said in out and "gemm_kernel" in out
