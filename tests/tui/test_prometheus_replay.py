"""The replay screen over a job read back from Prometheus (an in-memory recording, no file):
it opens, names its source, shows the GPUs and steps through the samples."""

from __future__ import annotations

import numpy as np

from gpuscope.collectors.prometheus import maps
from gpuscope.collectors.prometheus.query import Series
from gpuscope.collectors.prometheus.to_recording import Window, _Section, build_table
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.read import Recording
from gpuscope.tui.model.replay import replay_of
from gpuscope.tui.screens.replay import ReplayScreen
from loading_helpers import open_screen, until

NAME = "job 77 from Prometheus"


def imported() -> Recording:
    dcgm = maps.builtin("dcgm")
    t = 1_700_000_000.0 + 15.0 * np.arange(40)
    util = [Series({"Hostname": "n1", "gpu": str(g), "modelName": "NVIDIA H100 80GB HBM3"}, t, np.where(np.arange(40) < 20, 90.0, 2.0) + g)
            for g in range(2)]
    memory = [Series({"Hostname": "n1", "gpu": str(g)}, t, np.full(40, 30.0 * 2**30)) for g in range(2)]
    sections = {"gpu": _Section(dcgm, {"util_gpu": util, "memory_used": memory}, by_job=True)}
    table = build_table(Window("77", ("n1",), float(t[0]), float(t[-1])), sections, 15.0)
    return Recording(NAME, table, recording_schema.VERSION, [], complete=True)


async def test_the_replay_screen_opens_a_job_read_back_from_prometheus() -> None:
    rec = imported()
    replay = replay_of(rec)
    async with open_screen(lambda: ReplayScreen(rec.path, replay), ReplayScreen, (120, 40)) as (app, pilot, screen):
        await until(pilot, lambda: screen.cursor is not None)
        assert NAME in screen.sub_title and "sample 1 of 40" in screen.sub_title
        assert [g.util_gpu for g in screen.snapshot.gpus] == [90.0, 91.0]
        assert screen.snapshot.scope.label == "job 77 on n1 (from Prometheus)"
        await pilot.press("end")
        await until(pilot, lambda: "sample 40 of 40" in screen.sub_title)
        assert [g.util_gpu for g in screen.snapshot.gpus] == [2.0, 3.0]
        assert any(e.kind == "idle" for e in replay.events)  # the GPUs went idle for 5 minutes: an event to jump to


async def test_o_changes_node_in_memory_on_a_job_of_two_nodes() -> None:
    """`o` on a job read back from Prometheus moves to its other node from the table in memory
    (there is no file to reopen)."""
    dcgm = maps.builtin("dcgm")
    t = 1_700_000_000.0 + 15.0 * np.arange(10)
    util = [Series({"Hostname": node, "gpu": "0", "modelName": "NVIDIA H100 80GB HBM3"}, t, np.full(10, level))
            for node, level in (("n1", 90.0), ("n2", 10.0))]
    sections = {"gpu": _Section(dcgm, {"util_gpu": util}, by_job=True)}
    table = build_table(Window("78", ("n1", "n2"), float(t[0]), float(t[-1])), sections, 15.0)
    rec = Recording("job 78 from Prometheus", table, recording_schema.VERSION, [], complete=True)
    replay = replay_of(rec)
    async with open_screen(lambda: ReplayScreen(rec.path, replay), ReplayScreen, (120, 40)) as (app, pilot, screen):
        await until(pilot, lambda: screen.cursor is not None)
        first = screen.snapshot.host.hostname
        await pilot.press("o")
        await until(pilot, lambda: screen.snapshot is not None and screen.snapshot.host.hostname != first)
        assert {first, screen.snapshot.host.hostname} == {"n1", "n2"}
        assert [g.util_gpu for g in screen.snapshot.gpus] == ([10.0] if first == "n1" else [90.0])
