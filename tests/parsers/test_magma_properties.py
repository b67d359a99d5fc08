"""Property tests: the MAGMA reader never raises, and every row and skipped line is accounted for."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.magma import read as magma
from gpuscope.parsers.magma import layout as fmt
from gpuscope.parsers.magma.lines import tokenize

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


@SETTINGS
@given(st.lists(st.lists(ROW_TOKENS, min_size=0, max_size=40), min_size=1, max_size=30))
def test_tokens_are_what_python_splits(rows: list[list[str]]) -> None:
    """The numpy tokeniser finds, row by row, the tokens Python's split finds once `(` and `)`
    are blanks, and reads as numbers exactly those float() reads (`---`, words, status apart)."""
    text = ("\n".join("  " + " ".join(tokens) for tokens in rows) + "\n").encode()
    ends = [i for i, b in enumerate(text) if b == 10]
    starts = [0] + [e + 1 for e in ends[:-1]]
    tokens = tokenize(text, np.array(starts, np.int64), np.array(ends, np.int64))
    for i, (a, b) in enumerate(zip(starts, ends)):
        expected = text[a:b].replace(b"(", b" ").replace(b")", b" ").replace(b'"', b" ").replace(b"'", b" ").replace(b"#", b" ").replace(b"%", b" ").split()
        assert tokens.count[i] == len(expected)
        for j, word in enumerate(expected):
            k = tokens.first[i] + j
            kind, value = tokens.kind[k], tokens.value[k]
            if word in (b"ok", b"failed"):
                assert kind == (fmt.OK if word == b"ok" else fmt.FAILED)
            elif word.startswith(b"--"):
                assert kind == fmt.DASHES
            elif kind == fmt.NUMBER:
                assert value == float(word) or (np.isnan(value) and np.isnan(float(word)))
            else:
                assert kind == fmt.WORD
                try:
                    float(word)
                except ValueError:
                    continue
                assert word[-1:] not in b"0123456789."  # a number that does not end like one counts as a word


def test_batches_give_the_rows_of_one_pass(monkeypatch) -> None:
    """Files read a few at a time on two threads give the rows one batch of all gives."""
    from paths import EXAMPLES

    whole = magma.read_tree([EXAMPLES]).rows
    monkeypatch.setattr(magma, "BATCH_BYTES", 20_000)  # about one file a batch
    batched = magma.read_tree([EXAMPLES]).rows
    import pandas as pd

    pd.testing.assert_frame_equal(whole, batched)
