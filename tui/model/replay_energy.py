"""Provides the replay's power, energy and activity per GPU: the History series its plots
draw (tui/screens/replay_plots.py) and what they say beside their lines at the cursor.

    series, views = energy_series(times, gpu_columns(table.column("gpus"), rows), version)
    text = power_text(views[0], series, i)   # PlotText("GPU 0 power", ("612 W of 700 W limit", "energy 1.21 kWh of 1.84 kWh"))

A GPU's energy so far is its energy counter's (recording version 4 and later), else its power
integrated, as metrics.energy.gpu_energy counts them; what a recording has not got is NaN (a
gap in the plot) and the legend says n/a and why, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.metrics.energy import GAP_FACTOR, human_energy
from gpuscope.parsers.recording.columns import GpuColumns


def _percent(part: np.ndarray, whole: float | None) -> np.ndarray:
    if whole is None or not whole > 0:
        return np.full(len(part), np.nan)
    return 100.0 * part / whole


def _top(values: np.ndarray) -> float | None:
    """The largest finite value above 0, else None."""
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size and finite.max() > 0 else None


def running_energy(times: np.ndarray, energy_mj: np.ndarray, power_w: np.ndarray) -> tuple[np.ndarray, str]:
    """A GPU's energy so far (J) at each sample, from its first reading, and what it comes
    from: the energy counter where it has two readings (a decrease is a driver reload: the
    reading after it is the energy since the reload), else power integrated (trapezoids; a gap
    over GAP_FACTOR median intervals is not bridged); NaN before the first reading, and ('', all
    NaN) with neither. The same figures as metrics.energy.gpu_energy gives for the whole span,
    sample by sample (a test holds the last one equal)."""
    n = len(times)
    out = np.full(n, np.nan)
    for values, source in ((energy_mj, "energy counter"), (power_w, "integrated power")):
        ok = np.flatnonzero(np.isfinite(times) & np.isfinite(values))
        if ok.size < 2:
            continue
        t, v = times[ok], values[ok]
        if source == "energy counter":
            steps = np.diff(v)
            reset = steps < 0
            steps[reset] = v[1:][reset]
            steps *= 1e-3
        else:
            dt = np.diff(t)
            forward = dt > 0
            if not forward.any():
                continue
            used = forward & (dt <= GAP_FACTOR * float(np.median(dt[forward])))
            steps = np.where(used, (v[1:] + v[:-1]) / 2.0 * np.where(used, dt, 0.0), 0.0)
        at = np.full(n, -1)
        at[ok] = np.arange(ok.size)
        at = np.maximum.accumulate(at)  # each sample: the last reading at or before it
        cumulative = np.concatenate([[0.0], np.cumsum(steps)])
        out = np.where(at >= 0, cumulative[np.maximum(at, 0)], np.nan)
        return out, source
    return out, ""


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
        energy, source = running_energy(times, c.readings.get("energy_mj", np.full(len(times), np.nan)), power)
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
        views[g] = GpuEnergyView(g, top_w, top_is, total, source, energy_note, why)
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
