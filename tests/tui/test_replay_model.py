"""The replay model (tui/model/replay.py): opening a recording column-wise, the history
against what the live watch records sample by sample, events, the cursor, the jump grammar, the
lazy process lists, and recordings that are cut, foreign, multi-node or have clock jumps."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_recordings as hostile
from energy_readings import NO_GPM
from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder
from gpuscope.metrics.history import History
from gpuscope.tui.model import replay as replay_model
from gpuscope.tui.model.replay_energy import activity_text, power_text
from gpuscope.tui.model.replay import IDLE_MIN_S, SPEEDS, ReplayCursor, open_replay, parse_goto
from gpuscope.parsers.recording.schema import VERSION
from gpuscope.tui.model.watch import record

DATA = Path(__file__).parent.parent / "data" / "recordings"


def write(path: Path, snapshots, batch: int = 10) -> Path:
    with Recorder(path, batch_samples=batch) as rec:
        for s in snapshots:
            rec.add(s)
    return path


def fake(n: int, **kwargs):
    source = FakeSource(**kwargs)
    return [source.poll() for _ in range(n)]


def with_gpu(snapshot, index: int, **changes):
    gpus = tuple(dataclasses.replace(g, **changes) if g.index == index else g for g in snapshot.gpus)
    return dataclasses.replace(snapshot, gpus=gpus)


def test_history_matches_the_live_record(tmp_path: Path) -> None:
    """Every series the live watch records (bar the scope's busy cores, which need the process
    lists) equals, sample for sample, what the replay computes from the columns."""
    taken = fake(30, gpus=3, processes=12, mig=True)
    replay = open_replay(write(tmp_path / "r.gsrec", taken))
    live = History()
    for s in taken:
        record(live, s)
    whole = replay.full_history()
    assert replay.samples == 30 and np.array_equal(whole.times(), live.times())
    for name in live.names:
        if name in ("scope.cores", "scope.cpu_share"):
            assert np.isnan(whole.series(name)).all()  # n/a, never 0
            continue
        assert np.allclose(whole.series(name), live.series(name), equal_nan=True, rtol=1e-6), name
    assert whole.peak("gpu1.mem_bytes") == live.peak("gpu1.mem_bytes")


def test_history_at_the_cursor_and_its_snapshot(tmp_path: Path) -> None:
    taken = fake(25, gpus=2, processes=20)
    replay = open_replay(write(tmp_path / "r.gsrec", taken, batch=7))
    for i in (0, 6, 7, 13, 24):
        snap = replay.snapshot(i)
        assert snap == taken[i]  # processes and all, decoded from its own batch
        history = replay.history_at(i, snap)
        assert history.times()[-1] == taken[i].host.timestamp and len(history) == i + 1
        assert history.last("scope.cores") is not None  # filled from the cursor's own processes
        assert history.peak("gpu0.util") == max(s.gpus[0].util_gpu for s in taken[: i + 1])


def test_version_1_file_replays() -> None:
    replay = open_replay(DATA / "v1.gsrec")
    assert replay.samples == 12 and replay.problem is None and replay.cut_short is None
    assert replay.snapshot(11).processes and replay.nodes == ("node-a01",)
    assert replay.events == []  # memory flat all along: no peak to jump to
    replay.close()


def test_events_idle_throttle_peak_and_processes(tmp_path: Path) -> None:
    taken = fake(200, gpus=2, processes=10)
    out = []
    for i, s in enumerate(taken):
        if 50 <= i < 50 + int(IDLE_MIN_S) + 10:
            s = with_gpu(s, 0, util_gpu=0.0)  # GPU 0 idle for 70 s after being busy
        if 120 <= i < 125:
            s = with_gpu(s, 1, throttle_reasons=("sw_power_cap", "gpu_idle"))
        if i == 150:
            s = with_gpu(s, 1, memory_used=79 * 1024**3)
        if 10 <= i < 20:
            s = with_gpu(s, 0, util_gpu=1.0)  # 10 s: a pause, not an event
        if 160 <= i:
            s = dataclasses.replace(s, scope=dataclasses.replace(s.scope, pids=s.scope.pids | {99999}))
        if 180 <= i:
            s = dataclasses.replace(s, scope=dataclasses.replace(s.scope, pids=s.scope.pids - {99999, min(s.scope.pids)}))
        out.append(s)
    replay = open_replay(write(tmp_path / "r.gsrec", out, batch=60))
    by_kind = {}
    for e in replay.events:
        by_kind.setdefault(e.kind, []).append(e)
    assert [e.index for e in by_kind["idle"]] == [50] and "GPU 0 went idle" in by_kind["idle"][0].text
    assert [e.index for e in by_kind["throttle"]] == [120] and by_kind["throttle"][0].text == "GPU 1 throttled: sw_power_cap"
    assert any(e.index == 150 and "GPU 1 memory peak: 79.0 GiB" in e.text for e in by_kind["memory-peak"])
    assert [e.index for e in by_kind["process-start"]] == [160] and "99999 started" in by_kind["process-start"][0].text
    assert [e.index for e in by_kind["process-end"]] == [180] and "2 processes" in by_kind["process-end"][0].text
    cursor = ReplayCursor(replay)
    seen = []
    while found := cursor.next_event():
        seen.append(cursor.index)
        assert all(e.index == cursor.index for e in found)
    assert seen == sorted(set(e.index for e in replay.events) - {0})
    assert cursor.next_event() == [] and cursor.index == seen[-1]  # none later: stays
    assert cursor.next_event(-1) and cursor.index == seen[-2]


def test_idle_gpu_throughout_and_benign_reasons_are_no_events(tmp_path: Path) -> None:
    taken = [with_gpu(s, 0, util_gpu=0.0, throttle_reasons=("gpu_idle", "applications_clocks_setting")) for s in fake(100, gpus=1, processes=4)]
    replay = open_replay(write(tmp_path / "r.gsrec", taken))
    assert not [e for e in replay.events if e.kind in ("idle", "throttle")]


def test_cursor_steps_plays_and_clamps(tmp_path: Path) -> None:
    replay = open_replay(write(tmp_path / "r.gsrec", fake(300, gpus=1, processes=4)))
    cursor = ReplayCursor(replay)
    cursor.step(-5)
    assert cursor.index == 0
    cursor.step(3)
    assert cursor.index == 3
    cursor.step_time(60)
    assert cursor.index == 63
    cursor.step_time(-1000)
    assert cursor.index == 0
    cursor.toggle_play()
    assert cursor.playing and cursor.speed == 1.0
    assert not cursor.tick(0.5) and cursor.tick(0.6) and cursor.index == 1  # 1x: a second a second
    cursor.set_speed(1)
    cursor.set_speed(1)
    assert cursor.speed == 60.0
    cursor.tick(1.0)
    assert cursor.index == 61
    cursor.set_speed(5)
    assert cursor.speed == SPEEDS[-1]
    assert cursor.tick(10.0) and cursor.index == 299 and not cursor.playing  # stops at the end
    cursor.toggle_play()  # at the end: from the start
    assert cursor.playing and cursor.index == 0
    assert "sample 1 of 300" in cursor.title("r.gsrec") and "600x" in cursor.title("r.gsrec")


def test_goto_grammar(tmp_path: Path) -> None:
    replay = open_replay(write(tmp_path / "r.gsrec", fake(7200 // 10, gpus=1, processes=2), batch=60))
    cursor = ReplayCursor(replay)
    start = replay.times[0]
    cursor.goto("1m")
    assert replay.times[cursor.index] == start + 60
    cursor.goto("+90s")
    assert replay.times[cursor.index] == start + 150
    cursor.goto("-2m")
    assert replay.times[cursor.index] == start + 30
    cursor.goto("#500")
    assert cursor.index == 499
    clock = datetime.fromtimestamp(start + 125).strftime("%H:%M:%S")
    cursor.goto(clock)
    assert replay.times[cursor.index] == start + 125
    cursor.goto("1h")  # past the end: the last sample
    assert cursor.index == replay.samples - 1
    for bad in ("soon", "12", "#0", "#100000", "25:00", ""):
        with pytest.raises(ValueError):
            cursor.goto(bad)
    outside = datetime.fromtimestamp(start + 7200).strftime("%H:%M")
    with pytest.raises(ValueError, match="not in the recording"):
        cursor.goto(outside)


@settings(max_examples=75, deadline=None)
@given(text=st.text(max_size=20), now=st.floats(0, 1e5), length=st.floats(0, 1e5), samples=st.integers(1, 10**6))
def test_goto_never_raises_anything_but_value_error(text: str, now: float, length: float, samples: int) -> None:
    start = 1_700_000_000.0
    try:
        what, value = parse_goto(text, start + now, start, start + length, samples)
    except ValueError:
        return
    assert what in ("time", "sample") and np.isfinite(value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.one_of(st.integers(-400, 400).map(lambda n: ("step", n)), st.floats(-500, 500).map(lambda s: ("time", s)),
                                st.floats(0, 100).map(lambda s: ("tick", s)), st.just(("play", 0)), st.integers(-1, 1).map(lambda n: ("event", n))),
                      max_size=30))
def test_cursor_stays_in_range(steps, tmp_path_factory) -> None:
    replay = CURSOR_REPLAY.get("r") or CURSOR_REPLAY.setdefault("r", open_replay(write(tmp_path_factory.mktemp("c") / "r.gsrec", fake(90, gpus=1, processes=2))))
    cursor = ReplayCursor(replay)
    for kind, value in steps:
        before = cursor.index
        if kind == "step":
            cursor.step(value)
        elif kind == "time":
            cursor.step_time(value)
        elif kind == "tick":
            cursor.tick(value)
            assert cursor.index >= before  # playing never goes back
        elif kind == "play":
            cursor.toggle_play()
        else:
            cursor.next_event(value or 1)
        assert 0 <= cursor.index < replay.samples


CURSOR_REPLAY: dict[str, replay_model.Replay] = {}


def test_clock_jump_back_never_moves_the_cursor_back(tmp_path: Path) -> None:
    taken = fake(40, gpus=1, processes=2)
    jumped = [dataclasses.replace(s, host=dataclasses.replace(s.host, timestamp=s.host.timestamp - (30 if i >= 20 else 0))) for i, s in enumerate(taken)]
    replay = open_replay(write(tmp_path / "r.gsrec", jumped))
    assert replay.times[20] < replay.times[19] and (np.diff(replay.clock) >= 0).all()
    cursor = ReplayCursor(replay)
    cursor.go(19)
    cursor.playing = True
    for _ in range(30):
        before = cursor.index
        cursor.tick(1.0)
        assert cursor.index >= before
    assert cursor.index == 39


def test_multi_node_recording_shows_one_node(tmp_path: Path) -> None:
    a, b = fake(20, gpus=2, processes=4), fake(20, gpus=1, processes=4)
    b = [dataclasses.replace(s, host=dataclasses.replace(s.host, hostname="node-b")) for s in b]
    mixed = [s for pair in zip(a, b) for s in pair]
    replay = open_replay(write(tmp_path / "r.gsrec", mixed, batch=6))
    assert replay.nodes == ("node-a01", "node-b") and replay.node == "node-a01" and replay.samples == 20
    assert replay.snapshot(7) == a[7] and "node node-a01 (1 of 2)" in ReplayCursor(replay).title("r")
    other = open_replay(tmp_path / "r.gsrec", node="node-b")
    assert other.snapshot(19) == b[19] and len(other.snapshot(0).gpus) == 1


def test_cut_recording_says_so_and_replays_what_is_there(tmp_path: Path) -> None:
    path = write(tmp_path / "r.gsrec", fake(40, gpus=1, processes=5), batch=10)
    data = path.read_bytes()
    (tmp_path / "cut.gsrec").write_bytes(data[: len(data) * 3 // 4])
    replay = open_replay(tmp_path / "cut.gsrec")
    assert 10 <= replay.samples < 40 and replay.cut_short is not None and replay.problem is None
    assert replay.snapshot(replay.samples - 1).processes


@pytest.mark.parametrize("content", [b"", b"a,b\n1,2\n", b"\xff\xff\xff\xff" + b"\x00" * 40])
def test_foreign_files_have_a_problem_not_a_traceback(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "x.gsrec").write_bytes(content)
    replay = open_replay(tmp_path / "x.gsrec")
    assert replay.samples == 0 and replay.problem
    replay.close()


def test_no_gpu_recording(tmp_path: Path) -> None:
    replay = open_replay(write(tmp_path / "r.gsrec", fake(5, backend="none", processes=3)))
    assert replay.samples == 5 and np.isnan(replay.series["gpu.util_mean"]).all() and not replay.events
    assert replay.snapshot(4).gpus == ()


def test_scope_fields_cannot_be_faked_by_a_label(tmp_path: Path) -> None:
    taken = fake(3, gpus=1, processes=3)
    taken = [dataclasses.replace(s, scope=dataclasses.replace(s.scope, label='x","pids":[1,2,3],"memory_used":5')) for s in taken]
    replay = open_replay(write(tmp_path / "r.gsrec", taken))
    assert replay.series["scope.mem"][0] == taken[0].scope.memory_used


@pytest.mark.parametrize("order", [sorted, lambda keys: list(reversed(list(keys)))], ids=["sorted keys", "reversed keys"])
def test_the_replay_scope_does_not_depend_on_json_field_order(tmp_path: Path, order) -> None:
    """A version 1 file's scope (JSON text, its keys in any order) replays as the same scope
    written now (a struct): the scope's memory, the process events, the snapshots."""
    taken = fake(12, gpus=1, processes=6)
    for i in range(6, 12):
        taken[i] = dataclasses.replace(taken[i], scope=dataclasses.replace(taken[i].scope, pids=taken[i].scope.pids | {99999}))
    taken[11] = dataclasses.replace(taken[11], scope=dataclasses.replace(taken[11].scope, kind="node", memory_used=None, pids=frozenset()))
    new = open_replay(write(tmp_path / "now.gsrec", taken))
    old = open_replay(hostile.scope_json_v1(tmp_path / "v1.gsrec", taken, order))
    try:
        assert old.recording.version == 1 and new.recording.version == VERSION
        assert np.array_equal(old.series["scope.mem"], new.series["scope.mem"], equal_nan=True)
        assert old.series["scope.mem"][0] == taken[0].scope.memory_used and old.series["scope.mem"][11] == taken[11].host.memory.used
        assert old.events == new.events and [e.kind for e in old.events if e.kind.startswith("process")] == ["process-start", "process-end"]
        assert old.snapshot(3) == new.snapshot(3) == taken[3]
    finally:
        old.close()
        new.close()


def test_summary_names_gpus_with_the_same_news_together() -> None:
    from gpuscope.tui.model.replay import Event, summary

    events = [Event(5, 0.0, "throttle", f"GPU {g} throttled: sw_power_cap") for g in (0, 1, 4)]
    events += [Event(5, 0.0, "throttle", "GPU 2 throttled: hw_slowdown"), Event(5, 0.0, "process-start", "process 7 started")]
    assert summary(events) == ["GPUs 0, 1, 4 throttled: sw_power_cap", "GPU 2 throttled: hw_slowdown", "process 7 started"]


def test_the_real_job_recording_has_the_jobs_memory_peak_and_its_processes() -> None:
    """examples/recording/slurm-job.gsrec was recorded on a real Slurm job (no GPU): the job's
    memory peak (its cgroup use, out of its --mem) is an event beside the processes ending."""
    replay = open_replay(Path(__file__).parents[2] / "examples" / "recording" / "slurm-job.gsrec")
    peaks = [e for e in replay.events if e.kind == "memory-peak"]
    assert len(peaks) == 1 and peaks[0].text.startswith("job memory peak: ") and " of 240 MiB" in peaks[0].text
    used = replay.series["scope.mem"]
    assert used[peaks[0].index] == np.nanmax(used) > used[0] and used[-1] < used[peaks[0].index]  # it rose, then was freed
    assert sum(e.kind == "process-end" for e in replay.events) >= 2


def test_a_node_scope_has_no_scope_memory_peak(tmp_path: Path) -> None:
    """A node's memory is the host's: what the host pane shows, not an event of its own."""
    path = write(tmp_path / "n.gsrec", fake(5, gpus=0, processes=3))
    assert not [e for e in open_replay(path).events if e.kind == "memory-peak"]


def test_energy_and_activity_series_of_the_kept_recordings() -> None:
    """Version 4: energy from the counter, activity where GPM read it (NaN on the first sample
    and on GPU 1, which has none, with why); version 3: energy from integrated power, activity
    n/a as not recorded."""
    new = open_replay(DATA / "v4.gsrec")
    view = new.gpu_energy[0]
    assert view.energy_source == "energy counter" and view.power_top_w == 400.0 and view.power_top_is == "limit" and view.activity_note == ""
    sm = new.series["gpu0.sm_active"]
    assert np.isnan(sm[0]) and not np.isnan(sm[1:]).any() and np.isnan(new.series["gpu1.sm_active"]).all()
    assert new.gpu_energy[1].activity_note == NO_GPM and activity_text(new.gpu_energy[1], new.series, 5).note == f"activity n/a: {NO_GPM}"
    snap = new.snapshot(11)
    energy = (snap.gpus[0].energy_mj - new.snapshot(0).gpus[0].energy_mj) / 1000.0
    assert new.series["gpu0.energy_j"][11] == pytest.approx(energy) and new.series["gpu0.energy_pct"][11] == pytest.approx(100.0)
    text = power_text(view, new.series, 11)
    assert text.title == "GPU 0 power" and text.legends[0] == f"{snap.gpus[0].power_w:.0f} W of 400 W limit" and text.note == ""
    assert activity_text(view, new.series, 11).legends[0] == f"SM active {snap.gpus[0].sm_active_pct:.0f} %"
    old = open_replay(DATA / "v3.gsrec")
    view = old.gpu_energy[0]
    assert view.energy_source == "integrated power" and "version 3" in view.energy_note and "version 3" in view.activity_note
    assert power_text(view, old.series, 5).legends[1].startswith("energy (integrated power) ")
    assert np.isnan(old.series["gpu0.sm_active"]).all() and np.isnan(old.series["gpu0.dram_bw"]).all()
    new.close()
    old.close()


def test_a_gpu_without_power_says_so(tmp_path: Path) -> None:
    taken = [with_gpu(s, 0, power_w=None, power_limit_w=None) for s in fake(5, gpus=1, processes=3)]
    replay = open_replay(write(tmp_path / "r.gsrec", taken))
    text = power_text(replay.gpu_energy[0], replay.series, 2)
    assert text.legends == ("n/a", "energy n/a") and text.note.startswith("power and energy n/a")
    replay.close()
