"""metrics.energy: counter deltas (NVML resets, RAPL wraps), power integrated with gaps left out,
the GPU figure (counter first, both when they disagree), the node's RAPL figure."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.energy import (RaplSample, RaplZone, counter_delta, energy_so_far, gap_limit, gpu_energy, human_energy, integrate_power,
                                     rapl_energy)


# -- counters ---------------------------------------------------------------------------------

def test_counter_delta_is_last_minus_first_and_gaps_do_not_matter() -> None:
    d = counter_delta([0, 1, 2, 3, 60], [1_000, 2_000, None, float("nan"), 61_000], joules_per_count=1e-3)
    assert d.joules == pytest.approx(60.0) and d.seconds == 60 and d.events == 0 and d.notes == ()


def test_counter_reset_sums_before_and_after_and_says_it() -> None:
    d = counter_delta([0, 10, 20, 30], [5_000_000, 5_100_000, 40_000, 90_000], joules_per_count=1e-3)
    assert d.joules == pytest.approx(100 + 40 + 50) and d.events == 1
    assert "reset 1 time(s)" in d.notes[0] and "+10 s and +20 s" in d.notes[0] and "lower bound" in d.notes[0]


def test_counter_wrap_adds_the_range() -> None:
    d = counter_delta([0, 1, 2], [900, 100, 300], joules_per_count=1.0, wrap=1000.0, label="RAPL package-0")
    assert d.joules == 400 and d.events == 1 and d.notes == ("RAPL package-0: wrapped 1 time(s) at 1000; counted",)


def test_counter_gap_longer_than_a_wrap_is_flagged() -> None:
    # up to 10 J/s, range 1000 J: 150 s without a reading could hide a whole wrap
    times = [*range(51), 200]
    d = counter_delta(times, [10 * t % 1000 for t in times[:-1]] + [0], joules_per_count=1.0, wrap=1000.0)
    assert d.events == 1 and any("may be missed" in n for n in d.notes)
    assert not any("may be missed" in n for n in counter_delta(times[:-1], [10 * t % 1000 for t in times[:-1]], joules_per_count=1.0,
                                                               wrap=1000.0).notes)


@pytest.mark.parametrize("counts", [[], [5], [None, 7, None]])
def test_counter_with_fewer_than_two_readings_is_none(counts: list) -> None:
    d = counter_delta(list(range(len(counts))), counts, joules_per_count=1e-3)
    assert d.joules is None and d.seconds is None and "fewer than two" in d.notes[0]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**12), st.lists(st.tuples(st.integers(0, 10**9), st.booleans()), min_size=1, max_size=40))
def test_counter_delta_recovers_every_increment_across_resets(start: int, steps: list[tuple[int, bool]]) -> None:
    """A counter that grows by `inc` each reading, restarting from 0 (then counting `inc`) on a
    reset: the delta is the sum of the increments, and the resets are counted, whatever happens."""
    values, value, resets = [start], start, 0
    for inc, reset in steps:
        if reset and inc < value:  # a reload shows as a decrease only when the new count is lower
            value, resets = inc, resets + 1
        else:
            value += inc
        values.append(value)
    d = counter_delta(range(len(values)), values, joules_per_count=1.0)
    assert d.events == resets and d.joules == sum(inc for inc, _ in steps)


# -- integrated power -------------------------------------------------------------------------

def test_constant_power_integrates_exactly() -> None:
    p = integrate_power([0, 1, 2, 3, 4], [300.0] * 5)
    assert p.joules == 1200.0 and p.covered_s == 4 and p.gaps == 0 and p.notes == ()


def test_trapezoid_of_a_ramp() -> None:
    assert integrate_power([0, 2], [100.0, 300.0], max_gap_s=5).joules == 400.0


def test_gap_over_the_limit_is_not_bridged_and_said() -> None:
    p = integrate_power([0, 1, 2, 3, 63, 64], [300.0, 300, 300, 300, 600, 600])
    assert p.joules == 900 + 600 and p.covered_s == 4 and p.gaps == 1 and p.gap_s == 60
    assert "1 gap(s) of 60 s" in p.notes[0] and "3.0 s apart" in p.notes[0]  # 3 x the 1 s median


def test_missing_power_reading_is_bridged_when_short() -> None:
    p = integrate_power([0, 1, 2, 3, 4], [300.0, 300, None, 300, 300])
    assert p.joules == 1200 and p.gaps == 0


def test_times_that_go_back_are_left_out_and_said() -> None:
    p = integrate_power([0, 1, 1, 0.5, 2], [100.0] * 5, max_gap_s=5)
    assert p.joules == 100 + 150 and any("not later than" in n for n in p.notes)


@pytest.mark.parametrize(("times", "watts"), [([], []), ([0], [5.0]), ([0, 1], [None, 5.0]), ([3, 3], [1.0, 1.0])])
def test_integrate_without_two_usable_readings_is_none(times: list, watts: list) -> None:
    p = integrate_power(times, watts)
    assert p.joules is None and p.notes


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 100), st.one_of(st.none(), st.floats(0, 2000))), max_size=50))
def test_integral_is_never_negative_nor_above_max_power_times_span(points: list[tuple[float, float | None]]) -> None:
    times = [sum(dt for dt, _ in points[: k + 1]) for k in range(len(points))]
    watts = [w for _, w in points]
    p = integrate_power(times, watts)
    if p.joules is not None:
        known = [w for w in watts if w is not None]
        assert 0 <= p.joules <= max(known) * (times[-1] - times[0]) + 1e-6
        assert p.covered_s is not None and p.covered_s + p.gap_s <= times[-1] - times[0] + 1e-6


# -- one GPU's figure -------------------------------------------------------------------------

def test_counter_is_the_figure_and_agreeing_power_adds_no_note() -> None:
    f = gpu_energy([0, 1, 2, 3], [0, 300_000, 600_000, 900_000], [300.0, 300, 300, 300])
    assert (f.joules, f.source, f.mean_w, f.seconds) == (900, "energy counter", 300, 3)
    assert f.counter_j == 900 and f.integrated_j == 900 and not f.disagree and f.notes == ()


def test_counter_and_power_more_than_5_percent_apart_are_both_given() -> None:
    f = gpu_energy([0, 1, 2, 3], [0, 300_000, 600_000, 900_000], [270.0, 270, 270, 270])  # 10 % under
    assert f.disagree and f.joules == 900 and f.integrated_j == pytest.approx(810)
    assert "energy counter 900 J (300 W mean) and integrated power 810 J (270 W mean) differ by more than 5%" in f.notes[-1]
    assert not gpu_energy([0, 1, 2, 3], [0, 300_000, 600_000, 900_000], [290.0] * 4).disagree  # 3.3 %: one figure


def test_power_gap_compares_mean_powers_not_totals() -> None:
    # the counter covers 0-62 s, the power samples 0-2 and 60-62 s: the same 300 W, so no disagreement
    times = [0, 1, 2, 60, 61, 62]
    f = gpu_energy(times, [t * 300_000 for t in times], [300.0] * 6)
    assert f.joules == pytest.approx(62 * 300) and f.integrated_j == pytest.approx(4 * 300) and not f.disagree
    assert any("not bridged" in n for n in f.notes)


def test_no_counter_gives_integrated_power_labelled_with_the_reason() -> None:
    f = gpu_energy([0, 1, 2], [None, None, None], [100.0, 100, 100], note="no energy counter on this GPU")
    assert (f.joules, f.source, f.counter_j, f.mean_w) == (200, "integrated power", None, 100)
    assert f.notes[:2] == ("no energy counter on this GPU", "no energy counter readings: the figure is integrated power")


def test_nothing_readable_is_none_not_zero() -> None:
    f = gpu_energy([0, 1], [None, None], [None, None], note="GPU is lost")
    assert f.joules is None and f.mean_w is None and f.source == "" and f.notes[0] == "GPU is lost"


# -- the same figure at every sample ----------------------------------------------------------

def test_energy_so_far_ends_where_gpu_energy_sums() -> None:
    """Energy so far, sample by sample, ends on gpu_energy's figure for the same readings: the
    counter's (a driver reload mid-way summed, readings missing skipped), else integrated power
    (a gap not bridged); NaN before the first reading, never 0."""
    times = np.arange(20, dtype=float)
    power = np.full(20, 300.0)
    counter = 5e6 + np.cumsum(power) * 1000.0
    counter[12:] = np.cumsum(power[12:]) * 1000.0  # the driver reloaded: the counter starts again
    counter[[0, 5]] = np.nan
    so_far, source = energy_so_far(times, counter, power)
    expected = gpu_energy(times, [None if np.isnan(c) else c for c in counter], power)
    assert source == "energy counter" and np.isnan(so_far[0]) and so_far[1] == 0.0 and so_far[5] == so_far[4]
    assert so_far[-1] == pytest.approx(expected.joules) == expected.counter_j and np.all(np.diff(so_far[1:]) >= 0)
    gappy = np.concatenate([times[:10], times[10:] + 100.0])  # 100 s without a reading
    so_far, source = energy_so_far(gappy, np.full(20, np.nan), power)
    assert source == "integrated power" and so_far[-1] == pytest.approx(gpu_energy(gappy, [None] * 20, power).joules) == 18 * 300.0
    so_far, source = energy_so_far(times, [None] * 20, [None] * 20)
    assert source == "" and np.isnan(so_far).all()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1.0, 1.0, 30.0]),  # back in time, repeated, a gap
                          st.one_of(st.none(), st.floats(0, 1e6)), st.booleans(),  # a counter step, a driver reload
                          st.one_of(st.none(), st.floats(0, 700))), max_size=40))
def test_energy_so_far_at_each_sample_is_gpu_energy_up_to_it(steps: list[tuple[float, float | None, bool, float | None]]) -> None:
    """At every sample whose readings so far give the same source, energy_so_far is gpu_energy
    over the readings up to it (the whole readings' gap limit given to both); NaN before the
    first reading; and its last value is gpu_energy's joules over them all."""
    times, counts, watts, count = [], [], [], 1e9
    for dt, step, reload, w in steps:
        times.append((times[-1] if times else 0.0) + dt)
        if step is not None:
            count = step if reload else count + step
        counts.append(None if step is None else count)
        watts.append(w)
    limit = gap_limit(times, watts)
    so_far, source = energy_so_far(times, counts, watts, max_gap_s=limit)
    assert len(so_far) == len(times)
    whole = gpu_energy(times, counts, watts, max_gap_s=limit)
    assert source == whole.source
    if whole.joules is None:
        assert np.isnan(so_far).all()
        return
    assert so_far[-1] == pytest.approx(whole.joules, rel=1e-9, abs=1e-6)
    readings = [v is not None for v in (counts if source == "energy counter" else watts)]
    first = readings.index(True)
    assert np.isnan(so_far[:first]).all() and so_far[first] == 0.0
    for i in range(first, len(times)):
        part = gpu_energy(times[:i + 1], counts[:i + 1], watts[:i + 1], max_gap_s=limit)
        if part.source == source:
            assert so_far[i] == pytest.approx(part.joules, rel=1e-9, abs=1e-6)


# -- the node's RAPL figure -------------------------------------------------------------------

def _rapl(t: float, pkg0: int, core0: int, dram0: int, pkg1: int, psys: int) -> RaplSample:
    r = 1_000_000_000
    return RaplSample(t, (RaplZone("intel-rapl:0", "package-0", pkg0, r), RaplZone("intel-rapl:0:0", "core", core0, r),
                          RaplZone("intel-rapl:0:1", "dram", dram0, r), RaplZone("intel-rapl:1", "package-1", pkg1, r),
                          RaplZone("intel-rapl:2", "psys", psys, r)))


def test_rapl_sums_packages_and_dram_never_subzones_or_psys() -> None:
    e = rapl_energy([_rapl(0, 0, 0, 0, 0, 0), _rapl(10, 1_000_000, 800_000, 200_000, 3_000_000, 9_000_000)])
    assert e.package_j == pytest.approx(4.0) and e.dram_j == pytest.approx(0.2) and e.scope == "node" and e.seconds == 10
    assert dict(e.zones)["package-0/core"].joules == pytest.approx(0.8) and dict(e.zones)["psys"].joules == pytest.approx(9.0)


def test_rapl_reason_is_kept_and_nothing_is_zero() -> None:
    e = rapl_energy([RaplSample(0.0, reason="no RAPL zone"), RaplSample(1.0, reason="no RAPL zone")])
    assert e.package_j is None and e.dram_j is None and e.notes == ("no RAPL zone",) and e.seconds is None


@pytest.mark.parametrize(("joules", "text"), [(6.624e6, "1.84 kWh"), (51_200, "51.2 kJ"), (12.34, "12.3 J"), (None, "n/a"), (math.nan, "n/a")])
def test_human_energy(joules: float | None, text: str) -> None:
    assert human_energy(joules) == text
