"""Pilot tests of the scaling screen over the example logs (tests/scaling_work.py output) and MLPerf.

The logs are read once per module (injected loader), so each test drives the screen only.
"""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TabbedContent

from gpuscope.parsers.runlogs.read import read_runs
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.scaling import ScalingModel, build_model
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.studies.scaling import TABS, ScalingScreen
from gpuscope.tui.widgets.result_table import ResultTableView
from gpuscope.tui.screens.studies.scaling_plots import CurvesPlot, SpeedupPlot
from loading_helpers import open_screen, until

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scaling"
SCALING = ROOT.parent / "shared" / "data" / "scaling"
MLPERF = SCALING / "mlperf-training-v3.1"


@pytest.fixture(scope="module")
def examples() -> ScalingModel:
    return build_model(read_runs([EXAMPLES]))


def app_for(model: ScalingModel, **kwargs: Any) -> GpuscopeApp:
    return GpuscopeApp(first_screen=lambda: ScalingScreen([EXAMPLES], loader=lambda: model, **kwargs))


def active(screen: ScalingScreen) -> str:
    return str(screen.query_one("#scaling-tabs", TabbedContent).active)


def text_of(screen: ScalingScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_tabs_export_then_compare_two_runs(examples: ScalingModel, tmp_path: Path) -> None:
    """One screen on the example logs: every tab has its content, help opens, `e` writes the
    tab shown, then two runs marked are compared (curves overlaid, settings diffed)."""
    async with open_screen(app_for(examples), ScalingScreen, (120, 40)) as (app, pilot, screen):
        assert active(screen) == "tab-speedup" and "12 runs" in str(screen.sub_title)
        assert screen.query_one("#speedup-plot", SpeedupPlot).display
        assert "serial fraction" in text_of(screen, "#speedup-note")  # the Amdahl fit under the curve
        assert "folder name 'workers-1'" in text_of(screen, "#scaling-origin")  # where the counts came from
        for i, tab in enumerate(TABS, start=1):
            await pilot.press(str(i))
            await pilot.pause()
            assert active(screen) == tab
        speedup = screen.query_one("#scaling-speedup", ResultTableView).model
        assert speedup is not None and [row[speedup.keys.index("resources")] for row in speedup.rows] == [1, 2, 4, 8]
        runs = screen.query_one("#scaling-runs", ResultTableView).model
        assert runs is not None and len(runs.rows) == 12 and "resources_from" in runs.keys
        accuracy = screen.query_one("#scaling-accuracy", ResultTableView).model
        assert accuracy is not None and accuracy.rows
        await pilot.press("question_mark")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen, "escape closes help"
        # `e` writes the tab shown.
        for tab, name in (("4", "runs.csv"), ("1", "speedup.txt")):
            await pilot.press(tab, "e")
            await pilot.pause()
            await until(pilot, lambda: isinstance(app.screen, ExportModal))
            assert isinstance(app.screen, ExportModal)
            app.screen.query_one("#export-path", Input).value = str(tmp_path / name)
            await pilot.press("enter")
            await pilot.pause()
        with open(tmp_path / "runs.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert len(rows) == 12 and "resources_from" in rows[0] and "mark" not in rows[0]
        text = (tmp_path / "speedup.txt").read_text()
        assert "Speedup analysis" in text and "ideal" in text and "processes (log2)" in text
        assert isinstance(screen, ScalingScreen)
        # Compare: two runs marked in the Runs tab, curves overlaid and settings diffed.
        await pilot.press("space")  # not in the Runs tab: nothing is marked
        assert screen.marked == ()
        await pilot.press("4")
        await pilot.pause()
        screen.query_one("#scaling-runs", ResultTableView).focus()
        await pilot.press("space")  # run 1 (1 worker), the cursor moves on
        for _ in range(9):
            await pilot.press("down")
        await pilot.press("space")  # run 11 (8 workers)
        await pilot.pause()
        assert screen.marked == (1, 11)
        runs = screen.query_one("#scaling-runs", ResultTableView).model
        assert runs is not None and [row[0] for row in runs.rows].count("✓") == 2
        await pilot.press("c")
        await pilot.pause()
        assert active(screen) == "tab-compare"
        plot = screen.query_one("#compare-plot", CurvesPlot)
        assert plot.display and screen.metric == "loss"
        settings = screen.query_one("#compare-settings", ResultTableView).model
        assert settings is not None and settings.keys == ["setting", "same", "run_1", "run_11"]
        by_name = {row[0]: row for row in settings.rows}
        assert by_name["resources"][1:] == ("no", "1", "8") and by_name["epochs"][1] == "yes"
        assert settings.rows[0][1] == "no"  # what differs comes first
        assert "2 runs" in text_of(screen, "#compare-hint")
        await pilot.press("m")
        await pilot.pause()
        assert screen.metric == "val_loss"
        await pilot.press("4", "space")  # the cursor moved on to run 12: a third run
        await pilot.pause()
        assert screen.marked == (1, 11, 12)
        assert "#1, #11, #12" in text_of(screen, f"#{screen.VIEW_ID}")


async def test_several_series_are_drawn_together_then_apart() -> None:
    if not MLPERF.is_dir():
        pytest.skip("../shared/data/scaling is absent")
    model = build_model(read_runs([MLPERF, EXAMPLES]))
    async with open_screen(GpuscopeApp(first_screen=lambda: ScalingScreen([MLPERF, EXAMPLES], loader=lambda: model, tab="diff")), ScalingScreen, (80, 24)) as (app, pilot, screen):
        assert active(screen) == "tab-diff" and len(model.series) == 3
        assert "systems/eos_ngc23.09_mxnet.json" in text_of(screen, "#scaling-origin")
        speedup = screen.query_one("#scaling-speedup", ResultTableView).model
        assert speedup is not None and len({row[0] for row in speedup.rows}) == 3
        await pilot.press("n")
        await pilot.pause()
        assert screen.series == "resnet (gpus)"
        speedup = screen.query_one("#scaling-speedup", ResultTableView).model
        assert speedup is not None and {row[0] for row in speedup.rows} == {"resnet (gpus)"}
        diff = screen.query_one("#scaling-diff", ResultTableView).model
        assert diff is not None and {row[1] for row in diff.rows} == {"local batch size"}
        for _ in range(3):
            await pilot.press("n")
        await pilot.pause()
        assert screen.series == "all"


async def test_no_runs_shows_why(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    async with open_screen(GpuscopeApp(first_screen=lambda: ScalingScreen([tmp_path])), ScalingScreen, (80, 24)) as (app, pilot, screen):
        assert "No runs found" in text_of(screen, "#scaling-empty-message")
        await pilot.press("e")  # dimmed: nothing to export
        await pilot.pause()
        assert not isinstance(app.screen, ExportModal)


async def test_outside_text_is_shown_as_typed(tmp_path: Path) -> None:
    """A folder named with markup and an escape sequence: shown as plain text, the escape removed."""
    import shutil

    for n, log in ((1, "c1/log.mnist-1001"), (2, "c2/log.mnist-1002")):
        folder = tmp_path / f"[bold]run\x1b]0;owned\x07-threads-{n}"
        folder.mkdir()
        shutil.copy(ROOT / "tests/data/scaling/seed004" / log, folder / "log.txt")
    model = build_model(read_runs([tmp_path]))
    async with open_screen(GpuscopeApp(first_screen=lambda: ScalingScreen([tmp_path], loader=lambda: model, tab="runs")), ScalingScreen, (200, 40)) as (app, pilot, screen):
        table = screen.query_one("#scaling-runs", ResultTableView)
        shown = [table.get_row_at(r) for r in range(table.row_count)]
        files = [cell.plain for row in shown for cell in row if "log.txt" in cell.plain]
        assert files and all("[bold]run" in f and "\x1b" not in f and "\x07" not in f for f in files), files
        origin = text_of(screen, "#scaling-origin")
        assert "[bold]run" in origin and "\x1b" not in origin


async def test_unknown_series_says_what_exists(examples: ScalingModel) -> None:
    model = build_model(examples.result, series="nope")
    async with open_screen(GpuscopeApp(first_screen=lambda: ScalingScreen([EXAMPLES], loader=lambda: model, series="nope")), ScalingScreen, (80, 24)) as (app, pilot, screen):
        assert "matches nothing; present: seed004 (processes)" in text_of(screen, "#scaling-empty-message")


def screen_lines(app: GpuscopeApp) -> list[str]:
    """The screen as its lines of text, as a user sees it (from the SVG screenshot)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in re.findall(r'<text[^>]* x="([0-9.]+)" y="([0-9.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(parts)) for _, parts in sorted(rows.items())]


@pytest.fixture(scope="module")
def shared_model() -> ScalingModel:
    """../shared/data/scaling read once for the test below."""
    if not SCALING.is_dir():
        pytest.skip("../shared/data/scaling is absent")
    return build_model(read_runs([SCALING]))


async def test_the_screen_says_how_the_series_were_split_and_one_configuration_has_no_efficiency_bar(shared_model: ScalingModel) -> None:
    """At 80x24 and, widened, at 200x60: under the tabs, on every tab, the screen says how the
    series were split and where the resources came from; at 80x24 the efficiency tab says which
    series have one configuration only."""
    model = shared_model
    async with open_screen(GpuscopeApp(first_screen=lambda: ScalingScreen([SCALING], loader=lambda: model)), ScalingScreen, (80, 24)) as (app, pilot, screen):
        assert len(model.series) == 4  # bert on two machines, resnet, ssd
        screen.action_show_tab("tab-efficiency")
        await pilot.pause()
        note = "one configuration, no efficiency: bert · A5000 (gpus), bert · H100 (gpus)"
        assert text_of(screen, "#efficiency-note") == note
        assert any(note[:60] in line for line in screen_lines(app))
        for size in ((80, 24), (200, 60)):
            if size != (80, 24):
                await pilot.resize_terminal(*size)
                await pilot.pause()
            for tab in ("tab-speedup", "tab-table"):  # under the tabs: on every tab
                screen.action_show_tab(tab)
                await pilot.pause()
                lines = screen_lines(app)
                assert any("Series split by benchmark, accelerator, framework" in line for line in lines), (size, lines)
                assert any("Resources from" in line for line in lines), (size, lines)
