"""The MAGMA reader's fast paths give what its general paths give: Arrow's tokens against
numpy's loadtxt, batches and threads against one file at a time, batch-wise flags against
flagging all rows at once; and two inputs that used to crash the reader."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.metrics import magma_stats
from gpuscope.parsers import magma, magma_rows, magma_scan
from paths import EXAMPLES, SHARED_MAGMA

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
TOKENS = st.sampled_from(["300", "32", "0.00", "776.35", "1e5", "+4", "-3", ".5", "7.", "nan", "-nan", "NaN", "inf", "2.12e-17",
                          "---", "ok", "failed", "( 12.5)", "(1118.44)", "(  ---  )", "x", "okay", "1---2", "+---", "1e", "--", "\t", "\r"])


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _rows_text(rows: list[list[str]]) -> tuple[bytes, np.ndarray]:
    lines = ["  " + " ".join(["7"] + tokens) for tokens in rows]
    text = ("\n".join(lines) + "\n").encode()
    starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    return text, starts + 2


@SETTINGS
@given(st.integers(1, 6), st.lists(st.lists(TOKENS, min_size=1, max_size=6), min_size=1, max_size=20))
def test_arrow_tokens_give_loadtxt_numbers(width: int, rows: list[list[str]]) -> None:
    """Whenever the Arrow reader takes rows, numpy's reader takes them too, with the same
    numbers; rows it refuses go to the general readers (it may refuse more)."""
    rows = [(r * width)[:width] for r in rows]  # one token count, the usual case
    text, first = _rows_text(rows)
    tokens = magma_rows.split_rows(text, first)
    fast = magma_rows.numeric_rows([(tokens, np.arange(len(rows)))])
    slow = magma_rows.read_numeric(text, len(rows))
    if fast is not None:
        assert slow is not None and _same(fast, slow.to_numpy(np.float64))


@SETTINGS
@given(st.lists(st.lists(TOKENS, min_size=1, max_size=8), min_size=1, max_size=20))
def test_ragged_rows_are_left_to_the_general_readers(rows: list[list[str]]) -> None:
    text, first = _rows_text(rows)
    tokens = magma_rows.split_rows(text, first)
    assert tokens.count.size == len(rows)
    if len({len(r) for r in rows}) > 1:
        assert magma_rows.numeric_rows([(tokens, np.arange(len(rows)))]) is None


def test_batched_scan_equals_one_file_at_a_time() -> None:
    datas = [p.read_bytes() for p in sorted(EXAMPLES.rglob("*.out"))]
    scans, rows = magma_scan.scan_many(datas)
    alone = [magma_scan.scan(data) for data in datas]
    for one, found in zip(alone, scans):
        assert [(b.spec, b.test, b.processes, b.rows) for b in one.blocks] == [(b.spec, b.test, b.processes, b.rows) for b in found.blocks]
        assert np.array_equal(one.row_lines, found.row_lines) and np.array_equal(one.row_block, found.row_block)
        assert (one.banners, one.device, one.version, one.start, one.end, one.exit_code, one.cancelled) == (
            found.banners, found.device, found.version, found.start, found.end, found.exit_code, found.cancelled)
    joined, first = rows.joined()
    assert joined == b"".join(one.row_bytes for one in alone)
    text = np.frombuffer(joined, np.uint8)
    assert rows.size == joined.count(b"\n") and np.all((text[first] >= 48) & (text[first] <= 57))
    # Where the rows lie in the batch's buffer: the same bytes.
    assert all(bytes(rows.source[a:b]) == line + b"\n" for a, b, line in zip(rows.begin.tolist(), rows.stop.tolist(), joined.split(b"\n")))
    assert np.array_equal(rows.first - rows.begin, first - (np.cumsum(rows.stop - rows.begin) - (rows.stop - rows.begin)))


def test_rows_read_in_the_buffer_equal_their_joined_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tokeniser reads rows where they lie in the batch buffer (other lines between them)
    as it reads their text joined, with and without the C part and the rows' line starts."""
    _, rows = magma_scan.scan_many([p.read_bytes() for p in sorted(EXAMPLES.rglob("*.out"))])
    want = magma_rows.split_rows_numpy(*rows.joined())
    assert (rows.stop[:-1] != rows.begin[1:]).any()  # other lines lie between some rows
    for c_part in dict.fromkeys((magma_rows._magma_tokens, None)):
        monkeypatch.setattr(magma_rows, "_magma_tokens", c_part)
        for begin in (rows.begin, None):
            got = magma_rows.split_rows(rows.source, rows.first, rows.stop, begin)
            assert np.array_equal(got.start, want.start) and np.array_equal(got.count, want.count) and not got.bad.any()
            assert np.array_equal(np.asarray(got.values).view(np.int64), np.asarray(want.values).view(np.int64))


def _assert_same(a: magma.MagmaResult, b: magma.MagmaResult) -> None:
    pd.testing.assert_frame_equal(a.rows, b.rows, check_exact=True)
    pd.testing.assert_frame_equal(a.runs, b.runs, check_exact=True)
    assert [repr(f) for f in a.findings] == [repr(f) for f in b.findings]
    pd.testing.assert_frame_equal(magma_stats.summarize(a.rows), magma_stats.summarize(b.rows), check_exact=True)


def test_threads_batches_and_batchwise_flags_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    default = magma.read_tree([EXAMPLES])
    with monkeypatch.context() as patch:
        patch.setattr(magma, "_workers", lambda: 1)
        patch.setattr(magma, "BATCH_BYTES", 1)  # one file per batch
        _assert_same(default, magma.read_tree([EXAMPLES]))
    with monkeypatch.context() as patch:
        patch.setattr(magma, "_flag", lambda *a: None)  # flag and count all rows at once
        _assert_same(default, magma.read_tree([EXAMPLES]))


def test_one_label_under_two_roots_is_counted_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = sorted(EXAMPLES.rglob("*.out"))
    for i, root in enumerate(("a", "b")):
        (tmp_path / root / "env" / "size4").mkdir(parents=True)
        (tmp_path / root / "env" / "size4" / "run.out").write_bytes(source[i].read_bytes())
    both = magma.read_tree([tmp_path / "a", tmp_path / "b"])
    with monkeypatch.context() as patch:
        patch.setattr(magma, "_flag", lambda *a: None)
        _assert_same(both, magma.read_tree([tmp_path / "a", tmp_path / "b"]))
    assert both.rows["file"].nunique() == 1 and len(both.runs) == 2


def test_header_copy_without_rows_and_huge_sizes_do_not_crash(tmp_path: Path) -> None:
    header = "%   M     N     K   MAGMA Gflop/s (ms)  cuBLAS Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error  cuBLAS error\n"
    text = ("% MAGMA 2.8.0\n% Usage: ./testing_dgemm\n" + header + header[:-20] + "\n"
            + " 1088  1088  1088     12.83 ( 200.78)   1389.98 (   1.86)     ---   (  ---  )   2.12e-17     ---   ok\n"
            + " 99999999999999999999  1088  1088     12.83 ( 200.78)   1389.98 (   1.86)     ---   (  ---  )   2.12e-17     ---   ok\n")
    path = tmp_path / "odd.out"
    path.write_text(text)
    rows, findings = magma.read(path)
    assert rows["m"].tolist() == [1088] and rows["status"].tolist() == ["ok"]
    assert any(f.kind == "unparsed" for f in findings)


def test_summary_of_plain_string_columns_matches_categories() -> None:
    rows = magma.read_tree([EXAMPLES]).rows
    plain = rows.astype({"test": object, "environment": object, "problem_size": object, "excluded": object})
    keys = ["test", "environment", "nodes", "problem_size"]
    ours = magma_stats.summarize(rows).sort_values(keys, ignore_index=True)
    theirs = magma_stats.summarize(plain).sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert not math.isnan(ours["gflops_median"].max())


def _plain_token_bounds(text: bytes, skip: int) -> list[int]:
    """Token edges from byte `skip` on, one byte at a time (separators: blank, newline, parentheses)."""
    edges, inside = [], False
    for i in range(skip, len(text)):
        token_byte = text[i] not in magma_rows.SEPARATORS
        if token_byte != inside:
            edges.append(i)
            inside = token_byte
    return edges + [len(text)] if inside else edges


@SETTINGS
@given(st.text(alphabet=" \n\t()7.-", max_size=60), st.integers(0, 60), st.sampled_from([1, 2, 3, 7, magma_scan.CHUNK]))
def test_token_bounds_equal_a_byte_by_byte_scan(monkeypatch: pytest.MonkeyPatch, text: str, skip: int, chunk: int) -> None:
    """Whatever comes before `skip` (a blank, a tab, nothing), however the text ends and
    however many steps the scan takes, the edges are those a plain loop finds."""
    data = text.encode()
    skip = min(skip, max(0, len(data) - 1))
    monkeypatch.setattr(magma_rows, "CHUNK", chunk)
    found = magma_rows._token_bounds(np.frombuffer(data, np.uint8), skip)
    assert found.tolist() == _plain_token_bounds(data, skip)


C_TOKENS = pytest.mark.skipif(magma_rows._magma_tokens is None, reason="the C tokeniser was not built here (no compiler)")
NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(min_value=0, max_value=1e6).map(lambda x: f"{x:.2f}"),
    st.floats(min_value=0, max_value=1e6).map(lambda x: f"{x:.2e}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17g}"),
    st.from_regex(r"\A[+-]?(\d{0,22}\.?\d{0,22}|\.\d{1,5})([eE][+-]?\d{1,3})?\Z"),  # any decimal form, valid or not
)


def _without_c_part(fn, *args):  # type: ignore[no-untyped-def]
    """`fn(*args)` on the numpy path (hypothesis tests cannot take the monkeypatch fixture)."""
    c_part, magma_rows._magma_tokens = magma_rows._magma_tokens, None
    try:
        return fn(*args)
    finally:
        magma_rows._magma_tokens = c_part


def _c_tokens_as_numpy(text: bytes, first: np.ndarray, rows: magma_scan.RowText | None = None) -> bool:
    """Whether the C tokeniser read the rows; when it did, its tokens are numpy's bit for bit
    (-0.0 and the NaN of `---` included). With `rows`, the C tokeniser reads them where they
    lie in the batch buffer (as the reader does), numpy reads `text` (their joined text)."""
    if rows is None:
        a = magma_rows._split_rows_c(text, first, np.append(first[1:], len(text)))
    else:
        a = magma_rows._split_rows_c(rows.source, rows.first, rows.stop)
    if a is None:
        return False
    b = magma_rows.split_rows_numpy(text, first)
    assert np.array_equal(a.start, b.start) and np.array_equal(a.count, b.count) and np.array_equal(a.bad, b.bad)
    assert np.array_equal(np.asarray(a.values).view(np.int64), np.asarray(b.values).view(np.int64))
    if a.count.min() == a.count.max():  # one matrix: the C part's (column after column) is numpy's
        for rows in (np.arange(a.count.size), np.arange(0, a.count.size, 2)):
            c_matrix = magma_rows._matrix(a, rows, int(a.count[0]))
            numpy_matrix = _without_c_part(magma_rows._matrix, a, rows, int(a.count[0]))
            assert c_matrix.shape == numpy_matrix.shape and np.array_equal(c_matrix.view(np.int64), numpy_matrix.view(np.int64))
    return True


def _real_outputs() -> list[Path]:
    """examples/, and ../shared/data/magma when present."""
    paths = sorted(EXAMPLES.rglob("*.out"))
    return paths + (sorted(p for p in SHARED_MAGMA.rglob("*") if p.is_file()) if SHARED_MAGMA.is_dir() else [])


@C_TOKENS
@SETTINGS
@given(st.lists(st.lists(st.one_of(TOKENS, NUMBERS), min_size=1, max_size=8), min_size=1, max_size=20))
def test_c_tokens_equal_the_numpy_path(rows: list[list[str]]) -> None:
    """Whatever rows the C tokeniser reads, it reads as numpy and Arrow do, bit for bit; any
    row it cannot vouch for sends the batch back to them."""
    _c_tokens_as_numpy(*_rows_text(rows))


@C_TOKENS
@settings(max_examples=300, deadline=None)
@given(NUMBERS)
def test_c_numbers_equal_arrows_cast(token: str) -> None:
    """A number the C tokeniser reads has Arrow's value (the correctly rounded one)."""
    _c_tokens_as_numpy(*_rows_text([[token]]))


@C_TOKENS
def test_c_tokens_read_the_real_files_as_numpy_does() -> None:
    """Every batch of the real outputs (examples/, and ../shared/data/magma when present) is
    read by the C tokeniser, with numpy's result."""
    for path in _real_outputs():
        _, rows = magma_scan.scan_many([path.read_bytes()])
        assert not rows.size or _c_tokens_as_numpy(*rows.joined(), rows), path


LINE_BYTES = st.lists(st.sampled_from([b" ", b"\t", b"\r", b"\n", b"\x0b", b"\x0c", b"%", b"/", b"7", b"12", b"x", b".", b"-", b"(",
                                        b" " * 20, b"\t" * 17, b"% MAGMA 2.8.0", b"  1088  1088", b"8.411s: job", b"Gflop/s",
                                        b"% device 0: A100, 1 MHz clock", b"% device 1: V100", b"% Usage: ./testing_dgemm -N 8",
                                        b"%   M     N     K   MAGMA Gflop/s (ms)", b"\n% Usage: ./testing_dgemm -N 8\n"]), max_size=60)
"""Line fragments: any mix of blanks, tabs, CR, long indents, half-rows, banners, devices,
usage lines and column headers (repeated, so equal lines follow each other)."""


def _lines_both(datas: list[bytes]) -> tuple[magma_scan.LineScan, magma_scan.LineScan]:
    """The C scanner's and numpy's tables of files one after another in one batch buffer."""
    files = magma_scan.FileBuffer()
    files.clear(sum(len(d) for d in datas) + len(datas))
    for data in datas:
        files.append(data)
    files.room(len(magma_scan.PAD))[:] = magma_scan.PAD
    padded = np.frombuffer(files.buffer, np.uint8)
    file_start = np.array(files.starts, np.int64)
    return (magma_scan._scan_lines(files.buffer, padded, files.end, file_start),
            magma_scan._scan_lines_numpy(files.buffer, padded, files.end, file_start))


def _same_tables(c: magma_scan.LineScan, numpy_path: magma_scan.LineScan) -> None:
    assert c.lines == numpy_path.lines
    for name in ("files", "rows", "other", "usage", "header"):
        a, b = getattr(c, name), getattr(numpy_path, name)
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b), name


@C_TOKENS
@SETTINGS
@given(st.lists(LINE_BYTES.map(b"".join), min_size=1, max_size=4))
def test_c_lines_equal_numpys_tables(datas: list[bytes]) -> None:
    """The C scanner's per-file counts, rows, other lines, usage lines and column headers
    (with their runs of equal lines) are numpy's, for any mix of lines and files (empty ones
    and ones without a last newline included)."""
    _same_tables(*_lines_both(datas))


@C_TOKENS
def test_c_lines_read_the_real_files_as_numpy_does() -> None:
    for path in _real_outputs():
        _same_tables(*_lines_both([path.read_bytes()]))
    outputs = [p.read_bytes() for p in _real_outputs()[:12]]
    _same_tables(*_lines_both(outputs))  # many files in one batch, as the reader scans them


@C_TOKENS
def test_c_part_refuses_what_would_overflow() -> None:
    """Tables too small for the lines, or a row index out of range: a ValueError, never a
    write past an array."""
    c = magma_scan._magma_tokens
    buf = bytearray(b"  1 2\n% x\nabc\n" + magma_scan.PAD)
    file_start = np.array([0], np.int64)

    def tables(lines: int) -> list[np.ndarray]:
        return [np.empty((6, 1), np.int64)] + [np.empty((k, lines), np.int64) for k in (5, 4, 5, 5)]

    assert c.scan_lines(buf, 14, file_start, 3, *tables(3)) == (1, 1, 0, 0)
    with pytest.raises(ValueError):
        c.scan_lines(buf, 14, file_start, 2, *tables(2))
    values, start = np.arange(6, dtype=np.float64), np.array([0, 3], np.int64)
    out = np.empty((3, 2))
    c.gather(values, start, np.array([1, 0], np.int64), 3, out)
    assert out.T.tolist() == [[3, 4, 5], [0, 1, 2]]
    for rows, width in ((np.array([2], np.int64), 3), (np.array([1], np.int64), 4)):
        with pytest.raises(ValueError):
            c.gather(values, start, rows, width, np.empty((width, 1)))
