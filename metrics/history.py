"""Provides fixed-size history for live views: one shared time axis, many aligned series.

An hour at 1 Hz for the host (every core), 8 GPUs and a few scope totals fits in a few MB
because values are float32 in preallocated numpy rings: appending never allocates, and memory
is known up front (`nbytes`). Peaks are tracked over everything ever appended, not only what
the ring still holds, so "peak memory" stays right after an hour-long job. `History.energy`
(an `EnergyTally`) keeps each GPU's energy since the first sample the same way: for the whole
watch, in constant memory.
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping

import numpy as np

from gpuscope.metrics.energy import (
    GAP_FACTOR, EnergyFigure, IntegratedPower, counter_delta, energy_figure, integrate_power,
)

HOUR_AT_1HZ = 3600


class History:
    """Aligned ring buffers: `append(t, {name: value})` adds one sample to every series.

    Series appear on first use; a series missing from a sample gets NaN at that time, so
    plots show a gap instead of a made-up value.
    """

    def __init__(self, capacity: int = HOUR_AT_1HZ, max_series: int = 512) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.max_series = max_series
        self._times = np.full(capacity, np.nan, np.float64)
        self._values = np.full((0, capacity), np.nan, np.float32)
        self._index: dict[str, int] = {}
        self._peaks: dict[str, float] = {}
        self._count = 0  # samples ever appended
        self.energy = EnergyTally()
        """Each GPU's energy since the first sample (`tui.model.watch.record` feeds it)."""

    @classmethod
    def from_arrays(cls, times: np.ndarray, series: Mapping[str, np.ndarray], peaks: Mapping[str, float | None] | None = None) -> "History":
        """A history holding exactly `times` and the aligned `series` (NaN where missing), built
        in one go rather than a sample at a time: a replayed recording (a day at 1 Hz is 86,400
        samples). `peaks`: what `peak()` answers (a replay gives the peaks up to its cursor);
        by default each series' largest value."""
        n = len(times)
        history = cls(max(n, 1), max_series=max(len(series), 1))
        history._times[:n] = times
        history._values = np.full((len(series), history.capacity), np.nan, np.float32)
        for row, (name, values) in enumerate(series.items()):
            history._index[name] = row
            history._values[row, :n] = values
            if peaks is not None:
                peak = peaks.get(name)
            else:
                finite = np.asarray(values, dtype=np.float64)
                finite = finite[~np.isnan(finite)]
                peak = float(finite.max()) if finite.size else None
            if peak is not None and not math.isnan(peak):
                history._peaks[name] = float(peak)
        history._count = n
        return history

    def __len__(self) -> int:
        return min(self._count, self.capacity)

    @property
    def names(self) -> list[str]:
        return list(self._index)

    @property
    def nbytes(self) -> int:
        return self._times.nbytes + self._values.nbytes

    def _row(self, name: str) -> int | None:
        row = self._index.get(name)
        if row is None:
            if len(self._index) >= self.max_series:
                return None  # a bounded memory promise beats one more series
            row = len(self._index)
            self._index[name] = row
            grown = np.full((row + 1, self.capacity), np.nan, np.float32)
            grown[:row] = self._values
            self._values = grown
        return row

    def append(self, t: float, values: dict[str, float | None]) -> None:
        slot = self._count % self.capacity
        self._times[slot] = t
        self._values[:, slot] = np.nan
        for name, value in values.items():
            row = self._row(name)
            if row is None or value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            self._values[row, slot] = value
            if value > self._peaks.get(name, -math.inf):
                self._peaks[name] = float(value)
        self._count += 1

    def _order(self) -> np.ndarray:
        n = len(self)
        start = self._count - n
        return (np.arange(start, self._count) % self.capacity).astype(np.int64)

    def times(self) -> np.ndarray:
        """Sample times, oldest first (a copy)."""
        return self._times[self._order()]

    def series(self, name: str) -> np.ndarray:
        """Values of `name`, oldest first, NaN where missing (a float64 copy)."""
        row = self._index.get(name)
        if row is None:
            return np.full(len(self), np.nan)
        return self._values[row, self._order()].astype(np.float64)

    def last(self, name: str) -> float | None:
        values = self.series(name)
        return None if values.size == 0 or math.isnan(values[-1]) else float(values[-1])

    def peak(self, name: str) -> float | None:
        """Largest value ever appended for `name` (also after it left the ring)."""
        return self._peaks.get(name)

    def window_mean(self, name: str, seconds: float) -> float | None:
        """Mean over samples in the last `seconds` (ignoring gaps); None without data."""
        times = self.times()
        if times.size == 0:
            return None
        values = self.series(name)[times >= times[-1] - seconds]
        values = values[~np.isnan(values)]
        return float(values.mean()) if values.size else None

    def downsample(self, name: str, points: int) -> list[float]:
        """At most `points` values for a plot `points` cells wide: the max of each bucket,
        so a short spike stays visible. Gaps stay NaN."""
        values = self.series(name)
        if values.size <= points or points <= 0:
            return values.tolist()
        starts = np.linspace(0, values.size, points + 1).astype(np.int64)[:-1]
        # fmax skips NaN, so a bucket is NaN only when all of it is (size > points: none is empty).
        return np.fmax.reduceat(values, starts).tolist()

    def binned(self, name: str, start: float, end: float, points: int, join: bool = False) -> list[float]:
        """`points` values over the fixed time span (`start`, `end`]: the max of the samples in
        each equal slice of time (NaN where none), so a plot's x axis is time, whatever the
        sampling period, and a short spike stays visible. `join`: slices between two samples
        taken one sampling period apart (a short recording drawn across a wide plot) get the
        line between them, as a line plot joins its points; a longer gap (readings missing)
        stays empty."""
        if points <= 0 or end <= start:
            return []
        times = self.times()
        values = self.series(name)
        keep = (times > start) & (times <= end) & ~np.isnan(values)
        out = np.full(points, np.nan)
        if keep.any():
            slot = np.minimum(((times[keep] - start) / (end - start) * points).astype(np.int64), points - 1)
            np.fmax.at(out, slot, values[keep])
            if join and keep.sum() > 2:
                period = float(np.median(np.diff(times[keep])))
                filled = np.flatnonzero(~np.isnan(out))
                width = (end - start) / points
                for a, b in zip(filled[:-1], filled[1:]):
                    if b - a > 1 and (b - a - 1) * width <= 1.5 * period:
                        out[a + 1:b] = np.interp(np.arange(a + 1, b), (a, b), (out[a], out[b]))
        return out.tolist()



class EnergyTally:
    """Each GPU's energy since the watch started, kept in constant memory: NVML's counter and
    power integrated, step by step, so an all-day watch costs each poll what its first did.

    The counter's readings are kept compactly: the first, the two either side of each reset
    (a driver reload) and the latest; their deltas telescope, so `metrics.energy.counter_delta`
    over them gives what it gives over every reading (resets summed and said). Power is
    integrated a step at a time by `metrics.energy.integrate_power`, a step longer than
    GAP_FACTOR times the median of the recent steps (a pause, a stalled poll) left out and
    counted. `figure(index)` is then `metrics.energy.EnergyFigure`, the counter's else
    integrated power, both given where they differ.
    """

    RECENT = 15
    """Steps whose median sets the gap limit."""

    def __init__(self) -> None:
        self._gpus: dict[int, _GpuTally] = {}
        self._figures: dict[int, EnergyFigure] = {}

    @classmethod
    def fixed(cls, figures: Mapping[int, EnergyFigure]) -> "EnergyTally":
        """A tally that holds ready-made figures by GPU index (a replay's, counted up to its
        cursor from the recording's columns) and answers `figure` with them."""
        tally = cls()
        tally._figures = dict(figures)
        return tally

    def __contains__(self, index: int) -> bool:
        return index in self._gpus or index in self._figures

    def add(self, index: int, t: float, energy_mj: float | None, power_w: float | None, note: str = "") -> None:
        """One reading of GPU `index` at time `t` (its sample's timestamp)."""
        gpu = self._gpus.setdefault(index, _GpuTally())
        self._figures.pop(index, None)
        gpu.note = note
        if energy_mj is not None:
            gpu.add_count(t, float(energy_mj))
        if power_w is not None and math.isfinite(power_w):
            gpu.add_power(t, float(power_w), self.RECENT)

    def figure(self, index: int) -> EnergyFigure | None:
        """GPU `index`'s energy since its first reading; None when it was never read."""
        if index not in self._figures:
            gpu = self._gpus.get(index)
            if gpu is None:
                return None
            self._figures[index] = gpu.figure()
        return self._figures[index]


class _GpuTally:
    """One GPU's running figures (see `EnergyTally`)."""

    def __init__(self) -> None:
        self.counts: list[tuple[float, float]] = []
        """(time, mJ): the first reading, those either side of each reset, the latest."""
        self.replace_last = False
        """The latest kept reading only continues a run: the next one of the run takes its place."""
        self.last_power: tuple[float, float] | None = None
        self.steps: list[float] = []
        self.joules = 0.0
        self.covered_s = 0.0
        self.gaps = 0
        self.gap_s = 0.0
        self.backwards = 0
        self.note = ""

    def add_count(self, t: float, mj: float) -> None:
        reset = bool(self.counts) and mj < self.counts[-1][1]
        if self.replace_last and not reset:
            self.counts[-1] = (t, mj)
        else:
            self.counts.append((t, mj))
        self.replace_last = len(self.counts) > 1 and not reset

    def add_power(self, t: float, w: float, recent: int) -> None:
        last, self.last_power = self.last_power, (t, w)
        if last is None:
            return
        dt = t - last[0]
        if dt <= 0:
            self.backwards += 1
            self.last_power = last
            return
        self.steps = [*self.steps[-(recent - 1):], dt]
        step = integrate_power((last[0], t), (last[1], w), max_gap_s=GAP_FACTOR * statistics.median(self.steps))
        self.joules += step.joules or 0.0
        self.covered_s += step.covered_s or 0.0
        self.gaps += step.gaps
        self.gap_s += step.gap_s

    def figure(self) -> EnergyFigure:
        times = [t for t, _ in self.counts]
        counter = counter_delta(times, [c for _, c in self.counts], joules_per_count=1e-3)
        notes = []
        if self.gaps:
            notes.append(f"integrated power: {self.gaps} gap(s) of {self.gap_s:.0f} s in all not bridged (the watch paused or a poll stalled)")
        if self.backwards:
            notes.append(f"integrated power: {self.backwards} reading(s) not later than the one before, left out")
        if self.covered_s > 0:
            power = IntegratedPower(self.joules, self.covered_s, self.gaps, self.gap_s, tuple(notes))
        else:
            power = IntegratedPower(None, None, notes=("integrated power: fewer than two power readings",))
        return energy_figure(counter, power, self.note)


