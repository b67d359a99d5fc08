"""Golden rows: every data row of the real MAGMA outputs, as the reader reads them today.

A change to the reader that changes any row, value or flag fails here; when the change is
meant, regenerate the files and name each difference in the commit:

    python tests/test_magma_golden.py --update

The golden files were first written by the rewritten reader after comparing it,
file by file, with the reader it replaced (the same rows and values; the differences were
the new `impl` rows, `untrusted` exclusions, and lines that do not fit their header).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from gpuscope.parsers.magma import read as magma
from paths import EXAMPLES, SHARED_MAGMA

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "magma_golden"
TREES = {"examples": EXAMPLES, "shared": SHARED_MAGMA / "experiments"}
COLUMNS = ["file", "line", "impl", "test", "problem_size", "gflops", "time_ms", "magma_error", "cublas_error", "status",
           "device", "environment", "nodes", "warmup", "impossible", "untrusted", "excluded"]


def golden_rows(tree: Path) -> pd.DataFrame:
    rows = magma.read_tree([tree]).rows
    frame = rows[[c for c in COLUMNS if c in rows]].copy()
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(str)
    return frame.reset_index(drop=True)


def _read(name: str) -> pd.DataFrame:
    frame = pd.read_csv(GOLDEN / f"{name}.csv.gz", keep_default_na=False, na_values=[""], dtype={"status": str, "excluded": str})
    for name in ("status", "excluded"):
        frame[name] = frame[name].fillna("")
    return frame


@pytest.mark.parametrize("name", list(TREES))
def test_real_outputs_read_as_the_golden_rows(name: str) -> None:
    tree = TREES[name]
    if not tree.is_dir():
        pytest.skip(f"{tree} is absent")
    got = golden_rows(tree)
    want = _read(name)
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for column in want.columns:
        a, b = got[column], want[column]
        if pd.api.types.is_float_dtype(b) or pd.api.types.is_float_dtype(a):
            assert ((a.astype(float) == b.astype(float)) | (a.isna() & b.isna())).all(), column
        else:
            assert (a.astype(str).str.replace("<NA>", "nan") == b.astype(str)).all(), column


if __name__ == "__main__" and "--update" in sys.argv:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, tree in TREES.items():
        if tree.is_dir():
            golden_rows(tree).to_csv(GOLDEN / f"{name}.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})
            print(f"wrote {GOLDEN / name}.csv.gz")
