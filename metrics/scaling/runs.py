"""Provides what every scaling analysis reads off a runs table first: its columns with defaults,
why each run is left out (`leave_out_reasons`), and the runs split by series (`group_runs`),
made once for all the tables of a study.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

KEYS = ["series", "resource_kind"]
ANALYSED = ("resources", "nodes", "time_s", "samples", "benchmark", "source", "status", "quality", "epochs", "converged",
            "quality_name", "quality_higher_is_better", "quality_target")
"""The runs' columns the analysis reads, besides the settings (`set_*`)."""


def column_of(runs: pd.DataFrame, name: str, default: object = np.nan) -> pd.Series:
    """The column `name`, or `default` in every row where the table has no such column."""
    return runs[name] if name in runs else pd.Series(default, index=runs.index, dtype=object if default is None else None)


def numbers(values: pd.Series) -> np.ndarray:
    """Floats, NaN where a value is not a number."""
    return pd.to_numeric(values, errors="coerce").to_numpy(float, na_value=np.nan)


def is_false(value: object) -> bool:
    """True only for a known False (not for NA / None / NaN)."""
    return isinstance(value, (bool, np.bool_)) and not value


def true_mask(values: pd.Series) -> pd.Series:
    """A known True (a bool, not NA / None / NaN) of every value, as booleans."""
    if isinstance(values.dtype, pd.BooleanDtype):
        return values.eq(True).fillna(False).astype(bool)
    return values.map(lambda v: isinstance(v, (bool, np.bool_)) and bool(v)).astype(bool)


def false_mask(values: pd.Series) -> pd.Series:
    """`is_false` of every value, as booleans (for the readers' nullable boolean column in one
    array operation)."""
    if isinstance(values.dtype, pd.BooleanDtype):
        return values.eq(False).fillna(False).astype(bool)
    return values.map(is_false).astype(bool)


def leave_out_reasons(runs: pd.DataFrame) -> pd.Series:
    """Why each run is left out of the timing statistics: "" when it counts, else its status
    (`aborted`, `failed`, `cancelled`, `timeout`), `not converged` or `no timing`."""
    status = column_of(runs, "status", "ok").fillna("ok").astype(str).tolist()
    not_converged = false_mask(column_of(runs, "converged", pd.NA)).tolist()
    time = numbers(column_of(runs, "time_s"))
    timed = (np.isfinite(time) & (time > 0)).tolist()
    reason = [s.replace("no-timing", "no timing") if s != "ok" else "not converged" if nc else "" if ok else "no timing"
              for s, nc, ok in zip(status, not_converged, timed)]
    return pd.Series(reason, index=runs.index, dtype=object)


@dataclass(frozen=True)
class Grouped:
    """The runs by (series, resource_kind), in key order, each group with `_reason` (why a run
    is left out, "" when it counts) and only the columns the analysis reads. Made once by
    `group_runs` and handed to every analysis of the same runs; without it each groups them."""

    groups: dict[tuple[str, str], pd.DataFrame]
    differing: dict[tuple[str, str], dict[str, dict[int, list[str]]]] = field(default_factory=dict, compare=False)
    """Per group: the settings that differ between its configurations (`analysis`), kept by the
    first analysis that finds them: the speedup table, the config diff and its sentences ask."""


def group_runs(runs: pd.DataFrame) -> Grouped:
    """`runs` split for the analysis (see `Grouped`)."""
    if runs is None or runs.empty:
        return Grouped({})
    wanted = [*ANALYSED, *settings_columns(runs)]
    kept = [c for c in dict.fromkeys(wanted) if c in runs and c not in KEYS]  # a group is a copy, column by column
    frame = runs[kept].assign(series=column_of(runs, "series", "").fillna("").astype(str), resource_kind=column_of(runs, "resource_kind", "?").fillna("?").astype(str),
                              _reason=leave_out_reasons(runs))
    return Grouped(dict(iter(frame.groupby(KEYS, sort=True))))


def groups_of(runs: pd.DataFrame, grouped: Grouped | None) -> dict[tuple[str, str], pd.DataFrame]:
    """The groups of `grouped`, or of `runs` split now."""
    return (grouped if grouped is not None else group_runs(runs)).groups


def settings_columns(runs: pd.DataFrame) -> list[str]:
    """The `set_*` columns: a run's settings (batch size, learning rate, accelerator ...)."""
    return [c for c in runs.columns if str(c).startswith("set_")]
