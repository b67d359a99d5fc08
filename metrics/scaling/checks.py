"""Provides the checks that keep a scaling point honest: which topology a point ran on, when an
efficiency is super-linear or too high to be one machine's scaling, and percentages printed
beside a threshold without rounding onto its other side.

- Topology: 8 GPUs on 1 node x 8 and on 2 nodes x 4 are different machines (NVLink against the
  network); where one resource count was run on several, each is its own point.
- Efficiency above SUPERLINEAR (100 %) happens (caches, a slow baseline) and is said; above
  IMPLAUSIBLE (150 %) it is taken as two machines in one series, not a result.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuscope.metrics.scaling.series import KNOWN_KEYS

SUPERLINEAR = 1.0
IMPLAUSIBLE = 1.5
MACHINE_SETTINGS = ("set_accelerator", "set_framework", "set_org", "set_division", "set_code_version")
"""Settings that name the machine or its software, said first when a point is implausible."""


def percent(value: float, threshold: float | None = None, decimals: int = 0) -> str:
    """`74.89%` style text of a fraction, with the fewest decimals (at least `decimals`) that
    keep it on its own side of `threshold`: 0.7489 against 0.75 is `74.9%`, never `75%`;
    `n/a` when it is not a number."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    value = float(value)
    for places in range(decimals, 7):
        text = f"{value * 100:.{places}f}"
        if threshold is None:
            break
        shown = float(text) / 100
        if (shown < threshold) == (value < threshold) and (shown > threshold) == (value > threshold):
            break
    return f"{text}%"


def _count(value: object) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def topology(nodes: object, resources: object, kind: str) -> str:
    """`2 nodes x 4` for GPUs or processes spread over nodes; "" when the nodes are unknown or
    the resources are not counted per node."""
    n, r = _count(nodes), _count(resources)
    if kind not in ("gpus", "processes") or n is None or r is None or r % n:
        return ""
    return f"{n} node{'s' if n > 1 else ''} x {r // n}"


def topologies(group: pd.DataFrame, kind: str) -> pd.Series:
    """Per run of one series: its topology where its resource count was run on more than one
    (else ""), so only a real mix splits a point."""
    if "nodes" not in group or kind not in ("gpus", "processes"):  # only those are counted per node
        return pd.Series("", index=group.index, dtype=object)
    pairs = list(zip(group["nodes"].tolist(), group["resources"].tolist()))
    try:
        label_of = {pair: topology(*pair, kind) for pair in dict.fromkeys(pairs)}  # thousands of runs, a few configurations
        labels = pd.Series([label_of[pair] for pair in pairs], index=group.index, dtype=object)
    except TypeError:  # NA cannot be compared: each run by itself
        labels = pd.Series([topology(n, r, kind) for n, r in pairs], index=group.index, dtype=object)
    mixed = labels[labels != ""].groupby(group["resources"][labels != ""]).nunique()
    split = set(mixed[mixed > 1].index)
    return labels.where(group["resources"].isin(split), "")


def topology_nodes(label: str) -> int:
    """The node count of a `topology()` label (0 for "": the usual, unsplit point)."""
    return int(label.split(" ", 1)[0]) if label else 0


def efficiency_verdict(efficiency: float) -> str:
    """"" for an efficiency up to 100 %, `superlinear` above, `implausible` above 150 %."""
    if not np.isfinite(efficiency):
        return ""
    if efficiency > IMPLAUSIBLE:
        return "implausible"
    return "superlinear" if efficiency > SUPERLINEAR else ""


def implausible_note(efficiency: float, differing: dict[str, dict[int, list[str]]], label, base: int, at: int, kind_unit) -> str:
    """Why a point's speedup is not given: the efficiency and what differs between the
    baseline and the point (machine settings first), or that nothing in the logs does; and
    the `--series-by` keys that would split the two apart, where one differs."""
    parts, keys = [], []
    ordered = sorted(differing, key=lambda c: (c not in MACHINE_SETTINGS, c))
    for column in ordered:
        values = differing[column]
        mine, theirs = values.get(at, []), values.get(base, [])
        if mine and theirs and mine != theirs:
            parts.append(f"{label(column)} {' | '.join(theirs)} at {base} {kind_unit(base)}, {' | '.join(mine)} at {at} {kind_unit(at)}")
            keys.append(column.removeprefix("set_"))
    shown = percent(efficiency, IMPLAUSIBLE)
    if parts:
        what = "; ".join(parts[:3]) + (f"; and {len(parts) - 3} more" if len(parts) > 3 else "")
        split = ["benchmark", *(k for k in KNOWN_KEYS if k in keys)]
        hint = f" (--series-by {','.join(split)} splits it)" if len(split) > 1 else ""
        return f"efficiency {shown} is above {percent(IMPLAUSIBLE)}: not one machine's scaling ({what}); speedup not given{hint}"
    return f"efficiency {shown} is above {percent(IMPLAUSIBLE)}: not one machine's scaling, though the logs show no setting that differs (a slow baseline?); speedup not given"
