"""SVG snapshot tests (sync: `snap_compare` runs its own event loop).

Deterministic by construction: the result is read before the app starts and injected, the
header has no clock and nothing runs on a timer. Update with `pytest --snapshot-update` only
under the pinned Textual, and review the SVG diff.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from textual.worker import WorkerCancelled

from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.kernels import build_model
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "magma"
KERNEL_SAMPLE = Path(__file__).resolve().parent.parent / "data" / "kernels"


async def _loaded(pilot: Any) -> None:
    with suppress(WorkerCancelled):
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/magma is missing")
def test_magma_screen_snapshot(snap_compare: Any) -> None:
    # Only the committed examples: the SVG must not depend on which data a machine has.
    result = read_tree([EXAMPLES])
    # A fixed label instead of the folder, whose absolute path differs between machines.
    app = GpuscopeApp(first_screen=lambda: MagmaScreen(["examples/magma"], loader=lambda: result))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_loaded)


def test_kernels_screen_snapshot(snap_compare: Any) -> None:
    # The bundled sample (two runs, a marker file beside them), read before the app starts and
    # shown under a fixed relative label, so the SVG is the same on every machine.
    model = build_model([str(KERNEL_SAMPLE)], gpu="K40m")
    app = GpuscopeApp(first_screen=lambda: KernelsScreen(["tests/data/kernels"], loader=lambda: model))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_loaded)
