"""Property tests: the MAGMA reader never raises, and every row and skipped line is accounted for."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.magma import read as magma

SAMPLE = (Path(__file__).resolve().parents[2] / "examples/magma/azure/cyclecloud/gpu/size4/results/magma/magma-4n-53-iter-1.out").read_bytes()[:20000]
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


HEADER = b"% MAGMA 2.8.0\n% Usage: ./testing_dgemm [options]\n%   M     N     K   MAGMA Gflop/s (ms)   cuBLAS Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error   cuBLAS error\n"


def _expected(tokens: list[str]) -> list[float] | None:
    """What a row under HEADER holds, read by Python: three sizes and three (Gflop/s, ms)
    pairs, then what the tester checks (errors: numbers or `---`) and an optional status word;
    None: no data row. The reader fits its layout to rows that all have a column more or less
    than the header says (testers differ in how many errors they print), so the columns after
    the pairs are not pinned here: only that every value is a number Python reads."""
    words = " ".join(tokens).replace("(", " ").replace(")", " ").replace('"', " ").replace("'", " ").replace("#", " ").replace("%", " ").split()
    if words[-1:] in (["ok"], ["failed"]):
        words = words[:-1]
    if len(words) < 9:
        return None
    values = []
    for word in words:
        if len(word) > 1 and not word.strip("-"):
            values.append(float("nan"))
            continue
        try:
            values.append(float(word))
        except ValueError:
            return None
    return values


@SETTINGS
@given(st.lists(st.lists(ROW_TOKENS, min_size=1, max_size=14), min_size=1, max_size=30))
def test_rows_hold_what_python_reads(tmp_path: Path, rows: list[list[str]]) -> None:
    """Each line under a header is a data row with the numbers Python's float() reads from its
    fields (`(` and `)` are blanks, `---` is not run), or it is reported as not read: never
    other numbers."""
    lines = ["  300 " + " ".join(tokens) for tokens in rows]
    result = _read_bytes(tmp_path, HEADER + ("\n".join(lines) + "\n").encode())
    first = HEADER.count(b"\n") + 1
    unparsed = " ".join(f.message for f in result.findings)
    for i, line in enumerate(lines):
        got = result.rows[result.rows["line"] == first + i]
        expected = _expected(line.split())
        if expected is None or got.empty:
            assert got.empty or expected is not None
            continue
        m, n, k = expected[:3]
        assert got[["m", "n", "k"]].to_numpy(float).tolist() == [[m, n, k]] * len(got)
        pairs = dict(zip(["magma", "cublas", "cpu"], zip(expected[3:9:2], expected[4:9:2])))
        for impl, gflops, ms in got[["impl", "gflops", "time_ms"]].itertuples(index=False):
            assert (gflops, ms) == pytest.approx(pairs[impl], nan_ok=True)
    assert unparsed or len(result.rows) or not any(_expected(line.split()) for line in lines)
