"""`gpuscope watch --record FILE`: the watch screen records every refresh it shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fake_watch import FakeSource, status
from gpuscope.collectors.recorder import Recorder, RecordingError, RecordingSource
from gpuscope.parsers.recording import read as recording
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.watch.screen import WatchScreen


@pytest.mark.asyncio
async def test_the_watch_screen_records_what_it_polls(tmp_path: Path) -> None:
    path = tmp_path / "w.gsrec"
    source = RecordingSource(FakeSource(gpus=2, processes=8), Recorder(path))
    app = GpuscopeApp(first_screen=lambda: WatchScreen(source, interval=None))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        for _ in range(4):
            await screen.poll_now().wait()
        await pilot.pause()
        shown = screen.snapshot
        assert screen.sub_title.endswith(f"recording to {path} (4 samples)")
        assert "● REC" in status(screen)  # also where a short terminal hides the header
    source.close()
    back = recording.read(path)
    assert back.samples == 4 and back.snapshot(3) == shown


def test_a_write_error_stops_the_recording_not_the_watch(tmp_path: Path) -> None:
    class Full(Recorder):
        def add(self, snapshot):  # type: ignore[no-untyped-def]
            raise RecordingError("r.gsrec: the disk is full; the samples written before are kept")

    source = RecordingSource(FakeSource(gpus=1, processes=3), Full(tmp_path / "r.gsrec"))
    with pytest.raises(RecordingError, match="recording stopped: .*disk is full"):
        source.poll()
    assert source.poll().host.hostname  # watching goes on, unrecorded
    source.close()
    assert "disk is full" in (source.problem or "")


def test_record_needs_the_screen(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "watch", "--demo", "--once", "--record", str(tmp_path / "x.gsrec")],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "gpuscope record" in done.stderr and not (tmp_path / "x.gsrec").exists()
