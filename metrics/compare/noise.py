"""Provides the noise test of a comparison and the words said about it.

Each compared item (a kernel, a MAGMA size, a scaling configuration) has a sample on each side:
one value per run. With at least two values on each side, a two-sided Mann-Whitney U test
(`metrics.distribution.mann_whitney`) gives a p-value, Holm-corrected over every item of the
table (`metrics.magma.stats.holm`); a change is "beyond noise" when the corrected p is below
ALPHA. With fewer values there is no noise estimate, and the verdict says so instead of
guessing. A few runs cannot reach ALPHA at all (3 against 3: p is at least 0.1): the
verdict names the smallest p those counts allow.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from gpuscope.metrics.distribution import mann_whitney
from gpuscope.metrics.magma.stats import ALPHA, holm

SLOWER = "slower beyond noise"
FASTER = "faster beyond noise"
WITHIN = "within noise"
SINGLE = "single run: no noise estimate"
ONE_SIDE = "one run on a side: no noise estimate"
NEW = "new"
GONE = "vanished"
UNTESTED = "no values to compare"


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p an exact Mann-Whitney test of m and n values can give."""
    if m < 1 or n < 1:
        return math.nan
    return min(1.0, 2 / math.comb(m + n, m))


def p_values(base: Sequence[np.ndarray], new: Sequence[np.ndarray]) -> np.ndarray:
    """Per item, the raw p-value of base[i] against new[i]; NaN where a side has under two values."""
    out = np.full(len(base), np.nan)
    for i, (a, b) in enumerate(zip(base, new)):
        a, b = np.asarray(a, float), np.asarray(b, float)
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        if a.size >= 2 and b.size >= 2:
            out[i] = mann_whitney(a, b)
    return out


def verdicts(slowdown: np.ndarray, p_raw: np.ndarray, base_n: np.ndarray, new_n: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Holm-corrected p-values and one verdict per item. `slowdown`: how much slower the
    candidate is (0.1: 10 % slower, negative: faster; NaN: not computable); `base_n`, `new_n`:
    values per side (0 on a side: the item is new or vanished)."""
    p = holm(np.asarray(p_raw, float))
    tested = np.isfinite(np.asarray(p_raw, float))
    # Holm multiplies the smallest p by the number of tests: no adjusted p falls below that
    floors = [smallest_p(int(m), int(n)) for m, n, t in zip(base_n, new_n, tested) if t]
    family_floor = min(floors) * len(floors) if floors else math.nan
    words = []
    for s, q, m, n in zip(slowdown, p, base_n, new_n):
        if m == 0 and n == 0:
            words.append(UNTESTED)
        elif m == 0:
            words.append(NEW)
        elif n == 0:
            words.append(GONE)
        elif m < 2 and n < 2:
            words.append(SINGLE)
        elif m < 2 or n < 2:
            words.append(ONE_SIDE)
        elif not math.isfinite(q) or not math.isfinite(s):
            words.append(UNTESTED)
        elif q < ALPHA and s != 0:
            words.append(SLOWER if s > 0 else FASTER)
        else:
            if smallest_p(int(m), int(n)) >= ALPHA:
                reach = f"; {m} and {n} values cannot reach p < {ALPHA}"
            elif family_floor >= ALPHA:
                reach = f"; over {len(floors)} tests, Holm's correction keeps every p at {family_floor:.2g} or more"
            else:
                reach = ""
            words.append(f"{WITHIN} (p = {q:.2g}{reach})")
    return p, words


def beyond(verdict: str, slowdown: float, pct: float | None) -> bool:
    """Slower beyond noise, and by more than `pct` percent when given."""
    if verdict != SLOWER:
        return False
    return pct is None or (math.isfinite(slowdown) and slowdown * 100 > pct)


def test_note(items: str, tested: int, unit: str = "run") -> str:
    """The note under a table that says how its verdicts were made; `unit`: what one value is."""
    return (f"Noise test: two-sided Mann-Whitney U on one value per {unit}, Holm-corrected over the {tested} {items} "
            f"tested; 'beyond noise' when p < {ALPHA}. An item with one {unit} on a side has no noise estimate.")


def percent(change: float) -> str:
    """+31 %, -4.2 %: a change said the same way in every verdict."""
    if not math.isfinite(change):
        return "n/a"
    value = change * 100
    return f"{value:+.0f} %" if abs(value) >= 10 else f"{value:+.1f} %"
