"""Command-line options reach the MAGMA and kernels screens.

`gpuscope magma PATH --metric ms --test dgemm --nodes 4 ...` opens the screen in that state, and
the state is shown on it; the app's `run` is replaced so the screen main() built is driven by Pilot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static, TabbedContent

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.cli.main import main
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import open_screen, settled

ROOT = Path(__file__).resolve().parents[2]
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
    async with open_screen(GpuscopeApp(first_screen=factory), MagmaScreen, (160, 40)) as (app, pilot, screen):
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
    async with open_screen(GpuscopeApp(first_screen=factory), MagmaScreen, (160, 40)) as (app, pilot, screen):
        summary = screen.query_one("#summary", ResultTableView).model
        assert summary is not None
        impossible = summary.keys.index("impossible")
        assert sum(r[impossible] for r in summary.rows) > 0


async def test_magma_pool_nodes_and_table_open_pooled_on_that_tab(monkeypatch: pytest.MonkeyPatch, magma_data: Path) -> None:
    factory = started_screen(monkeypatch, ["magma", str(magma_data), "--pool-nodes", "--table", "comparison"])
    async with open_screen(GpuscopeApp(first_screen=factory), MagmaScreen, (160, 40)) as (app, pilot, screen):
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
                                           "--top", "1", "--table", "findings"])
    async with open_screen(GpuscopeApp(first_screen=factory), KernelsScreen, (160, 40)) as (app, pilot, screen):
        assert screen.view.sort == "time" and screen.view.top == 1
        bar = bar_text(screen, screen.VIEW_ID)
        assert "total time" in bar and "top 1" in bar, bar
        assert "FP64" in str(screen.query_one("#kernels-peak", Static).render())
        ranking = screen.query_one("#kernels-ranking", ResultTableView).model
        assert ranking is not None and len(ranking.rows) == 1
        assert screen.query_one("#kernels-tables", TabbedContent).active == "tab-findings"


LONG_NAMES = ROOT / "tests/data/profiles/nsys_cuda_gpu_kern_sum_16448.csv"
LONG = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char *, 3>>(int, T2, T3)"


def column_widths(table: ResultTableView) -> dict[str, int]:
    return {str(key.value): column.get_render_width(table) for key, column in table.columns.items()}


async def test_kernel_names_use_the_width_and_keep_their_function_name() -> None:
    """A long C++ name is folded (templates and arguments to `‹…>(…)`), not cut: the function stays."""
    async with open_screen(GpuscopeApp(first_screen=lambda: KernelsScreen([str(LONG_NAMES)], gpu="A100")), KernelsScreen, (200, 60)) as (app, pilot, screen):
        await pilot.pause()
        table = screen.query_one("#kernels-ranking", ResultTableView)
        widths = column_widths(table)
        assert widths["kernel"] > 40 + 2  # not cut at 40 when there is room
        assert sum(widths.values()) <= table.size.width  # and every column fits
        shown = table.get_cell_at(table.cursor_coordinate._replace(row=0, column=0)).plain
        assert shown == "void at::native::vectorized_elementwise_kernel<…>(…)"  # folded, not cut: the function name stays


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_magma_comparison_fits_with_verdict_and_p(magma_data: Path, size: tuple[int, int]) -> None:
    from gpuscope.parsers.magma.read import read_tree

    result = read_tree([magma_data])
    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen([magma_data], loader=lambda: result)), MagmaScreen, size) as (app, pilot, screen):
        await pilot.press("c")
        await pilot.pause()
        table = screen.query_one("#comparison", ResultTableView)
        widths = column_widths(table)
        assert "verdict" in widths and "p_value" in widths
        assert sum(widths.values()) <= table.size.width, (widths, table.size.width)
        await pilot.press("s")
        await pilot.pause()
        summary = screen.query_one("#summary", ResultTableView)
        keys = list(column_widths(summary))
        if size[0] >= 200:  # the whiskers fit the half of 200 columns the tables get
            upto = keys.index("gflops_whisker_hi") + 1
            assert sum(list(column_widths(summary).values())[:upto]) <= summary.size.width


async def test_magma_export_writes_the_tab_shown(tmp_path: Path, magma_data: Path) -> None:
    import csv

    from gpuscope.parsers.magma.read import read_tree

    result = read_tree([magma_data])
    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen([magma_data], loader=lambda: result)), MagmaScreen, (160, 40)) as (app, pilot, screen):
        await pilot.press("c")
        screen.export_to(str(tmp_path / "c.csv"))
        header = next(csv.reader((tmp_path / "c.csv").open()))
        assert "ratio_to_best" in header and "verdict" in header
        await pilot.press("f")
        screen.export_to(str(tmp_path / "f.json"))
        assert '"severity"' in (tmp_path / "f.json").read_text()
        await pilot.press("s")
        screen.export_to(str(tmp_path / "s.csv"))
        assert "gflops_whisker_lo" in next(csv.reader((tmp_path / "s.csv").open()))
