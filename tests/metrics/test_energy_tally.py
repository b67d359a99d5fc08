"""EnergyTally: a GPU's energy since the watch started, summed a reading at a time, equals
metrics.energy.gpu_energy over every reading (resets, pauses, no counter), in constant memory."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.energy import gpu_energy
from gpuscope.metrics.history import EnergyTally, History


def _run(times, counts, watts, note: str = "") -> EnergyTally:  # type: ignore[no-untyped-def]
    tally = EnergyTally()
    for t, c, w in zip(times, counts, watts):
        tally.add(0, float(t), c, w, note)
    return tally


def _counter(times: np.ndarray, watts: np.ndarray, start: float = 5e9) -> np.ndarray:
    """An NVML-like counter (mJ) that grows with the power: trapezoids from `start`."""
    return start + np.concatenate([[0.0], np.cumsum((watts[1:] + watts[:-1]) / 2 * np.diff(times) * 1000)])


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.source == b.source and a.disagree == b.disagree and a.notes == b.notes
    for field in ("joules", "mean_w", "seconds", "counter_j", "integrated_j"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), field


def test_counter_reset_mid_watch_is_summed_and_said() -> None:
    t = np.arange(0.0, 120.0)
    w = 300 + 80 * np.sin(t / 9)
    e = _counter(t, w)
    e[70:] = e[70:] - e[70] + 2_000.0  # the driver reloads between +69 s and +70 s: the counter restarts near 0
    tally = _run(t, e, w)
    figure = tally.figure(0)
    _same(figure, gpu_energy(t, e, w))
    assert figure.source == "energy counter" and figure.seconds == 119.0
    assert any("reset 1 time(s)" in n and "+69 s and +70 s" in n and "lower bound" in n for n in figure.notes)
    assert len(tally._gpus[0].counts) == 4  # the first reading, either side of the reset, the latest


def test_a_pause_is_a_gap_the_counter_still_covers() -> None:
    t = np.concatenate([np.arange(0.0, 30.0), np.arange(90.0, 120.0)])  # the watch paused for a minute
    w = np.full(t.size, 250.0)
    figure = _run(t, _counter(t, w), w).figure(0)
    assert figure.source == "energy counter" and figure.joules == pytest.approx(250.0 * 119.0)
    assert figure.integrated_j == pytest.approx(250.0 * 58.0)  # the gap is not bridged by a trapezoid
    assert any("1 gap(s) of 61 s" in n for n in figure.notes)
    assert not figure.disagree  # compared as mean powers, each over the time it covers


def test_no_counter_is_integrated_power_labelled() -> None:
    t = np.arange(0.0, 10.0)
    w = np.full(t.size, 100.0)
    why = "no energy counter on this GPU (Volta or later, and not every board): energy from power samples only"
    figure = _run(t, [None] * t.size, w, why).figure(0)
    assert figure.source == "integrated power" and figure.joules == pytest.approx(900.0) and figure.mean_w == pytest.approx(100.0)
    assert figure.notes[0] == why and "no energy counter readings: the figure is integrated power" in figure.notes


def test_counter_and_power_that_disagree_are_both_given() -> None:
    t = np.arange(0.0, 60.0)
    w = np.full(t.size, 400.0)
    figure = _run(t, _counter(t, w * 0.8), w).figure(0)  # the counter says 320 W
    _same(figure, gpu_energy(t, _counter(t, w * 0.8), w))
    assert figure.disagree and any("differ by more than 5%" in n for n in figure.notes)


def test_unseen_gpu_one_reading_and_the_cache() -> None:
    tally = EnergyTally()
    assert tally.figure(3) is None and 3 not in tally
    tally.add(3, 0.0, 1000.0, 100.0)
    first = tally.figure(3)
    assert first is not None and first.joules is None and first.source == ""  # n/a, never 0
    tally.add(3, 1.0, 1100.0, 100.0)
    assert tally.figure(3).joules == pytest.approx(0.1)  # the cached figure is dropped by a new reading


def test_a_fixed_tally_answers_with_its_figures() -> None:
    """A replay's tally: figures counted elsewhere (up to its cursor), given back as they are."""
    figure = gpu_energy([0, 1, 2], [0, 300_000, 600_000], [300.0] * 3)
    tally = EnergyTally.fixed({2: figure})
    assert 2 in tally and 0 not in tally and tally.figure(2) is figure and tally.figure(0) is None


def test_history_carries_a_tally_per_history() -> None:
    assert isinstance(History().energy, EnergyTally) and History().energy is not History().energy


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.5, 1.0, 1.5]), st.floats(0.0, 700.0), st.booleans(), st.booleans()), min_size=0, max_size=40))
def test_stepwise_equals_the_whole_series(steps: list[tuple[float, float, bool, bool]]) -> None:
    """Random power, resets and missing counter readings, at intervals no gap rule tells apart
    (a gap is judged on the recent steps here, on all of them there): the running tally is
    gpu_energy over every reading."""
    t, w, e = [0.0], [100.0], [1e6]
    for dt, watts, reset, missing in steps:
        t.append(t[-1] + dt)
        w.append(watts)
        previous = next((x for x in reversed(e) if x is not None), 1e6)
        e.append(None if missing else (500.0 if reset else previous + watts * dt * 1000))
    tally = _run(t, e, w)
    _same(tally.figure(0), gpu_energy(t, e, w))
