"""Provides the replay's power, energy and activity per GPU: the History series its plots
draw (tui/screens/replay_plots.py) and what they say beside their lines at the cursor.

    series, views = energy_series(times, gpu_columns(table.column("gpus"), rows), version)
    text = power_text(views[0], series, i)   # PlotText("GPU 0 power", ("612 W of 700 W limit", "energy 1.21 kWh of 1.84 kWh"))

A GPU's energy so far is its energy counter's (recording version 4 and later), else its power
integrated, as metrics.energy.energy_so_far counts them; `energy_at` gives the figure at a
sample that the job panel says, looked up in counts made once at open (`EnergySoFar`), not
counted again at each cursor move. What a recording has not got is NaN (a gap in the plot)
and the legend says n/a and why, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuscope.metrics.energy import (
    FEWER_COUNTS,
    FEWER_POWER,
    NO_ADVANCE,
    CounterDelta,
    EnergyFigure,
    IntegratedPower,
    energy_figure,
    energy_so_far,
    gap_limit,
    human_energy,
    power_notes,
    reset_note,
)
from gpuscope.parsers.recording.columns import GpuColumns


def _percent(part: np.ndarray, whole: float | None) -> np.ndarray:
    if whole is None or not whole > 0:
        return np.full(len(part), np.nan)
    return 100.0 * part / whole


def _top(values: np.ndarray) -> float | None:
    """The largest finite value above 0, else None."""
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size and finite.max() > 0 else None


@dataclass(frozen=True)
class EnergySoFar:
    """One GPU's readings counted up to each sample once, so that its energy figure at any
    sample is looked up, not counted again: what metrics.energy.gpu_energy says over the
    readings up to that sample (its counter_delta and integrate_power, a prefix at a time).
    Per sample, how many counter and power readings it has seen; per reading, the counts up
    to it (a counter reading's joules, resets and time; a power reading's joules, seconds
    covered, gaps and steps back). The sums are running sums: equal to gpu_energy's up to
    rounding."""

    counter_seen: np.ndarray
    counter_t: np.ndarray
    counter_j: np.ndarray
    resets: np.ndarray
    first_reset: int
    power_seen: np.ndarray
    power_j: np.ndarray
    covered_s: np.ndarray
    forward: np.ndarray
    gaps: np.ndarray
    gap_s: np.ndarray
    back: np.ndarray
    max_gap_s: float | None

    @classmethod
    def count(cls, times: np.ndarray, energy_mj: np.ndarray, power_w: np.ndarray, max_gap_s: float | None) -> "EnergySoFar":
        """`max_gap_s`: the gap limit of the whole recording's power readings (`gap_limit`),
        so a prefix counts its gaps as the whole does."""
        def seen(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            ok = np.isfinite(times) & np.isfinite(values)
            return np.cumsum(ok), np.flatnonzero(ok)

        def running(steps: np.ndarray) -> np.ndarray:  # per reading: the sum of the steps before it
            return np.concatenate([[0.0], np.cumsum(steps, dtype=float)])

        counter_seen, at = seen(energy_mj)
        counts = energy_mj[at]
        steps = np.diff(counts)
        down = steps < 0
        steps[down] = counts[1:][down]  # a reset (the driver reloaded): the reading after it is the count since
        power_seen, p_at = seen(power_w)
        t, w = times[p_at], power_w[p_at]
        dt = np.diff(t)
        forward = dt > 0
        gap = forward & (dt > max_gap_s) if max_gap_s is not None else np.zeros(len(dt), bool)
        used = forward & ~gap
        return cls(counter_seen, times[at], running(steps), running(down), int(np.argmax(down)) if down.any() else -1,
                   power_seen, running(np.where(used, (w[1:] + w[:-1]) / 2.0 * dt, 0.0)), running(np.where(used, dt, 0.0)),
                   running(forward), running(gap), running(np.where(gap, dt, 0.0)), running(~forward), max_gap_s)

    def counter(self, i: int) -> CounterDelta:
        """metrics.energy.counter_delta over the counter's readings up to sample `i`."""
        k = int(self.counter_seen[i])
        if k < 2:
            return CounterDelta(None, None, notes=(f"energy counter: {FEWER_COUNTS}",))
        events, t = int(self.resets[k - 1]), self.counter_t
        at = self.first_reset
        notes = (reset_note("energy counter", events, t[at] - t[0], t[at + 1] - t[0]),) if events else ()
        return CounterDelta(float(self.counter_j[k - 1]) * 1e-3, float(t[k - 1] - t[0]), events, notes)

    def power(self, i: int) -> IntegratedPower:
        """metrics.energy.integrate_power over the power readings up to sample `i`."""
        k = int(self.power_seen[i])
        if k < 2:
            return IntegratedPower(None, None, notes=(FEWER_POWER,))
        if not self.forward[k - 1]:
            return IntegratedPower(None, None, notes=(NO_ADVANCE,))
        gaps, gap_s, back = int(self.gaps[k - 1]), float(self.gap_s[k - 1]), int(self.back[k - 1])
        return IntegratedPower(float(self.power_j[k - 1]), float(self.covered_s[k - 1]), gaps, gap_s, power_notes(gaps, gap_s, self.max_gap_s, back))


@dataclass(frozen=True)
class GpuEnergyView:
    """What the replay's power and activity plots of one GPU say beside their lines: the power
    line's top (its limit, else the highest power seen), the energy line's (the recording's
    total), where the energy comes from, and why what is n/a is."""

    index: int
    power_top_w: float | None
    power_top_is: str
    """'limit' or 'highest seen'."""
    energy_total_j: float | None
    energy_source: str
    """'energy counter', 'integrated power' or '' (n/a)."""
    energy_note: str
    activity_note: str
    """Why the activity is n/a ('' when it was read)."""
    so_far: EnergySoFar = field(compare=False, repr=False)
    """The readings the energy is counted from, counted up to each sample."""


def energy_at(view: GpuEnergyView, i: int) -> EnergyFigure:
    """The GPU's energy from its first reading to sample `i`, as the watch's job panel says it
    live (metrics.energy.gpu_energy over the readings up to `i`; the plotted line's value there)."""
    return energy_figure(view.so_far.counter(i), view.so_far.power(i), view.energy_note)


ACTIVITY = (("sm_active_pct", "sm_active", "SM active"), ("tensor_active_pct", "tensor_active", "tensor"), ("dram_bw_pct", "dram_bw", "DRAM"))
"""GpuSample field, series name (`gpu<n>.<name>`) and legend of the activity plot's lines."""


def energy_series(times: np.ndarray, gpus: dict[int, GpuColumns], version: int | None) -> tuple[dict[str, np.ndarray], dict[int, GpuEnergyView]]:
    """Per GPU: power (W, and percent of the power line's top), energy so far (J, and percent
    of the total) and SM, tensor and DRAM activity (percent), as History series; and what each
    GPU's plots say of them. n/a stays NaN, never 0; a recording older than version 4 had no
    counter nor activity: its energy is integrated power (power was always recorded)."""
    out: dict[str, np.ndarray] = {}
    views: dict[int, GpuEnergyView] = {}
    old = version is not None and version < 4
    for g, c in gpus.items():
        power = c.readings.get("power_w", np.full(len(times), np.nan))
        limit = c.readings.get("power_limit_w", np.full(len(times), np.nan))
        top_w, top_is = _top(limit), "limit"
        if top_w is None:
            top_w, top_is = _top(power), "highest seen"
        counter = c.readings.get("energy_mj", np.full(len(times), np.nan))
        limit = gap_limit(times, power)
        energy, source = energy_so_far(times, counter, power, max_gap_s=limit)
        finite = energy[np.isfinite(energy)]
        total = float(finite[-1]) if finite.size else None
        out[f"gpu{g}.power_w"] = power
        out[f"gpu{g}.power_pct"] = _percent(power, top_w)
        out[f"gpu{g}.energy_j"] = energy
        out[f"gpu{g}.energy_pct"] = _percent(energy, total)
        read = False
        for field_name, name, _label in ACTIVITY:
            values = c.readings.get(field_name, np.full(len(times), np.nan))
            out[f"gpu{g}.{name}"] = values
            read = read or bool(np.isfinite(values).any())
        if read:
            why = ""
        elif old:
            why = f"not in this recording (version {version}: written before gpuscope read GPU activity)"
        else:
            why = c.notes.get("activity_note") or "not read"
        energy_note = c.notes.get("energy_note", "")
        if old:
            energy_note = f"no energy counter in this recording (version {version}: written before gpuscope read it)"
        views[g] = GpuEnergyView(g, top_w, top_is, total, source, energy_note, why, EnergySoFar.count(times, counter, power, limit))
    return out, views


def _at(values: np.ndarray | None, i: int) -> float | None:
    if values is None or not 0 <= i < len(values) or not np.isfinite(values[i]):
        return None
    return float(values[i])


@dataclass(frozen=True)
class PlotText:
    """What a plot says beside its lines: its title, a legend per line, and `note` in place of
    the lines when it has none to draw (n/a and why)."""

    title: str
    legends: tuple[str, ...]
    note: str = ""


def power_text(view: GpuEnergyView, series: dict[str, np.ndarray], i: int) -> PlotText:
    """The power plot at sample `i`: `GPU 0`, `power 612 W of 700 W limit`, `energy 1.21 kWh of
    1.84 kWh` (the lines' tops: 100 on the axis); n/a where there is none, and why."""
    g = view.index
    power = _at(series.get(f"gpu{g}.power_w"), i)
    now = "n/a" if power is None else f"{power:.0f} W"
    top = "" if view.power_top_w is None else f" of {view.power_top_w:.0f} W {view.power_top_is}"
    if not view.energy_source:
        energy = "energy n/a"
    else:
        by = "" if view.energy_source == "energy counter" else " (integrated power)"
        energy = f"energy{by} {human_energy(_at(series.get(f'gpu{g}.energy_j'), i))} of {human_energy(view.energy_total_j)}"
    note = ""
    if view.power_top_w is None and not view.energy_source:
        note = "power and energy n/a: " + (view.energy_note or "no power reading in this recording")
    return PlotText(f"GPU {g} power", (f"{now}{top}", energy), note)


def activity_text(view: GpuEnergyView, series: dict[str, np.ndarray], i: int) -> PlotText:
    """The activity plot at sample `i`: `GPU 0 activity`, `SM active 85 %`, `tensor 40 %`,
    `DRAM 30 %`; with no activity reading at all, n/a and why in place of the lines."""
    g = view.index
    if view.activity_note:
        return PlotText(f"GPU {g} activity", (), f"activity n/a: {view.activity_note}")
    legends = []
    for _field, name, label in ACTIVITY:
        value = _at(series.get(f"gpu{g}.{name}"), i)
        legends.append(f"{label} {'n/a' if value is None else f'{value:.0f} %'}")
    return PlotText(f"GPU {g} activity", tuple(legends))
