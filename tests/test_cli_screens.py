"""Command-line options reach the MAGMA and kernels screens (issue 14, point 10).

`gpuscope magma PATH --metric ms --test dgemm --nodes 4 ...` opens the screen in that state, and
the state is shown on it; the app's `run` is replaced so the screen main() built is driven by Pilot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static, TabbedContent

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.cli import main
from gpuscope.tui.screens.kernels import KernelsScreen
from gpuscope.tui.screens.magma import MagmaScreen
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import settled

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "tests/data/profiles/nsys_gpukernsum_2021.csv"


def started_screen(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Any:
    started: list[Any] = []
    monkeypatch.setattr(GpuscopeApp, "run", lambda self: started.append(self._first_screen))
    assert main(argv) == 0
    return started[0]


def bar_text(screen: Any, view_id: str) -> str:
    return str(screen.query_one(f"#{view_id}", Static).render())


async def test_magma_options_open_the_screen_in_that_state(monkeypatch: pytest.MonkeyPatch, magma_data: Path) -> None:
    factory = started_screen(monkeypatch, ["magma", str(magma_data), "--metric", "ms", "--test", "dgemm", "--nodes", "4",
                                           "--impl", "cublas", "--keep-untrusted", "--peak-gflops", "3000"])
    app = GpuscopeApp(first_screen=factory)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await settled(app, pilot, MagmaScreen)
        sel = screen.selection
        assert sel is not None and (sel.test, sel.nodes, sel.metric, sel.impl) == ("dgemm", "4", "time_ms", "cublas")
        bar = bar_text(screen, screen.VIEW_ID)
        for shown in ("dgemm", "4 nodes", "ms", "cublas", "untrusted", "3000"):
            assert shown in bar, (shown, bar)
        summary = screen.query_one("#summary", ResultTableView).model
        assert summary is not None and summary.rows and "ms" in summary.columns[5].header
        assert {r[0] for r in summary.rows} == {"dgemm"} and {str(r[2]) for r in summary.rows} == {"4"}
        assert screen.peak_gflops == 3000


async def test_magma_peak_gflops_is_the_peak_values_are_checked_against(monkeypatch: pytest.MonkeyPatch, magma_data: Path) -> None:
    factory = started_screen(monkeypatch, ["magma", str(magma_data), "--test", "dgemm", "--peak-gflops", "50"])
    app = GpuscopeApp(first_screen=factory)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await settled(app, pilot, MagmaScreen)
        summary = screen.query_one("#summary", ResultTableView).model
        assert summary is not None
        impossible = summary.keys.index("impossible")
        assert sum(r[impossible] for r in summary.rows) > 0


async def test_magma_pool_nodes_and_table_open_pooled_on_that_tab(monkeypatch: pytest.MonkeyPatch, magma_data: Path) -> None:
    factory = started_screen(monkeypatch, ["magma", str(magma_data), "--pool-nodes", "--table", "comparison"])
    app = GpuscopeApp(first_screen=factory)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await settled(app, pilot, MagmaScreen)
        assert screen.selection is not None and screen.selection.pooled
        assert screen.query_one("#tables", TabbedContent).active == "tab-comparison"


async def test_magma_unknown_test_is_said_on_the_screen(monkeypatch: pytest.MonkeyPatch, magma_data: Path) -> None:
    factory = started_screen(monkeypatch, ["magma", str(magma_data), "--test", "zgemm"])
    app = GpuscopeApp(first_screen=factory)
    notes: list[str] = []
    async with app.run_test(size=(160, 40)) as pilot:
        original = app.notify
        app.notify = lambda message, **kw: (notes.append(message), original(message, **kw))[1]  # type: ignore[method-assign]
        screen = await settled(app, pilot, MagmaScreen)
        await pilot.pause()
        assert screen.selection is not None and screen.selection.test == "dgemm_vbatched"
        assert any("zgemm" in n and "dgemm" in n for n in notes), notes


async def test_kernels_options_show_on_the_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = started_screen(monkeypatch, ["kernels", str(PROFILE), "--gpu", "K40m", "--precision", "fp64", "--sort", "time",
                                           "--top", "3", "--table", "findings"])
    app = GpuscopeApp(first_screen=factory)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await settled(app, pilot, KernelsScreen)
        assert screen.view.sort == "time" and screen.view.top == 3
        bar = bar_text(screen, screen.VIEW_ID)
        assert "total time" in bar and "top 3" in bar, bar
        assert "FP64" in str(screen.query_one("#kernels-peak", Static).render())
        ranking = screen.query_one("#kernels-ranking", ResultTableView).model
        assert ranking is not None and len(ranking.rows) == 3
        assert screen.query_one("#kernels-tables", TabbedContent).active == "tab-findings"
