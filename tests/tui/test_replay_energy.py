"""The replay's energy at the cursor (tui/model/replay_energy.py: `energy_at`, looked up in counts
made once at open) is metrics.energy.gpu_energy over the readings up to the cursor, at every
sample: counter resets, power gaps, missing readings, time going back, a counter that starts late."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.energy import EnergyFigure, gap_limit, gpu_energy
from gpuscope.parsers.recording.columns import GpuColumns
from gpuscope.tui.model.replay import open_replay
from gpuscope.tui.model.replay_energy import energy_at, energy_series

DATA = Path(__file__).parent.parent / "data" / "recordings"


def _same(got: EnergyFigure, want: EnergyFigure) -> None:
    """Equal, the sums up to rounding (running sums against numpy's pairwise ones)."""
    for name in ("joules", "mean_w", "seconds", "counter_j", "integrated_j"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None) and (a is None or a == pytest.approx(b, rel=1e-9, abs=1e-9)), name
    assert (got.source, got.disagree, got.notes) == (want.source, want.disagree, want.notes)


def _check(times: list[float], counts: list[float], watts: list[float], note: str = "") -> None:
    t, c, w = (np.asarray(v, dtype=float) for v in (times, counts, watts))
    n = len(t)
    gpu = GpuColumns(np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan), np.zeros(n, bool),
                     readings={"energy_mj": c, "power_w": w}, notes={"energy_note": note})
    _series, views = energy_series(t, {0: gpu}, 4)
    limit = gap_limit(t, w)
    for i in range(n):
        _same(energy_at(views[0], i), gpu_energy(t[:i + 1], c[:i + 1], w[:i + 1], max_gap_s=limit, note=note))


def test_resets_gaps_missing_readings_and_time_going_back() -> None:
    nan = math.nan
    times = [0, 1, 2, 3, 4, 20, 21, 22, 22, 21.5, 23, 24, 25, 26]
    counts = [nan, nan, 5_000, 9_000, 1_000, 40_000, nan, 46_000, 47_000, 47_500, 500, 2_000, 3_000, 4_000]
    watts = [100, nan, 120, 130, 140, 150, 160, nan, 170, 170, 180, 190, 200, 210]
    _check(times, counts, watts, note="whole GPU (MIG)")
    _check(times, [nan] * len(times), watts)  # no counter: integrated power, said
    _check(times, counts, [nan] * len(times))  # no power
    _check([5.0] * 4, [1.0, 2.0, 3.0, 4.0], [100.0] * 4)  # times that never advance


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(-2, 30), st.one_of(st.none(), st.floats(0, 1e6)), st.one_of(st.none(), st.floats(0, 700))),
                min_size=1, max_size=30))
def test_any_readings(rows: list[tuple[float, float | None, float | None]]) -> None:
    times = np.cumsum([dt for dt, _, _ in rows])  # mostly forward, sometimes back
    _check(list(times), [math.nan if c is None else c for _, c, _ in rows], [math.nan if w is None else w for _, _, w in rows])


def test_the_kept_recordings_at_every_sample() -> None:
    """Version 4 (its counter) and version 3 (no counter: integrated power, and the note why)."""
    for name in ("v4.gsrec", "v3.gsrec"):
        replay = open_replay(DATA / name)
        snapshots = [replay.recording.snapshot(k) for k in range(replay.samples)]
        for g, view in replay.gpu_energy.items():
            mine = [next(x for x in s.gpus if x.index == g) for s in snapshots]
            counts, watts = [m.energy_mj for m in mine], [m.power_w for m in mine]
            limit = gap_limit(replay.times, watts)
            for i in range(replay.samples):
                want = gpu_energy(replay.times[:i + 1], counts[:i + 1], watts[:i + 1], max_gap_s=limit, note=view.energy_note)
                _same(energy_at(view, i), want)
        replay.close()
