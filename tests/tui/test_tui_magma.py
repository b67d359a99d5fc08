"""Pilot tests of the MAGMA screen over real MAGMA outputs (injected loader, no terminal)."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen
from gpuscope.tui.screens.studies.boxplots import BoxPlot, BoxPlotStack
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import capture_notifications, open_screen, settled, until


def magma_app(folder: Path, **kwargs: Any) -> GpuscopeApp:
    result = read_tree([folder], **kwargs)
    return GpuscopeApp(first_screen=lambda: MagmaScreen([folder], loader=lambda: result))


async def settle(app: GpuscopeApp, pilot: Any) -> MagmaScreen:
    return await settled(app, pilot, MagmaScreen)


def summary_model(screen: MagmaScreen):
    model = screen.query_one("#summary", ResultTableView).model
    assert model is not None
    return model


async def test_loads_then_metric_test_and_cluster_keys_change_plots_and_tables(magma_data: Path) -> None:
    """One screen through its browsing keys: what it shows once loaded, the findings, `m`, `t`,
    `n`/`N` and the command palette (each check says which step it is)."""
    from gpuscope.tui.commands import GpuscopeCommands

    async with open_screen(magma_app(magma_data), MagmaScreen, (120, 40)) as (app, pilot, screen):
        # Loaded: plots, tables, title.
        assert screen.model is not None and not screen.model.empty
        assert screen.selection is not None and screen.selection.nodes == "all"
        stack = screen.query_one("#plots", BoxPlotStack)
        assert stack.sizes and len(stack.plots) == len(stack.sizes)
        assert summary_model(screen).rows
        assert "MAGMA" in (screen.sub_title or "")
        assert "files" in (screen.sub_title or "")

        # Findings listed.
        findings = screen.query_one("#findings", DataTable)
        assert findings.row_count == len(screen.model.result.findings) > 0
        severities = {findings.get_cell_at((r, 0)).plain for r in range(findings.row_count)}
        assert severities <= {"error", "warning", "info"}

        # `m` switches the metric of the plots and the table, and back.
        assert "gflops_median" in summary_model(screen).keys
        await pilot.press("m")
        await pilot.pause()
        assert screen.selection.metric == "time_ms", "m: metric"
        assert "time_ms_median" in summary_model(screen).keys, "m: table"
        stack = screen.query_one("#plots", BoxPlotStack)
        assert stack.metric == "time_ms", "m: plots"
        assert all(plot.metric == "time_ms" for plot in stack.query(BoxPlot)), "m: each plot"
        await pilot.press("m")
        await pilot.pause()
        assert screen.selection.metric == "gflops", "m again: metric back"
        assert "gflops_median" in summary_model(screen).keys, "m again: table back"

        # The command palette offers the screen's actions and runs them.
        provider = GpuscopeCommands(screen)
        titles = [title for title, _, _ in provider._available()]
        assert titles == ["Switch metric", "Next cluster size", "Next MAGMA test", "Export summary", "Toggle theme"]
        hits = [hit async for hit in provider.search("metric")]
        assert hits and hits[0].text == "Switch metric"
        await hits[0].command()  # type: ignore[misc]
        await pilot.pause()
        assert screen.selection.metric == "time_ms", "palette: Switch metric"
        await pilot.press("m")
        await pilot.pause()
        assert screen.selection.metric == "gflops"

        # `n` cycles the cluster sizes, wraps round to pooled; `N` goes backwards.
        model = screen.model
        assert len(model.node_counts) >= 2
        nodes_col = summary_model(screen).keys.index("nodes")
        assert {row[nodes_col] for row in summary_model(screen).rows} == {"all"}
        seen = []
        for _ in model.node_counts:
            await pilot.press("n")
            await pilot.pause()
            seen.append(screen.selection.nodes)
            nodes = {str(row[nodes_col]) for row in summary_model(screen).rows}
            assert nodes <= {screen.selection.nodes}, f"n: rows of {screen.selection.nodes} nodes only"
        assert seen == list(model.node_counts)
        await pilot.press("n")  # wraps round to pooled
        await pilot.pause()
        assert screen.selection.nodes == "all", "n: wraps round to pooled"
        await pilot.press("N")  # and backwards to the largest size
        await pilot.pause()
        assert screen.selection.nodes == model.node_counts[-1], "N: backwards to the largest size"
        await pilot.press("n")  # pooled again, as `t` is checked from a fresh screen
        await pilot.pause()
        assert screen.selection.nodes == "all", "n: from the largest size to pooled"

        # `t` cycles the MAGMA test (where the data times more than one).
        if len(screen.model.tests) >= 2:
            first = screen.selection.test
            await pilot.press("t")
            await pilot.pause()
            assert screen.selection.test != first, "t: next test"
            test_col = summary_model(screen).keys.index("test")
            assert {row[test_col] for row in summary_model(screen).rows} == {screen.selection.test}, "t: table"


async def test_export_cancel_error_write_replace_then_help_theme_and_quit(magma_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One screen through the Export modal (cancel, an unwritable path, a new file, a file to
    replace), then help, theme and quit."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    app = magma_app(magma_data)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(app, pilot)
        notes = capture_notifications(app)

        # Cancel writes nothing.
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen, "escape closes the Export modal"
        assert not any(cwd.iterdir()), "a cancelled export writes nothing"

        # An unwritable path: an error notification, nothing written.
        unwritable = tmp_path / "no-such-dir" / "summary.csv"
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(unwritable)
        await pilot.press("enter")
        await pilot.pause()
        assert not unwritable.exists()
        errors = [n for n in notes if n.get("severity") == "error"]
        assert errors and str(unwritable) in errors[0]["message"], "unwritable: the error names the path"
        assert app.screen is screen

        # A new file: the summary as CSV, and a notification that says where.
        target = tmp_path / "out" / "summary.csv"
        target.parent.mkdir()
        await pilot.press("e")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal)
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "magma-summary.csv", "the Export modal's default name"
        field.value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen, "a written export closes the modal"
        with target.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows[0][:6] == ["test", "environment", "nodes", "problem_size", "count", "gflops_median"]
        assert len(rows) > 1
        assert any(str(target) in n["message"] and n.get("severity", "information") != "error" for n in notes)

        # A file there already: the first Export only warns, the second replaces it.
        keep = tmp_path / "keep.csv"
        keep.write_text("precious\n")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(keep)
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal), "the first Export over a file only warns"
        assert keep.read_text() == "precious\n"
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen
        assert keep.read_text().startswith("test,environment"), "the second Export replaces the file"

        # Theme, help and quit.
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"
        await pilot.press("question_mark")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert isinstance(app.screen, HelpScreen)
        described = {description for _, description, _ in app.screen.keys}
        assert {"Metric", "Nodes", "Test", "Export", "Quit", "Help"} <= described
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_markup_in_environment_name_is_literal(magma_data: Path, tmp_path: Path) -> None:
    source = next(p for p in sorted(magma_data.rglob("*.out")) if "vbatched" in p.name)
    for env in ("[bold]red", "plain"):
        folder = tmp_path / env / "size4"
        folder.mkdir(parents=True)
        shutil.copy(source, folder / source.name)
    async with open_screen(magma_app(tmp_path), MagmaScreen, (200, 60)) as (app, pilot, screen):
        table = screen.query_one("#summary", ResultTableView)
        shown = {cell.plain for cell in table.get_column("environment")}
        assert "[bold]red" in shown
        lines = [table.render_line(y).text for y in range(min(table.size.height, table.row_count + 1))]
        assert any("[bold]red" in line for line in lines)
        plots = list(screen.query(BoxPlot))
        assert plots and all("[bold]red" in str(plot.render()) for plot in plots)


async def test_empty_result_shows_message(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a MAGMA file\n")
    async with open_screen(magma_app(tmp_path), MagmaScreen, (80, 24)) as (app, pilot, screen):
        assert screen.model is not None and screen.model.empty
        message = str(screen.query_one("#empty-message").render())
        assert "No MAGMA results found" in message
        assert screen.query_one("#magma-switch").current == "empty"  # type: ignore[attr-defined]
        await pilot.press("m", "n", "e")  # disabled keys do nothing, raise nothing
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen


async def test_load_failure_shows_message() -> None:
    def broken() -> Any:
        raise OSError("disk on fire")

    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen(["/nowhere"], loader=broken)), MagmaScreen, (80, 24)) as (app, pilot, screen):
        assert "disk on fire" in str(screen.query_one("#empty-message").render())


async def test_i_switches_to_the_implementations_the_test_timed() -> None:
    """dgemm timed MAGMA and cuBLAS: `i` shows cuBLAS's numbers; dgemm_vbatched timed MAGMA alone."""
    from paths import EXAMPLES

    app = magma_app(EXAMPLES, exclude=["attempt-1"])
    notes = capture_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(app, pilot)
        assert screen.selection is not None and (screen.selection.test, screen.selection.impl) == ("dgemm_vbatched", "magma")
        await pilot.press("i")
        await pilot.pause()
        assert screen.selection.impl == "magma" and "one implementation only" in notes[-1]["message"]
        await pilot.press("t", "i")
        await pilot.pause()
        assert (screen.selection.test, screen.selection.impl) == ("dgemm", "cublas")
        assert "cublas" in summary_model(screen).title
        summary = screen.model.summary(screen.selection)  # type: ignore[union-attr]
        first = summary[summary["problem_size"] == "1088x1088x1088"]
        assert 1300 < first["gflops_median"].iloc[0] < 1500  # cuBLAS's first calls; MAGMA's are 14 Gflop/s warm-ups
        await pilot.press("t")
        await pilot.pause()
        assert (screen.selection.test, screen.selection.impl) == ("dgemm_vbatched", "magma")  # vbatched timed no cuBLAS


def screen_text(app: GpuscopeApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def tied_folder(magma_data: Path, tmp_path: Path) -> Path:
    """The two Google environments of the examples alone: their medians differ by noise only."""
    google = magma_data / "google"
    if not google.is_dir():
        pytest.skip("no google environments in the MAGMA data")
    shutil.copytree(google, tmp_path / "google")
    return tmp_path


async def comparison(app, pilot):  # noqa: ANN001, ANN201 - textual's App, Pilot -> MagmaScreen
    """The MAGMA screen once loaded, on its comparison tab."""
    screen = await settle(app, pilot)
    await pilot.press("c")
    await pilot.pause()
    return screen


async def test_tied_verdict_and_p_note_readable_at_80x24(magma_data: Path, tmp_path: Path) -> None:
    """At 80x24 'tied with #2' and 'within noise' are whole (rank 2's p beside them), and the
    line under the table says how p was computed and corrected; widened to 220 columns, the
    whole table fits and rank 1's verdict says the p of rank 2 too."""
    app = magma_app(tied_folder(magma_data, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await comparison(app, pilot)
        text = screen_text(app)
        assert re.search(r"1\.000 +tied with #2 ", text)
        assert re.search(r"0\.67 +within noise ", text)  # rank 2's p, on the next row, beside its verdict
        table = screen.query_one("#comparison", ResultTableView)
        keys = [str(column.key.value) for column in table.columns.values()]
        assert keys[-1] == "verdict" and "p_value" in keys and "rows" not in keys  # 'of' gave its room
        assert {cell.plain for cell in table.get_column("verdict")} == {"tied with #2", "within noise"}
        note = next(line for line in text.splitlines() if "Mann-Whitney" in line)
        assert "Holm-corrected over" in note and note.rstrip().endswith("comparisons")
        # The export keeps the p in the verdict and the 'of' column.
        assert any("tied with #2 (p = " in str(record["verdict"]) for record in screen.model.comparison_table(screen.selection).records())
        # Widened until the whole table fits: rank 1's verdict says the p of rank 2 too, and 'of' is shown.
        await pilot.resize_terminal(220, 30)
        await pilot.pause()
        keys = [str(column.key.value) for column in table.columns.values()]
        assert "rows" in keys, f"220 columns: 'of' is shown: {keys}"
        assert any(cell.plain.startswith("tied with #2 (p = ") for cell in table.get_column("verdict")), "220 columns: the whole verdict"


async def test_verdicts_whole_at_80x24_with_three_environments(magma_data: Path) -> None:
    app = magma_app(magma_data)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await comparison(app, pilot)
        text = screen_text(app)
        assert re.search(r"e-07 +beyond noise ", text)
        assert "Holm-corrected" in text
        verdicts = [cell.plain for cell in screen.query_one("#comparison", ResultTableView).get_column("verdict")]
        assert "best" in verdicts and not any("…" in v for v in verdicts)

