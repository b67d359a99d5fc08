"""The watch of a job on several nodes (Pilot): the switcher, n / N, the all-nodes view (GPUs as
node:index, processes with NODE), a node's stream ending and then all of them, `R` recording
every node; and the node streams fed from in-memory lines (end lines, srun's task errors)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from fake_nodes import FakeNodes
from fake_watch import FakeSource, notes, poll, table, watch_app
from gpuscope.collectors.fanout import NodesSource, NodeStreams, end_line
from gpuscope.metrics.snapshot_tables import snapshot_dict
from gpuscope.parsers.recording import read as recording
from gpuscope.tui.screens.watch.gpu_pane import GpuRows
from gpuscope.tui.screens.watch.node_switcher import NodeSwitcher
from gpuscope.tui.screens.watch.screen import WatchScreen
from loading_helpers import open_screen, polled


def switcher(screen: Any) -> str:
    widget = screen.query_one(NodeSwitcher)
    return str(widget.render().plain) if widget.display else ""


@pytest.mark.asyncio
async def test_switch_nodes_and_survive_them_ending(tmp_path: Path) -> None:
    source = FakeNodes()
    async with open_screen(watch_app(source), WatchScreen, (120, 40), ready=polled(2)) as (app, pilot, screen):
        assert "all 3 nodes" in screen.sub_title and "all 3 nodes" in switcher(screen)
        rows = screen.query_one(GpuRows)
        assert len(rows.gpus) == 6 and rows.labels is not None and "cn02:1" in rows.render().plain
        shown = table(screen).shown
        assert table(screen).node_column and {s.row.node for s in shown} == {"cn01", "cn02", "cn03"}  # type: ignore[attr-defined]
        assert len({s.row.pid for s in shown}) < len(shown)  # the same pids on every node, all listed

        # k on another node's process: refused, it is not a pid of this node
        table(screen).move_cursor(row=0)
        await pilot.press("k")
        assert any("not on this one" in n for n in notes(app))

        await pilot.press("n")
        assert "node cn01" in screen.sub_title and not table(screen).node_column
        assert len(screen.query_one(GpuRows).gpus) == 2 and screen.query_one(GpuRows).labels is None
        await pilot.press("N", "N")
        assert "node cn03" in screen.sub_title

        # R: every node's new snapshots go into one recording; R again says how many and where
        path = tmp_path / "nodes.gsrec"
        await pilot.press("R")
        await pilot.pause()
        app.screen.query_one("#record-path").value = str(path)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        await poll(pilot, 2)
        assert f"recording to {path} (6 samples)" in screen.sub_title

        source.gone["cn02"] = "Killed"
        await poll(pilot)
        assert "cn02 ended: Killed" in switcher(screen) and "node cn03" in screen.sub_title
        await pilot.press("R")
        assert any(f"recorded 8 samples to {path}" in n for n in notes(app)) and "recording" not in screen.sub_title
        await pilot.press("n")  # round to the aggregate: the ended node has left it
        assert "all 3 nodes (2 live)" in screen.sub_title and len(screen.query_one(GpuRows).gpus) == 4

        source.gone.update(cn01="the job's processes are gone", cn03="Killed")
        await poll(pilot)
        assert "every node's stream has ended" in switcher(screen)
        assert screen.snapshot is not None  # the last readings stay on screen
    back = recording.read(path)
    assert back.samples == 8 and {back.snapshot(i).host.hostname for i in range(8)} == {"cn01", "cn02", "cn03"}


@pytest.mark.asyncio
async def test_one_node_shows_no_switcher_and_r_records(tmp_path: Path) -> None:
    async with open_screen(watch_app(FakeSource(gpus=2, processes=8)), WatchScreen, (80, 24), ready=polled()) as (app, pilot, screen):
        assert not screen.query_one(NodeSwitcher).display and not table(screen).node_column
        await pilot.press("n")  # not a key here
        assert screen.nodes is None
        await pilot.press("R")
        await pilot.pause()
        box = app.screen.query_one("#record-path")
        assert box.value.startswith("gpuscope-job4242-") and box.value.endswith(".gsrec")  # type: ignore[attr-defined]
        box.value = str(tmp_path / "one.gsrec")  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        await poll(pilot, 3)
        assert screen.sub_title.endswith(f"recording to {tmp_path / 'one.gsrec'} (3 samples)")
        await pilot.press("R")
        assert any(f"recorded 3 samples to {tmp_path / 'one.gsrec'}" in n for n in notes(app))
        # a file that exists is never overwritten: said, and nothing is recorded
        await pilot.press("R")
        await pilot.pause()
        app.screen.query_one("#record-path").value = str(tmp_path / "one.gsrec")  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert any("never overwrites" in n for n in notes(app)) and "recording" not in screen.sub_title
    assert recording.read(tmp_path / "one.gsrec").samples == 3


class Lines:
    """A finished child whose stdout and stderr are in memory: NodeStreams reads them in-process."""

    def __init__(self, out: list[str], err: list[str], code: int = 0) -> None:
        self.stdout = io.BytesIO("".join(line + "\n" for line in out).encode())
        self.stderr = io.BytesIO("".join(line + "\n" for line in err).encode())
        self.code = code

    def wait(self, timeout: float | None = None) -> int:
        return self.code

    def poll(self) -> int:
        return self.code


def test_end_lines_and_srun_task_errors_end_one_node_each() -> None:
    def line(name: str) -> str:
        data = snapshot_dict(FakeSource(gpus=1, processes=4).poll())
        data["host"]["hostname"] = name
        return json.dumps(data)

    out = [line("cn01.cluster"), line("cn02"), line("cn03"), end_line("the job's processes are gone", "cn01.cluster"), line("cn02")]
    err = ["srun: error: cn03: task 2: Killed"]
    source = NodesSource(NodeStreams(["srun"], interval=1.0, popen=lambda *a, **k: Lines(out, err, 1)).start())
    deadline = time.monotonic() + 10
    while not source.streams.ended and time.monotonic() < deadline:
        time.sleep(0.01)
    for thread in source.streams._threads:  # the stderr reader too
        thread.join(5)
    reading = source.poll()
    source.close()
    assert [s.host.hostname for s in reading.fresh] == ["cn01.cluster", "cn02", "cn03", "cn02"]
    states = {s.node: s.status for s in reading.states}
    assert states["cn01.cluster"] == "ended: the job's processes are gone"
    assert states["cn03"] == "ended: Killed" and states["cn02"] == "ended: srun ended"
    assert reading.ended and "status 1" in (reading.error or "")
    assert source.poll().fresh == ()  # drained once


def test_collect_stream_ends_with_why(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpuscope collect --stream`, as srun runs it on each node: snapshots, then the end line."""
    from gpuscope.tui.cli.main import main

    assert main(["collect", "--stream", "--demo", "--count", "2", "--interval", "0.5"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3 and all("host" in line for line in lines[:2])
    assert lines[2] == {"stream_end": "2 samples taken", "hostname": lines[0]["host"]["hostname"]}


def test_all_nodes_needs_a_job_and_the_screen(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuscope.tui.cli.main import main

    assert main(["watch", "--demo", "--all-nodes"]) == 2
    assert "--all-nodes goes with --job" in capsys.readouterr().err
