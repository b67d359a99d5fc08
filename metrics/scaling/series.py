"""Provides how runs are grouped into series: one series is one machine running one benchmark.

A speedup curve compares a machine with more of itself. Runs of one benchmark on different
accelerators or with different frameworks are different machines, so by default a series is
keyed by (benchmark, accelerator, framework); `--series-by` picks other keys. Values are
compared with case and spacing normalised ("NGC Pytorch 23.09" is "NGC PyTorch 23.09"), and
every spelling of one value is replaced by its most common one, so tables show one spelling.

A series name is the benchmark and, where several series share it, the fewest key values
that tell them apart (`bert · NVIDIA RTX A5000 (gpus)`); `describe()` gives every key's value.
"""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

DEFAULT_KEYS = ("benchmark", "accelerator", "framework")
KNOWN_KEYS = ("benchmark", "accelerator", "framework", "org")
"""Keys `--series-by` accepts: the benchmark, and the settings that name the machine
(`set_accelerator`, `set_framework` from MLPerf's systems/*.json or a table's columns;
`set_org`, MLPerf's submitter)."""
SEPARATOR = " · "
_SPACE = re.compile(r"\s+")


def normalise(value: object) -> str:
    """The comparison form of a key value: case folded, runs of spaces as one; "" when unknown."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    return _SPACE.sub(" ", str(value)).strip().casefold()


def parse_keys(text: str | None) -> tuple[str, ...]:
    """`benchmark,accelerator` -> ("benchmark", "accelerator"); ValueError naming the keys
    allowed for an unknown or empty one. None gives the default keys."""
    if text is None:
        return DEFAULT_KEYS
    keys = tuple(dict.fromkeys(k.strip().lower() for k in text.split(",")))
    bad = [k for k in keys if k not in KNOWN_KEYS]
    if not keys or bad or "" in keys:
        shown = ", ".join(repr(k) for k in bad if k) or "an empty key"
        raise ValueError(f"--series-by: {shown} is not a key; use a comma list of {', '.join(KNOWN_KEYS)}")
    return keys


def _column(key: str) -> str:
    return "benchmark" if key == "benchmark" else f"set_{key}"


def _canonical(values: pd.Series) -> pd.Series:
    """Every spelling replaced by the most common spelling of its normalised form (ties: the
    first seen), so "NGC Pytorch 23.09" and "NGC PyTorch 23.09" print one way. Each distinct
    value is looked at once (a study repeats a few thousands of times)."""
    known = values.dropna()
    if known.empty:
        return values
    try:
        seen = Counter((type(v), v) for v in known.tolist())  # 1 and 1.0 are equal keys but print differently
    except TypeError:  # an unhashable cell: each value by itself
        seen = None
    cells = seen.items() if seen is not None else [((type(v), v), 1) for v in known.tolist()]
    counts: Counter[str] = Counter()
    for (_type, v), n in cells:
        counts[_SPACE.sub(" ", str(v)).strip()] += n
    best: dict[str, str] = {}
    for spelling, n in counts.items():
        key = spelling.casefold()
        if key not in best or n > counts[best[key]]:
            best[key] = spelling
    if seen is None:
        return values.map(lambda v: best.get(normalise(v), v) if normalise(v) else v)
    replaced = {key: best.get(normalise(key[1]), key[1]) if normalise(key[1]) else key[1] for key in seen}
    return pd.Series([replaced.get((type(v), v), v) for v in values.tolist()], index=values.index, name=values.name)


def _shown(key: str, value: object, level: int = 2) -> str:
    """A key value in a series name: level 0 the first word with a digit up to its first '-'
    (`H100`, `A5000`), 1 the first word (`PyTorch`), 2 the whole value."""
    text = _SPACE.sub(" ", str(value)).strip() if normalise(value) else ""
    if not text:
        return f"{key} unknown"
    words = text.split(" ")
    if level == 0:
        return next((w.split("-")[0] for w in words if any(c.isdigit() for c in w) and w.split("-")[0]), text)
    return words[0] if level == 1 else text


def _level(key: str, values: list[object]) -> int:
    """The shortest form (see `_shown`) that keeps these values apart."""
    distinct = {normalise(v): v for v in values}
    for level in (0, 1):
        if len({_shown(key, v, level).casefold() for v in distinct.values()}) == len(distinct):
            return level
    return 2


def assign(runs: pd.DataFrame, keys: tuple[str, ...] = DEFAULT_KEYS) -> pd.DataFrame:
    """`runs` with `series` set from `keys` (a copy; key columns with one spelling per value).
    Runs with no benchmark are named by their format, as the readers do."""
    if runs is None or runs.empty:
        return runs
    out = runs.copy()
    for key in keys:
        column = _column(key)
        if column in out and key != "benchmark":
            out[column] = _canonical(out[column])
    fallback = out["format"] if "format" in out else pd.Series("runs", index=out.index)
    values = {k: (out[_column(k)] if _column(k) in out else pd.Series(None, index=out.index, dtype=object)) for k in keys}
    normal: dict[tuple[type, object], str] = {}  # a study repeats a few values thousands of times: each normalised once

    def norm(v: object) -> str:
        key = (type(v), v)  # 1 and 1.0 and True are equal keys but print differently
        try:
            return normal[key] if key in normal else normal.setdefault(key, normalise(v))
        except TypeError:  # an unhashable cell
            return normalise(v)

    if "benchmark" in values:  # a run with no benchmark is named, and kept apart, by its format
        named = [norm(v) != "" for v in values["benchmark"].tolist()]
        values["benchmark"] = values["benchmark"].astype(object).where(named, fallback)
    # positional lists, one pass each: indexing or iterating a Series cell by cell costs more than the work
    kinds = (out["resource_kind"].fillna("unknown").astype(str) if "resource_kind" in out else pd.Series("unknown", index=out.index)).tolist()
    listed = {k: values[k].tolist() for k in keys}
    groups = list(zip(*(map(norm, listed[k]) for k in keys)))
    first = {g: i for i, g in reversed(list(enumerate(groups)))}  # the first run of each group names it
    names: dict[tuple[str, ...], str] = {}
    by_head: dict[str, list[tuple[str, ...]]] = {}
    for g in first:
        by_head.setdefault(g[0], []).append(g)
    for peers in by_head.values():
        chosen = [0]  # the first key always names the series; others only where they tell peers apart
        for j in range(1, len(keys)):
            if len({tuple(g[k] for k in chosen) for g in peers}) == len(peers):
                break
            if len({g[j] for g in peers}) > 1:
                chosen.append(j)
        levels = {j: _level(keys[j], [listed[keys[j]][first[g]] for g in peers]) if j else 2 for j in chosen}
        for g in peers:
            i = first[g]
            parts = []
            for j in chosen:
                v = listed[keys[j]][i]
                parts.append(_shown(keys[j], v, levels[j]))
            names[g] = SEPARATOR.join(parts)
    out["series"] = [f"{names[g]} ({k})" for g, k in zip(groups, kinds)]
    return out


def describe(runs: pd.DataFrame, keys: tuple[str, ...] = DEFAULT_KEYS) -> list[str]:
    """The split, in words: `series split by benchmark, accelerator, framework`, then per series
    the value of every key that its name leaves out."""
    lines = [f"series split by {', '.join(keys)} (--series-by KEYS regroups: {', '.join(KNOWN_KEYS)})"]
    if runs is None or runs.empty:
        return lines
    for series, group in runs.groupby("series", sort=True):
        parts = []
        for key in keys:
            column = _column(key)
            if key == "benchmark" or column not in group:
                continue
            shown = sorted(text for text in {str(v) for v in group[column].dropna().tolist()} if normalise(text))  # each distinct text once
            if shown and not all(s in str(series) for s in shown):
                parts.append(f"{key} {' | '.join(shown)}")
        if parts:
            lines.append(f"{series}: {'; '.join(parts)}")
    return lines
