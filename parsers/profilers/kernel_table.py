"""Provides the canonical per-launch kernel table every profiler reader returns.

One row per kernel launch (or per summary line where a format only has summaries):
`source, device, stream, kernel, start_ns, duration_ns, flops, bytes, op, direction`
(`kernel` is categorical: a few hundred names over millions of launches).
Unknown values are null (<NA>), never 0, so an efficiency is never computed from a made-up
number; each reader also says which fields its format cannot provide at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead

KERNEL_COLUMNS = ("source", "device", "stream", "kernel", "start_ns", "duration_ns", "flops", "bytes", "op", "direction")
DTYPES = {
    "source": "string", "device": "string", "stream": "Int64", "kernel": "category",
    "start_ns": "Int64", "duration_ns": "Float64", "flops": "Float64", "bytes": "Float64",
    "op": "string", "direction": "string",
}
_RESOLVED = {name: pd.api.types.pandas_dtype(dtype) for name, dtype in DTYPES.items()}
"""DTYPES as dtype objects, looked up once: given a name, pandas tries it against every
registered dtype (~0.1 M instructions a time), and every profile read types ten columns."""
_STRING = _RESOLVED["op"]  # the string dtype


@dataclass(frozen=True)
class KernelRead:
    """What a profiler reader returns."""

    table: pd.DataFrame
    """KERNEL_COLUMNS (plus any format-specific extra columns after them), nullable dtypes."""
    findings: list[Finding] = field(default_factory=list)
    unavailable: tuple[str, ...] = ()
    """Canonical fields this format cannot provide (e.g. nvprof summaries have no start_ns)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Facts from the file itself, e.g. {'gpu_name': 'A100-SXM4-40GB', 'peak_gbs': 1555.2}."""


def canonical(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """`frame` with every canonical column present (missing ones null), in order, typed;
    extra columns are kept after them. Built in one go: a column set at a time costs pandas a
    copy each, and every profile read passes here. The typed columns go in as arrays under one
    index: given Series, pandas would align their indexes, a third of the work on small files.
    Extra columns stay Series: an object column given as an array would be re-inferred as str."""
    frame = frame.reset_index(drop=True)
    rows = len(frame)
    columns: dict[str, Any] = {name: (_typed(frame[name], dtype) if name in frame else _nulls(rows, dtype)).array for name, dtype in _RESOLVED.items()}
    if "source" not in frame or frame["source"].isna().all():
        columns["source"] = pd.Series(source, index=pd.RangeIndex(rows), dtype=_STRING).array
    columns.update((name, frame[name]) for name in frame.columns if name not in DTYPES)
    return pd.DataFrame(columns, index=pd.RangeIndex(rows))


def _typed(values: pd.Series, dtype: Any) -> pd.Series:
    if isinstance(dtype, pd.CategoricalDtype):  # millions of launches, a few hundred names: codes, not strings
        return values.astype(_STRING).astype(dtype)
    if values.dtype == dtype:
        return values
    if isinstance(dtype, pd.StringDtype):
        return values.astype(dtype)
    return pd.to_numeric(values, errors="coerce").astype(dtype)


def _nulls(rows: int, dtype: Any) -> pd.Series:
    """A column of `rows` nulls, made whole (a list of a million `pd.NA` takes pandas ~0.2 s)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.Series(pd.Categorical.from_codes(np.full(rows, -1, dtype=np.int8), dtype=pd.CategoricalDtype(pd.Index([], dtype=_STRING))))
    return pd.Series(pd.NA, index=pd.RangeIndex(rows), dtype=dtype)


def empty(source: str) -> pd.DataFrame:  # noqa: ARG001 - no row to name a source in
    """The canonical table with no rows: a copy of one built once (a failed or kernel-less read
    asks for one, and building the ten typed columns costs more than reading a small file)."""
    return _empty().copy()


@functools.cache
def _empty() -> pd.DataFrame:
    return canonical(pd.DataFrame(), "")


FILE_META = ("rows", "kernels", "unavailable")
"""What `file_read` adds to a profile's facts in `FileRead.meta` (and `kernel_read` takes off)."""


def file_read(got: KernelRead) -> FileRead:
    """A profiler reader's result as the registry's one result type: the facts of the file
    (`gpu_name`, `format`...) in `meta`, with the row and kernel counts and `unavailable`."""
    meta: dict[str, Any] = {**got.meta, "rows": len(got.table), "unavailable": got.unavailable}
    if "kernel" in got.table:
        meta["kernels"] = int(got.table["kernel"].nunique())
    return FileRead(got.table, list(got.findings), meta)


def kernel_read(got: FileRead, drop: tuple[str, ...] = ()) -> KernelRead:
    """The kernel table back from `file_read`'s FileRead (`drop`: more meta keys to leave out,
    such as the registry's `kind` and `reason`); a read that failed is an empty table."""
    table = got.table if got.table is not None else empty("unknown")
    meta = {k: v for k, v in got.meta.items() if k not in FILE_META and k not in drop}
    return KernelRead(table, list(got.findings), tuple(got.meta.get("unavailable", ())), meta)
