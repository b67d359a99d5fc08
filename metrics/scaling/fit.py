"""Provides the scaling laws and their fits: speedup, efficiency, Karp-Flatt, Gustafson,
an Amdahl fit with a bootstrap interval, and the Karp-Flatt trend in words.

Every formula is relative to a baseline configuration `p0` (the smallest one measured,
not necessarily 1): `p_rel = p / p0`, `S = T(p0) / T(p)`.

- strong scaling: efficiency `E = S / p_rel`; Amdahl `S = 1 / (f + (1 - f) / p_rel)`;
  Karp-Flatt `e = (1/S - 1/p_rel) / (1 - 1/p_rel)` for `p_rel > 1`.
- weak scaling: scaled speedup `S_w = p_rel * T(p0) / T(p)`, efficiency `T(p0) / T(p)`;
  Gustafson `S_w = p_rel - a (p_rel - 1)`, so `a = (p_rel - S_w) / (p_rel - 1)`.

A value that cannot be computed is NaN. The Karp-Flatt trend's rank correlation (Spearman's rho,
the Pearson correlation of the ranks) is pandas', so printing a study loads no scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

MIN_FIT_POINTS = 3
"""An Amdahl fit or a Karp-Flatt trend needs at least this many distinct configurations
(for the trend: this many Karp-Flatt values, so the baseline plus three)."""
N_BOOT = 500
SEED = 0
POOR_R2 = 0.9
SUPERLINEAR = 1.05
"""Efficiency above this is super-linear: Amdahl's law cannot describe it."""
FLAT_ABS = 0.01
FLAT_REL = 0.25
"""Karp-Flatt values all within max(FLAT_ABS, FLAT_REL * median) of their median: "roughly constant"."""


def speedup(t0: float | np.ndarray, t: float | np.ndarray) -> np.ndarray:
    """`T(p0) / T(p)`; NaN where a time is not finite or not positive."""
    t0, t = np.asarray(t0, float), np.asarray(t, float)
    ok = np.isfinite(t0) & np.isfinite(t) & (t0 > 0) & (t > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, t0 / np.where(ok, t, 1.0), np.nan)


def karp_flatt(s: float | np.ndarray, p_rel: float | np.ndarray) -> np.ndarray:
    """Karp-Flatt experimentally determined serial fraction; NaN at and below the baseline
    (`p_rel <= 1`) or where the speedup is unknown."""
    s, p_rel = np.asarray(s, float), np.asarray(p_rel, float)
    ok = np.isfinite(s) & (s > 0) & np.isfinite(p_rel) & (p_rel > 1)
    s_, p_ = np.where(ok, s, 1.0), np.where(ok, p_rel, 2.0)
    return np.where(ok, (1.0 / s_ - 1.0 / p_) / (1.0 - 1.0 / p_), np.nan)


def gustafson_serial(scaled: float | np.ndarray, p_rel: float | np.ndarray) -> np.ndarray:
    """Gustafson's serial fraction `a = (p_rel - S_w) / (p_rel - 1)` from the scaled speedup;
    NaN at and below the baseline."""
    scaled, p_rel = np.asarray(scaled, float), np.asarray(p_rel, float)
    ok = np.isfinite(scaled) & np.isfinite(p_rel) & (p_rel > 1)
    p_ = np.where(ok, p_rel, 2.0)
    return np.where(ok, (p_ - np.where(ok, scaled, 0.0)) / (p_ - 1.0), np.nan)


def amdahl_speedup(p_rel: float | np.ndarray, f: float) -> np.ndarray:
    """Amdahl's speedup at `p_rel` times the baseline's resources, serial fraction `f`."""
    p_rel = np.asarray(p_rel, float)
    return 1.0 / (f + (1.0 - f) / p_rel)


@dataclass(frozen=True, slots=True)
class AmdahlFit:
    """Amdahl's serial fraction (of the baseline configuration's time) with a bootstrap
    interval; NaN with a `note` when it cannot be fitted."""

    serial_fraction: float
    low: float
    high: float
    n_points: int
    note: str = ""
    r_squared: float = math.nan
    max_speedup: float = math.nan
    """`1 / f` relative to the baseline (inf when f = 0)."""

    def text(self) -> str:
        """`serial fraction 0.050 (95 % interval 0.041-0.060), from 5 configurations` or the note."""
        if not math.isfinite(self.serial_fraction):
            return self.note or "n/a"
        interval = f" (95 % interval {self.low:.3f}-{self.high:.3f})" if math.isfinite(self.low) else ""
        out = f"serial fraction {self.serial_fraction:.3f}{interval}, from {self.n_points} configurations"
        return f"{out}; {self.note}" if self.note else out


def _fit_f(p_rel: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Least-squares Amdahl serial fraction, clamped to [0, 1], of each row of `s` (speedups
    at `p_rel`; one row, or one per bootstrap replicate); NaN for a row with a speedup that is
    not finite and positive.

    The fit is made on the normalised time `1/S = T(p)/T(p0) = f + (1 - f)/p_rel`, the
    quantity a run measures. That is linear in f (`1/S - 1/p_rel = f (1 - 1/p_rel)`), so the
    least-squares f has a closed form: no iteration, nothing that fails to converge, and every
    replicate of a bootstrap in one array expression. f is one parameter and the squared error
    is a parabola in it, so clamping the unconstrained minimum to [0, 1] gives the constrained
    minimum exactly."""
    s = np.atleast_2d(np.asarray(s, float))
    ok = np.all(np.isfinite(s) & (s > 0), axis=-1)
    v = 1.0 - 1.0 / p_rel
    vv = float(np.dot(v, v))
    if vv <= 0:
        return np.full(s.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = 1.0 / np.where(ok[:, None], s, 1.0) - 1.0 / p_rel
    return np.where(ok, np.clip(u @ v / vv, 0.0, 1.0), np.nan)


def amdahl_fit(summary: pd.DataFrame, times: Mapping[int, Sequence[float]] | None = None, *, n_boot: int = N_BOOT, seed: int = SEED) -> AmdahlFit:
    """Amdahl fit on one series of `summarize()` (its rows with a speedup). `times` maps
    resources to the used runs' times; the interval resamples runs within each configuration
    (seeded, so the same data give the same interval). With one run per configuration (or no
    `times`) the interval resamples the fit's residuals instead, and says so."""
    rows = summary[np.isfinite(summary["speedup"].to_numpy(float))] if len(summary) else summary
    n = int(len(rows))
    if n and "scaling" in rows and (rows["scaling"] == "weak").all():
        return AmdahlFit(math.nan, math.nan, math.nan, n, "weak scaling: Amdahl's law is for strong scaling; see Gustafson's serial fraction")
    if n < MIN_FIT_POINTS:
        return AmdahlFit(math.nan, math.nan, math.nan, n, f"{n} configuration{'' if n == 1 else 's'} with a speedup: an Amdahl fit needs {MIN_FIT_POINTS}")
    resources = rows["resources"].to_numpy(float)
    base = float(rows["baseline_resources"].iloc[0])
    p_rel = resources / base
    s = rows["speedup"].to_numpy(float)
    f = float(_fit_f(p_rel, s)[0])
    if not math.isfinite(f):
        return AmdahlFit(math.nan, math.nan, math.nan, n, "the Amdahl fit did not converge")
    fitted = amdahl_speedup(p_rel, f)
    ss_tot = float(np.sum((s - s.mean()) ** 2))
    r2 = 1.0 - float(np.sum((s - fitted) ** 2)) / ss_tot if ss_tot > 0 else math.nan
    notes = []
    rng = np.random.default_rng(seed)
    samples = _run_samples(resources, times)
    if samples is not None and np.any(p_rel == 1.0):
        boot = _boot_runs(p_rel, samples, rng, n_boot)
    else:
        notes.append("one run per configuration: interval from the fit's residuals")
        boot = _boot_residuals(p_rel, s, fitted, rng, n_boot)
    boot = boot[np.isfinite(boot)]
    low, high = (float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))) if boot.size else (math.nan, math.nan)
    efficiency = s / p_rel
    if np.any(efficiency > SUPERLINEAR):
        where = ", ".join(f"{r:g}" for r in resources[efficiency > SUPERLINEAR])
        notes.append(f"super-linear speedup at {where}: Amdahl's law cannot describe it")
    if math.isfinite(r2) and r2 < POOR_R2:
        notes.append(f"Amdahl fit poor (R² {r2:.2f})")
    return AmdahlFit(f, low, high, n, "; ".join(notes), r2, 1.0 / f if f > 0 else math.inf)


def _run_samples(resources: np.ndarray, times: Mapping[int, Sequence[float]] | None) -> list[np.ndarray] | None:
    """The used run times of each configuration (in the rows' order); None when a
    configuration has none or no configuration has two."""
    if times is None:
        return None
    out = []
    for r in resources:
        values = np.asarray([t for t in times.get(int(r), ()) if math.isfinite(t) and t > 0], float)
        if values.size == 0:
            return None
        out.append(values)
    return out if any(v.size > 1 for v in out) else None


def _boot_runs(p_rel: np.ndarray, samples: list[np.ndarray], rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """Each replicate resamples every configuration's runs, takes medians, and refits."""
    medians = np.stack([np.median(v[rng.integers(0, v.size, size=(n_boot, v.size))], axis=1) for v in samples], axis=1)
    base = int(np.flatnonzero(p_rel == 1.0)[0])
    return _fit_f(p_rel, medians[:, [base]] / medians)


def _boot_residuals(p_rel: np.ndarray, s: np.ndarray, fitted: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """Each replicate adds resampled residuals to the fitted speedups and refits (a replicate
    with a speedup at or below 0 gives NaN)."""
    moving = p_rel != 1.0  # the baseline's speedup is 1 by definition, not a measurement
    residuals = (s - fitted)[moving]
    y = np.tile(s, (n_boot, 1))
    y[:, moving] = fitted[moving] + rng.choice(residuals, size=(n_boot, residuals.size), replace=True)
    return _fit_f(p_rel, y)


def karp_flatt_trend(summary: pd.DataFrame) -> str | None:
    """What the Karp-Flatt serial fraction does as resources grow, in words; None when the
    series has fewer than MIN_FIT_POINTS Karp-Flatt values (no trend is said)."""
    if not len(summary) or "karp_flatt" not in summary:
        return None
    rows = summary.sort_values("resources")
    e = rows["karp_flatt"].to_numpy(float)
    ok = np.isfinite(e)
    if ok.sum() < MIN_FIT_POINTS:
        return None
    e, p = e[ok], rows["resources"].to_numpy(float)[ok]
    first, last = e[0], e[-1]
    span = f"({first:.3g} -> {last:.3g})"
    middle = float(np.median(e))
    if np.all(np.abs(e - middle) <= max(FLAT_ABS, FLAT_REL * abs(middle))):
        return f"serial fraction roughly constant (about {middle:.3g}): Amdahl's serial part"
    rho = float(pd.Series(p).rank().corr(pd.Series(e).rank()))  # Spearman: Pearson of the (average) ranks
    grows, falls = rho >= 0.8 and last > first, rho <= -0.8 and last < first
    if grows or falls:
        low, high = _karp_flatt_range(rows[ok])
        if low is not None and (high[0] >= low[-1] if grows else low[0] <= high[-1]):
            return f"serial fraction {'grows' if grows else 'falls'} with p {span}, but not beyond the run-to-run spread"
        single = "" if low is not None else " (one run per configuration: spread unknown)"
        if grows:
            return f"serial fraction grows with p {span}: overhead (communication, synchronisation, imbalance), not serial code{single}"
        return f"serial fraction falls with p {span}: super-linear effects (caches) or a slow baseline{single}"
    return f"serial fraction varies with no clear trend {span}"


def _karp_flatt_range(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Karp-Flatt from each configuration's fastest and slowest run (against the baseline's
    median); (None, None) when the spread is unknown (no min/max, or one run everywhere)."""
    if not {"time_s_min", "time_s_max", "time_s_median", "baseline_resources"} <= set(rows) or not len(rows):
        return None, None
    fast, slow = rows["time_s_min"].to_numpy(float), rows["time_s_max"].to_numpy(float)
    if np.all(fast == slow):
        return None, None
    t0 = rows["time_s_median"].to_numpy(float)[0] * rows["speedup"].to_numpy(float)[0]  # T(p0) = T(p) * S(p)
    p_rel = rows["resources"].to_numpy(float) / float(rows["baseline_resources"].iloc[0])
    return karp_flatt(speedup(t0, fast), p_rel), karp_flatt(speedup(t0, slow), p_rel)
