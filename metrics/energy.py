"""Provides the energy arithmetic of a job: counters' deltas, integrated power, and their vocabulary.

A job's energy is a counter's delta over the watch or the recording: NVML's total energy (mJ
since the driver loaded) for a GPU, RAPL's `energy_uj` for the CPU packages and DRAM of the
node. Power integrated over the samples (trapezoids) is the second opinion: where the two differ
by more than 5 % both are given, since either can be the wrong one (a driver reload between two
readings, sparse power samples). Everything here is pure: arrays in, figures and notes out.

    gpu = gpu_energy(times, energy_mj, power_w)        # -> EnergyFigure (counter, else power)
    joules, source = energy_so_far(times, energy_mj, power_w)   # the same, at every sample
    cpu = rapl_energy(rapl_samples)                   # -> NodeCpuEnergy (a node figure)

Missing readings are None or NaN and are skipped. A value that cannot be computed is None,
never 0, and a note says why. RAPL and Slurm's own energy are node figures: `scope` says so, and
nothing here ever calls them a job's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

TOLERANCE = 0.05
"""Counter and integrated power further apart than this (relative) are both shown."""
GAP_FACTOR = 3.0
"""A sampling gap longer than this many median intervals is not bridged by a trapezoid."""


@dataclass(frozen=True, slots=True)
class CounterDelta:
    """What a cumulative energy counter says between its first and last readings."""

    joules: float | None
    """None with fewer than two readings."""
    seconds: float | None
    """From the first to the last reading used."""
    events: int = 0
    """Decreases seen: driver reloads (NVML) or wraps (RAPL)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IntegratedPower:
    """Power samples integrated over time (trapezoids); gaps are left out, not bridged."""

    joules: float | None
    covered_s: float | None
    """Seconds the trapezoids cover (the watch's span less its gaps)."""
    gaps: int = 0
    gap_s: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EnergyFigure:
    """A GPU's energy over a watch or recording: the counter's delta, else integrated power."""

    joules: float | None
    source: str
    """'energy counter', 'integrated power' or '' (n/a)."""
    mean_w: float | None
    seconds: float | None
    counter_j: float | None
    integrated_j: float | None
    disagree: bool = False
    """Counter and integrated power differ by more than TOLERANCE: show both."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RaplZone:
    """One powercap zone at one reading (/sys/class/powercap/intel-rapl:N[:M])."""

    zone: str
    """The sysfs directory name, e.g. 'intel-rapl:0:2' (one colon: a top-level zone)."""
    name: str
    """Its `name` file: 'package-0', 'dram', 'core', 'uncore', 'psys'."""
    energy_uj: int | None
    """None when unreadable (root-only on most kernels since 2020)."""
    max_energy_range_uj: int | None
    """Where `energy_uj` wraps to 0."""


@dataclass(frozen=True, slots=True)
class RaplSample:
    """One reading of the node's RAPL zones. A node figure: every process on the node counts."""

    timestamp: float
    zones: tuple[RaplZone, ...] = ()
    reason: str = ""
    """Why there are no readable zones (absent in VMs, root-only); '' when there are."""
    scope: str = "node"


@dataclass(frozen=True, slots=True)
class NodeCpuEnergy:
    """The node's CPU energy from RAPL over a watch: the sockets' packages and their DRAM."""

    package_j: float | None
    """All top-level `package-N` zones summed (their `core`/`uncore` sub-zones are inside them)."""
    dram_j: float | None
    zones: tuple[tuple[str, CounterDelta], ...] = ()
    """Each zone by name ('package-0', 'package-0/core', 'dram', 'psys'), for the detail."""
    seconds: float | None = None
    scope: str = "node"
    """Always 'node': RAPL counts every process on the node, never one job's alone."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SlurmEnergy:
    """What Slurm's accounting says of a job's energy and GPU use (sacct or sstat)."""

    job_id: str
    source: str
    energy_j: float | None
    """ConsumedEnergyRaw (joules) of the job, else the `energy` of TRESUsageInTot; measured by
    the site's plugin on whole nodes (a node shared with other jobs counts theirs too)."""
    energy_note: str = ""
    """Where `energy_j` comes from, or why it is None."""
    gpu_util_pct: float | None = None
    """`gres/gpuutil` of TRESUsageInTot, the largest step's, as Slurm sums it over the step's
    tasks and GPUs (so above 100 with several GPUs)."""
    gpu_memory: int | None = None
    """`gres/gpumem` (bytes), the largest step's, summed over its tasks like its `mem`."""
    gpu_note: str = ""
    """Why the GPU figures are None (the site does not track gres/gpuutil, gres/gpumem)."""
    scope: str = "node"


def _valid(times: Sequence[float | None], values: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) as float arrays without the pairs where either is None or NaN."""
    n = min(len(times), len(values))
    t, v = np.asarray(times[:n], dtype=float), np.asarray(values[:n], dtype=float)  # None becomes NaN
    keep = np.isfinite(t) & np.isfinite(v)
    return t[keep], v[keep]


def _counter_steps(counts: np.ndarray, wrap: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Each interval's count, and where the counter went down: with `wrap`, a wrap (the range
    added); without, a reset (the reading after it is the count since the reset, taken whole)."""
    steps = np.diff(counts)
    down = steps < 0
    if wrap is not None:
        steps[down] += wrap
    else:
        steps[down] = counts[1:][down]
    return steps, down


def _gap_limit(dt: np.ndarray) -> float:
    return GAP_FACTOR * float(np.median(dt[dt > 0]))


def gap_limit(times: Sequence[float | None], power_w: Sequence[float | None]) -> float | None:
    """What `integrate_power` takes for a gap over these readings by default (GAP_FACTOR times
    their median interval); None when their times never advance. Given to it for a part of
    the readings, the part is counted as the whole was."""
    t, _ = _valid(times, power_w)
    dt = np.diff(t)
    return _gap_limit(dt) if (dt > 0).any() else None


def _trapezoids(t: np.ndarray, w: np.ndarray, max_gap_s: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """Each interval's joules (0 where it is not counted), the intervals used, the gaps (longer
    than `max_gap_s`, by default GAP_FACTOR times the median interval) and that limit; None
    when the times never advance. An interval going back in time is neither used nor a gap."""
    dt = np.diff(t)
    forward = dt > 0
    if not forward.any():
        return None
    limit = max_gap_s if max_gap_s is not None else _gap_limit(dt)
    gap = forward & (dt > limit)
    used = forward & ~gap
    return np.where(used, (w[1:] + w[:-1]) / 2.0 * dt, 0.0), used, gap, limit


def counter_delta(times: Sequence[float], counts: Sequence[float | None], *, joules_per_count: float,
                  wrap: float | None = None, label: str = "energy counter") -> CounterDelta:
    """Energy between the first and last readings of a cumulative counter.

    A decrease is a wrap when `wrap` is given (RAPL wraps at max_energy_range_uj: add the range)
    and otherwise a reset (NVML restarts at 0 when the driver reloads: the reading after it is
    the energy since the reload, added in full). Either is counted and said. A reset loses the
    energy between the reading before it and the reload, so the sum is then a lower bound.
    """
    t, c = _valid(times, counts)
    if len(c) < 2:
        return CounterDelta(None, None, notes=(f"{label}: {FEWER_COUNTS}",))
    steps, down = _counter_steps(c, wrap)
    events = int(down.sum())
    notes = []
    if wrap is not None:
        if events:
            notes.append(f"{label}: wrapped {events} time(s) at {wrap:g}; counted")
    elif events:
        at = int(np.argmax(down))
        notes.append(reset_note(label, events, t[at] - t[0], t[at + 1] - t[0]))
    dt = np.diff(t)
    if wrap is not None and (dt > 0).any():
        # a gap in which the highest power seen could have gone round the range once or more
        fastest = float(np.max(steps[dt > 0] / dt[dt > 0]))
        longest = float(np.max(dt))
        if longest * fastest > wrap:
            notes.append(f"{label}: readings {longest:.0f} s apart, long enough for a whole wrap at the highest power seen: "
                         "a wrap may be missed (the figure is then low)")
    return CounterDelta(float(steps.sum()) * joules_per_count, float(t[-1] - t[0]), events, tuple(notes))


def integrate_power(times: Sequence[float], watts: Sequence[float | None], *, max_gap_s: float | None = None) -> IntegratedPower:
    """Trapezoids over the power readings (missing ones skipped). An interval longer than
    `max_gap_s` (default: GAP_FACTOR times the median interval) is not bridged but counted: the
    result then covers less than the span, and a note says how much."""
    t, w = _valid(times, watts)
    if len(w) < 2:
        return IntegratedPower(None, None, notes=(FEWER_POWER,))
    trapezoids = _trapezoids(t, w, max_gap_s)
    if trapezoids is None:
        return IntegratedPower(None, None, notes=(NO_ADVANCE,))
    steps, used, gap, limit = trapezoids
    dt = np.diff(t)
    forward = dt > 0
    joules = float(steps.sum())
    gaps, gap_s = int(gap.sum()), float(dt[gap].sum())
    return IntegratedPower(joules, float(dt[used].sum()), gaps, gap_s, power_notes(gaps, gap_s, limit, int((~forward).sum())))


FEWER_COUNTS = "fewer than two readings"
FEWER_POWER = "integrated power: fewer than two power readings"
NO_ADVANCE = "integrated power: the readings' times do not advance"


def reset_note(label: str, events: int, first_after_s: float, first_before_s: float) -> str:
    """What a counter's resets mean, the first between those seconds after its first reading
    (the replay's running counts say the same words)."""
    return (f"{label}: reset {events} time(s), the driver reloaded (first between +{first_after_s:.0f} s and +{first_before_s:.0f} s); "
            "the energy before and after each reset is summed, the time between the last reading and the reload is not "
            "counted: a lower bound")


def power_notes(gaps: int, gap_s: float, limit: float | None, back: int) -> tuple[str, ...]:
    """What integrated power left out: gaps not bridged, readings not later than the one before."""
    notes = []
    if gaps:
        notes.append(f"integrated power: {gaps} gap(s) of {gap_s:.0f} s in all not bridged (power readings more than {limit:.1f} s apart)")
    if back:
        notes.append(f"integrated power: {back} reading(s) not later than the one before, left out")
    return tuple(notes)


def gpu_energy(times: Sequence[float], energy_mj: Sequence[float | None], power_w: Sequence[float | None], *,
               max_gap_s: float | None = None, note: str = "") -> EnergyFigure:
    """One GPU's energy over the readings at `times`: NVML's counter delta, and power integrated.

    The figure is the counter's when it has two readings (resets summed and said), else the
    integrated power's, labelled as such. Where both exist and their mean powers (each over the
    time it covers: the integral leaves gaps out) differ by more than TOLERANCE, `disagree` is set
    and a note gives both. `note` is the samples' `energy_note` (why the counter is n/a, or
    'whole GPU' under MIG), kept first in the notes.
    """
    return energy_figure(counter_delta(times, energy_mj, joules_per_count=1e-3), integrate_power(times, power_w, max_gap_s=max_gap_s), note)


def energy_so_far(times: Sequence[float | None], energy_mj: Sequence[float | None], power_w: Sequence[float | None], *,
                  max_gap_s: float | None = None) -> tuple[np.ndarray, str]:
    """`gpu_energy`'s joules from the first reading up to each of `times`, and what they come
    from: the counter's ('energy counter') where it has two readings, else integrated power
    (same resets, same gaps left out), as one array over the samples; the last value is
    `gpu_energy`'s over all of them. NaN before the first reading (never 0); ('', all NaN)
    when neither can be counted. A sample without a reading carries the one before it."""
    t_all = np.asarray(times, dtype=float)
    out = np.full(len(t_all), np.nan)
    for values, source in ((energy_mj, "energy counter"), (power_w, "integrated power")):
        v_all = np.asarray(values, dtype=float)
        ok = np.flatnonzero(np.isfinite(t_all) & np.isfinite(v_all))
        if ok.size < 2:
            continue
        if source == "energy counter":
            steps = _counter_steps(v_all[ok], None)[0] * 1e-3
        else:
            trapezoids = _trapezoids(t_all[ok], v_all[ok], max_gap_s)
            if trapezoids is None:
                continue
            steps = trapezoids[0]
        last = np.full(len(t_all), -1)
        last[ok] = np.arange(ok.size)
        last = np.maximum.accumulate(last)  # each sample: its latest reading, by position among the readings
        cumulative = np.concatenate([[0.0], np.cumsum(steps)])
        return np.where(last >= 0, cumulative[np.maximum(last, 0)], np.nan), source
    return out, ""


def energy_figure(counter: CounterDelta, power: IntegratedPower, note: str = "") -> EnergyFigure:
    """The figure of a counter delta and an integrated power (`gpu_energy`'s, or ones summed step
    by step as the watch does): the counter's when it has two readings, else integrated power
    (said); both noted where their mean powers differ by more than TOLERANCE. `note` (the
    samples' `energy_note`) first."""
    notes = [note] if note else []
    if counter.joules is not None:
        joules, source, seconds = counter.joules, "energy counter", counter.seconds
    elif power.joules is not None:
        joules, source, seconds = power.joules, "integrated power", power.covered_s
        notes.append("no energy counter readings: the figure is integrated power")
    else:
        joules, source, seconds = None, "", None
    notes += [*(counter.notes if counter.joules is not None or not note else ()), *power.notes]
    disagree = False
    if counter.joules is not None and power.joules is not None and counter.seconds and power.covered_s:
        by_counter, by_power = counter.joules / counter.seconds, power.joules / power.covered_s
        if max(by_counter, by_power) > 0 and abs(by_counter - by_power) / max(by_counter, by_power) > TOLERANCE:
            disagree = True
            notes.append(f"energy counter {human_energy(counter.joules)} ({by_counter:.0f} W mean) and integrated power "
                         f"{human_energy(power.joules)} ({by_power:.0f} W mean) differ by more than {TOLERANCE:.0%}: both shown")
    mean_w = joules / seconds if joules is not None and seconds else None
    return EnergyFigure(joules, source, mean_w, seconds, counter.joules, power.joules, disagree, tuple(notes))


def rapl_energy(samples: Sequence[RaplSample]) -> NodeCpuEnergy:
    """The node's CPU energy from RAPL readings: each zone's delta with its wraps handled, the
    top-level packages summed and the DRAM zones summed. A node figure (every job on the node)."""
    labels: dict[str, str] = {}
    series: dict[str, tuple[list[float], list[int | None]]] = {}
    wraps: dict[str, int] = {}
    for s in samples:
        for z in s.zones:
            labels.setdefault(z.zone, _zone_label(z, s.zones))
            times, values = series.setdefault(z.zone, ([], []))
            times.append(s.timestamp)
            values.append(z.energy_uj)
            if z.max_energy_range_uj:
                wraps[z.zone] = z.max_energy_range_uj
    notes = sorted({s.reason for s in samples if s.reason})
    zones, package, dram = [], [], []
    for zone in sorted(series):
        wrap = wraps.get(zone)
        delta = counter_delta(*series[zone], joules_per_count=1e-6, wrap=float(wrap) if wrap else None, label=f"RAPL {labels[zone]}")
        zones.append((labels[zone], delta))
        if delta.joules is None:
            continue
        notes += delta.notes
        if zone.count(":") == 1 and labels[zone].startswith("package"):
            package.append(delta.joules)
        elif labels[zone].endswith("dram"):
            dram.append(delta.joules)
    if series and not package:
        notes.append("RAPL: no package zone was readable twice")
    read = [s.timestamp for s in samples if any(z.energy_uj is not None for z in s.zones)]
    seconds = max(read) - min(read) if len(read) > 1 else None
    return NodeCpuEnergy(sum(package) if package else None, sum(dram) if dram else None, tuple(zones), seconds, notes=tuple(notes))


def _zone_label(zone: RaplZone, siblings: tuple[RaplZone, ...]) -> str:
    """'package-0' for a top-level zone, 'package-0/core' for a sub-zone of package 0."""
    if zone.zone.count(":") < 2:
        return zone.name
    parent_id = zone.zone.rsplit(":", 1)[0]
    parent = next((z.name for z in siblings if z.zone == parent_id), parent_id)
    return f"{parent}/{zone.name}"


def human_energy(joules: float | None) -> str:
    """`6.62e6` -> `1.84 kWh`, `51200` -> `51.2 kJ`, `12.3` -> `12.3 J`; None -> `n/a`."""
    if joules is None or not math.isfinite(joules):
        return "n/a"
    if abs(joules) >= 3.6e5:
        return f"{joules / 3.6e6:.3g} kWh"
    if abs(joules) >= 1e3:
        return f"{joules / 1e3:.3g} kJ"
    return f"{joules:.3g} J"
