"""SVG snapshot of the browser (sync: `snap_compare` runs its own event loop).

Deterministic: a small fixed folder (tests/data/browse) opened by its relative path from the
repository root, recognition finished and the preview read before the picture is taken.
Update with `pytest tests/test_snapshots_browse.py --snapshot-update` only under the pinned
Textual, and review the SVG diff.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.browse.screen import BrowseScreen
from gpuscope.tui.screens.browse.preview import PreviewPane

ROOT = Path(__file__).resolve().parents[2]


async def _recognised_then_log(pilot: Any) -> None:
    screen = pilot.app.screen
    end = time.monotonic() + 20
    while not screen.recognition_done and time.monotonic() < end:
        await pilot.pause(0.02)
    await pilot.press("down", "down", "down", "enter")  # kernels, logs, magma: unfolded
    await pilot.pause(0.2)
    await pilot.press("down", "down")  # testing_dgemm.out, then analysis.log
    pane = screen.query_one(PreviewPane)
    while "INFO loading" not in str(pane.body) and time.monotonic() < end:
        await pilot.pause(0.02)
    await pilot.pause()


def test_browse_screen_snapshot(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the folder's label is the relative path, the same on every machine
    app = GpuscopeApp(first_screen=lambda: BrowseScreen("tests/data/browse"), mode="browse")
    assert snap_compare(app, terminal_size=(100, 30), run_before=_recognised_then_log)
