"""columns.changed: whether each row differs from the one before, nested lists and structs
compared item by item, as Python compares the rows' values (a null against a value differs,
two nulls do not, NaN differs from NaN); the same whether the lists all have one length (rows
compared as consecutive slices) or not, and from one chunk or several."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording.columns import changed

KIND = pa.struct([("kind", pa.string()), ("limit", pa.int64()), ("share", pa.float64()),
                  ("gpus", pa.list_(pa.struct([("index", pa.int16()), ("uuid", pa.string())]))), ("evidence", pa.list_(pa.string()))])


def _scope(kind="job", limit=1, share=0.5, gpus=((0, "a"), (1, "b")), evidence=("x", "y")):
    return {"kind": kind, "limit": limit, "share": share, "gpus": [{"index": i, "uuid": u} for i, u in gpus], "evidence": list(evidence)}


def _expected(rows: list) -> list[bool]:
    return [True] + [rows[i] != rows[i - 1] for i in range(1, len(rows))]


SAME_LENGTHS = [_scope(), _scope(), _scope(gpus=((0, "a"), (1, "c"))), _scope(gpus=((0, "a"), (1, "c"))), _scope(limit=2),
                _scope(evidence=("x", "z")), _scope(evidence=("x", "z")), _scope(share=math.nan), _scope(share=math.nan), None, None,
                _scope(kind=None), _scope(kind=None), _scope()]
OTHER_LENGTHS = SAME_LENGTHS + [_scope(gpus=((0, "a"),)), _scope(gpus=((0, "a"),)), _scope(gpus=()), _scope(evidence=()), _scope()]


@pytest.mark.parametrize("rows", [SAME_LENGTHS[:9], SAME_LENGTHS, OTHER_LENGTHS], ids=["every list one length", "null rows", "lists of other lengths"])
def test_changed_is_a_python_comparison_of_each_row_with_the_one_before(rows: list) -> None:
    array = pa.array(rows, KIND)
    assert changed(array).tolist() == _expected(array.to_pylist())
    assert changed(pa.chunked_array([array.slice(0, 5), array.slice(5)])).tolist() == _expected(array.to_pylist())
    assert changed(array.slice(3)).tolist() == _expected(array.to_pylist()[3:])  # a slice's lists start past their values' first


def test_changed_over_a_real_recordings_scopes() -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "recordings" / "v4.gsrec"
    if not path.exists():
        pytest.skip("no recording")
    scope = recording.read(path).table.column("scope")
    np.testing.assert_array_equal(changed(scope), _expected(scope.to_pylist()))
