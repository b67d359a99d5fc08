"""Property tests: the MAGMA reader never raises, and every row and skipped line is accounted for."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers import magma, magma_rows
from gpuscope.parsers.magma_scan import scan

SAMPLE = (Path(__file__).resolve().parents[1] / "examples/magma/azure/cyclecloud/gpu/size4/results/magma/magma-4n-53-iter-1.out").read_bytes()[:20000]
ROW_TOKENS = st.sampled_from(["300", "32", "31", "0.00", "(", ")", "( 12.5)", "---", "(  ---  )", "nan", "-nan", "inf", "ok", "failed", "2.1e-17", "1e", "x", '"', "'", "#", "%", "\t", "1118.44)", "-3", "+4"])
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _read_bytes(tmp_path: Path, data: bytes) -> magma.MagmaResult:
    path = tmp_path / "fuzz.out"
    path.write_bytes(data)
    return magma.read_tree([path])


def _check(result: magma.MagmaResult, data: bytes) -> None:
    lines = data.split(b"\n")
    for line_no in result.rows["line"].tolist():
        assert lines[line_no - 1].lstrip()[:1].isdigit()  # every row points at a numeric line
    assert all(f.message for f in result.findings)
    if len(result.rows) == 0 and data.strip():
        assert result.findings or b"Gflop/s" not in data  # nothing read: something says why


@SETTINGS
@given(st.binary(max_size=3000))
def test_random_bytes_never_raise(tmp_path: Path, data: bytes) -> None:
    _check(_read_bytes(tmp_path, data), data)


@SETTINGS
@given(st.data())
def test_mangled_real_output_never_raises(tmp_path: Path, data: st.DataObject) -> None:
    """Cut, duplicate, shuffle and corrupt lines of a real interleaved file."""
    lines = SAMPLE.split(b"\n")
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(data.draw(st.integers(0, 30))):
        i = rng.randrange(len(lines))
        action = rng.randrange(5)
        if action == 0:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif action == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif action == 2:
            del lines[i]
        elif action == 3:
            lines[i] = data.draw(st.binary(max_size=80)).replace(b"\x00", b"")
        else:
            lines[i] = " ".join(data.draw(st.lists(ROW_TOKENS, max_size=40))).encode()
    blob = b"\n".join(lines)
    _check(_read_bytes(tmp_path, blob), blob)


@SETTINGS
@given(st.lists(st.lists(ROW_TOKENS, min_size=1, max_size=40), min_size=1, max_size=30))
def test_fast_and_slow_tokenisers_agree(rows: list[list[str]]) -> None:
    """The C reader (fast path) and the Python split (fallback) give the same frame."""
    text = ("\n".join("  300 " + " ".join(tokens) for tokens in rows) + "\n").encode()
    fast = magma_rows.tokenize(text, [len(rows)])
    slow = magma_rows._read_slow(text)
    assert len(fast) == len(slow) == len(rows)
    for col in range(magma_rows.WIDTH):
        a = np.asarray(fast[col].astype(str).where(fast[col].notna(), "<NA>"))
        b = np.asarray(slow[col].astype(str).where(slow[col].notna(), "<NA>"))
        a_num = [_as_float(x) for x in a]
        b_num = [_as_float(x) for x in b]
        assert a_num == b_num, (col, a, b)


def _as_float(token: str) -> object:
    if token == "<NA>":
        return None
    try:
        value = float(token)
        return None if value != value else value
    except ValueError:
        return token


@SETTINGS
@given(st.text(max_size=2000))
def test_scan_handles_any_text(text: str) -> None:
    found = scan(text.encode("utf-8"))
    assert found.row_lines.size == found.row_block.size or found.orphan_rows


NUMBER = st.one_of(
    st.floats(0, 1e7, allow_nan=False).map(lambda v: f"{v:7.2f}"),
    st.sampled_from(["nan", "-nan", "inf", "0.00", "33822.46", "19735789.18"]),
)


@SETTINGS
@given(st.lists(st.tuples(st.integers(1, 5000), NUMBER, NUMBER, st.sampled_from(["", "ok", "failed"])), min_size=1, max_size=40), st.booleans())
def test_numeric_reader_equals_the_general_tokeniser(tmp_path: Path, rows: list[tuple[int, str, str, str]], with_check: bool) -> None:
    """The all-float fast paths (Arrow's tokens, numpy's loadtxt) and pandas' tokeniser give
    the same tidy rows."""
    import pandas as pd
    import pytest

    header = "% Usage: ./testing_dgemm_vbatched [options] [-h|--help]\n% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error\n"
    lines = []
    for size, gflops, ms, status in rows:
        tail = f"   1.00e-16   {status or 'ok'}" if with_check else "     ---"
        lines.append(f"  {300:10d} {size:5d} {size:5d} {size - 1:5d}   {gflops} ({ms})     ---   (  ---  ){tail}")
    path = tmp_path / "rows.out"
    path.write_text(header + "\n".join(lines) + "\n")
    fast = magma.read_tree([path]).rows
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(magma, "numeric_rows", lambda *a: None)  # the Arrow token matrix
        patch.setattr(magma, "read_numeric", lambda *a: None)  # numpy's loadtxt
        general = magma.read_tree([path]).rows
    pd.testing.assert_frame_equal(fast, general)
