"""SVG snapshot tests of the watch screen (sync: `snap_compare` runs its own event loop).

Deterministic by construction: `FakeSource` returns the same numbers for poll N, timestamps
are fixed, interval=None starts no timer, the header has no clock. Update with
`pytest tests/test_snapshots_watch.py --snapshot-update` only under the pinned Textual, and
review the SVG diff.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import pytest

from fake_demo import DemoSource
from fake_watch import FakeSource
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.screens.watch.process_table import ProcessTable

POLLS = 6


def _app(demo: str | None = None, **source: Any) -> GpuscopeApp:
    """The watch of a `FakeSource`, or with `demo`, of that scenario's GPUs on the fake node."""
    return GpuscopeApp(first_screen=lambda: WatchScreen(DemoSource(demo, **source) if demo else FakeSource(**source), interval=None))


def _after(keys: Sequence[str] = (), pid: int | None = None) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        screen = pilot.app.screen
        for _ in range(POLLS):
            await screen.poll_now().wait()
            await pilot.pause()
            await pilot.pause()
        if pid is not None:
            table = screen.query_one(ProcessTable)
            table.move_cursor(row=[s.row.pid for s in table.shown].index(pid))
        await pilot.press(*keys)
        await pilot.pause()

    return run_before


CASES = {
    "training_job_120x40": ((120, 40), {}, (), None),
    "sixteen_gpus_500_processes_80x24": ((80, 24), {"gpus": 16, "processes": 500}, ("a",), None),
    "plots_and_tree_120x40": ((120, 40), {}, ("p", "a", "t"), None),
    "no_gpu_node_80x24": ((80, 24), {"backend": "none", "scope": "node", "processes": 60}, (), None),
    "signal_dialog_80x24": ((80, 24), {}, ("k",), 1000),
    "demo_activity_energy_120x40": ((120, 40), {"demo": "h100x8-llm", "scope": "node"}, (), None),
    "demo_activity_detail_80x40": ((80, 40), {"demo": "h100x8-llm"}, (), None),
}
"""name: (terminal size, FakeSource arguments, keys pressed after the polls, pid under the cursor)."""


@pytest.mark.parametrize("case", list(CASES))
def test_watch_screen_snapshot(snap_compare: Any, case: str) -> None:
    size, source, keys, pid = CASES[case]
    assert snap_compare(_app(**source), terminal_size=size, run_before=_after(keys, pid))
