"""Provides `compare_tables`: two tables' rows matched on key columns, numeric columns' deltas.

The keys are given, or guessed: every column of both tables that holds no numbers (names,
configurations, labels). Rows whose keys repeat are matched in order of appearance. Each
numeric column of both tables gets the base value, the new value and the relative change.
A table is one value per cell, so there is no noise estimate: the verdict says so and names
the largest change.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable

NA = "n/a"
OCCURRENCE = "_occurrence"


def numeric(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]


def guess_keys(base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """The columns of both tables that hold no numbers; where they do not tell the baseline's
    rows apart, whole-number columns (batch size, nodes) are added, in order, until they do."""
    numbers = set(numeric(base)) | set(numeric(new))
    shared = [c for c in base.columns if c in new.columns]
    keys = [c for c in shared if c not in numbers]
    for column in shared:
        if not base.duplicated(subset=keys or None).any() if keys else False:
            break
        values = base[column]
        if column in numbers and not pd.api.types.is_float_dtype(values) or (
                column in numbers and np.isfinite(values.to_numpy(float)).all() and (values.to_numpy(float) % 1 == 0).all()):
            keys.append(column)
    return keys


def compare_tables(base: pd.DataFrame, new: pd.DataFrame, keys: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """Rows of both sides matched on `keys` (a `match` column: same, new, vanished) with, per
    numeric column C of both, `C base`, `C new`, `C change`; and the numeric columns compared.
    Raises KeyError naming a key missing from a side."""
    for key in keys:
        for side, frame in (("base", base), ("new", new)):
            if key not in frame.columns:
                raise KeyError(f"key column {clean(key)!r} is not in the {side} table (it has: {', '.join(map(clean, map(str, frame.columns)))})")
    values = [c for c in numeric(base) if c in set(numeric(new)) and c not in keys]
    sides = []
    for frame in (base, new):
        part = frame[list(keys) + values].copy()
        for key in keys:
            part[key] = part[key].astype(str)
        part[OCCURRENCE] = part.groupby(list(keys), sort=False).cumcount() if keys else np.arange(len(part))
        part["_position"] = np.arange(len(part))
        sides.append(part)
    on = [*keys, OCCURRENCE]
    merged = sides[1].merge(sides[0], on=on, how="outer", suffixes=(" new", " base"), indicator=True, sort=False)
    # the candidate's rows in its order, then what vanished in the baseline's (an outer merge sorts its keys)
    merged = merged.iloc[np.argsort(merged["_position new"].fillna(len(new) + merged["_position base"]).to_numpy(float), kind="stable")]
    merged = merged.reset_index(drop=True)
    merged["match"] = merged["_merge"].map({"both": "same", "left_only": "new", "right_only": "vanished"}).astype(str)
    out = merged[[*keys, "match"]].copy()
    for column in values:
        b, n = merged[f"{column} base"].astype(float), merged[f"{column} new"].astype(float)
        out[f"{column} base"], out[f"{column} new"] = b, n
        out[f"{column} change"] = (n / b - 1).where(b != 0)
    if not keys:
        out.insert(0, "row", merged[OCCURRENCE] + 1)
    return out, values


def largest_change(frame: pd.DataFrame, values: Sequence[str], keys: Sequence[str]) -> tuple[float, str] | None:
    """The largest relative change of any cell, and where (`column` at `key values`)."""
    best: tuple[float, str] | None = None
    for column in values:
        changes = frame[f"{column} change"].to_numpy(float)
        if not np.isfinite(changes).any():
            continue
        i = int(np.nanargmax(np.abs(changes)))
        if best is None or abs(changes[i]) > abs(best[0]):
            where = " ".join(str(frame.iloc[i][k]) for k in keys) if keys else f"row {frame.iloc[i]['row']}"
            best = (float(changes[i]), f"{column} at {where}")
    return best


def table_table(frame: pd.DataFrame, keys: Sequence[str], values: Sequence[str], guessed: bool) -> ResultTable:
    key_columns = [Column(k) for k in (keys or ["row"])]
    columns = [*key_columns, Column("match")]
    for column in values:
        columns += [Column(f"{column} base", fmt=".6g", missing=NA), Column(f"{column} new", fmt=".6g", missing=NA),
                    Column(f"{column} change", fmt="+.1%", missing=NA)]
    names = [c.key for c in columns]
    rows = tuple(tuple(v.item() if isinstance(v, np.generic) else (None if isinstance(v, float) and math.isnan(v) else v) for v in r)
                 for r in frame[names].itertuples(index=False, name=None))
    how = ("guessed from the columns that hold no numbers" if guessed else "given with --key") if keys else "none: rows matched in order"
    notes = (f"Rows matched on {', '.join(map(clean, keys)) or 'their position'} ({how}); repeated keys in order of appearance. "
             "Change is new / base - 1. One value per cell: no noise estimate.",)
    return ResultTable("Table: base against new", tuple(columns), rows, notes=notes, row_keys=tuple(k.key for k in key_columns))
