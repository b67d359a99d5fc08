"""Pilot tests of the diff on screen: the diff screen (verdict first, a tab per table, the
findings, export), the browser's marks (space, at most two, `d`), and the diff tab of the
kernels, MAGMA and scaling screens (a typed path checked on Enter, or the browser's mark).

The comparison itself (`tui.model.diff.diff_paths`) has its own tests; here a report is
injected or `diff_paths` is replaced by one that records what it was asked, so these tests
are about the screens."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model import diff as diff_model
from gpuscope.tui.model.diff import DiffReport
from gpuscope.tui.screens.browse.screen import BrowseScreen
from gpuscope.tui.screens.browse.tree import BrowseTree
from gpuscope.tui.screens.diff import FINDINGS_TAB, DiffPane, DiffScreen
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.studies.diff_tab import TAB_ID, DiffTab
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import open_screen, settled, until

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "data" / "kernels"
MAGMA = ROOT / "examples" / "magma" / "aws" / "eks" / "gpu" / "size4" / "results" / "magma"

VERDICT = "1 kernels slower beyond noise (p < 0.05, Holm-corrected), largest +31 % `gemm`; 1 new"


def report(verdict: str = VERDICT, tables: int = 2, slower: bool = True) -> DiffReport:
    kernels = ResultTable("Kernels compared", (Column("kernel"), Column("base_ms", "base ms", ".3f"), Column("new_ms", "new ms", ".3f"),
                                                Column("change", "change", "+.0%"), Column("verdict")),
                          (("gemm", 1.0, 1.31, 0.31, "slower"), ("relu", 2.0, 2.0, 0.0, "no change"), ("softmax", None, 0.5, None, "new")))
    runs = ResultTable("Runs", (Column("side"), Column("file")), (("base", "a.csv"), ("new", "b.csv")))
    findings = [Finding("warning", "unmatched", "softmax has no match in the base", "b.csv")]
    return DiffReport("kernels", verdict, [kernels, runs][:tables], findings, ["gemm"] if slower else [])


class Recorder:
    """Stands in for `diff_paths`: records (base, new) and answers `report()`."""

    def __init__(self) -> None:
        self.calls: list[tuple[Path, Path]] = []

    def __call__(self, base: Path, new: Path, options: Any = None) -> DiffReport:
        self.calls.append((Path(base), Path(new)))
        return report()


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    fake = Recorder()
    monkeypatch.setattr(diff_model, "diff_paths", fake)
    return fake


def notes_of(app: GpuscopeApp) -> list[str]:
    return [n.message for n in app._notifications]


# --- the diff screen -------------------------------------------------------------------


async def test_verdict_first_then_a_tab_per_table_and_the_findings() -> None:
    async with open_screen(lambda: DiffScreen("base", "new", loader=report), DiffScreen, (120, 40)) as (app, pilot, screen):
        pane = screen.query_one(DiffPane)
        verdict = pane.query_one(".diff-verdict", Static)
        assert str(verdict.render()) == VERDICT and verdict.has_class("-slower")
        assert pane.children[0] is verdict  # said first, above the tables
        tabs = pane.query_one(TabbedContent)
        labels = [str(tab.label) for tab in tabs.query("ContentTab")]
        assert labels == ["Kernels compared", "Runs", "Findings (1)"]
        shown = pane.query_one("#diff-table-0", ResultTableView)
        assert shown.model is not None and shown.model.title == "Kernels compared" and app.focused is shown
        assert "Base base   New new   Kind kernels" in str(screen.query_one("#diff-view", Static).render())
        await pilot.press("f")
        assert tabs.active == FINDINGS_TAB


async def test_nothing_compared_shows_why() -> None:
    why = "nothing compared: base is profiles (kernels), new is MAGMA outputs (magma); both sides must be of one kind"
    bad = DiffReport("", why, findings=[Finding("error", "missing", "no such file or folder", "nope")])
    async with open_screen(lambda: DiffScreen("a", "b", loader=lambda: bad), DiffScreen) as (app, pilot, screen):
        assert screen.query_one("#diff-switch").current == "diff-empty"
        assert why in str(screen.query_one("#diff-empty-message", Static).render())
        assert screen.check_action("export", ()) is None  # nothing to write


async def test_outside_text_is_plain() -> None:
    hostile = "[bold red]2 kernels[/] slower \x1b]0;pwned\x07beyond noise"
    async with open_screen(lambda: DiffScreen("a\x1b[2J", "b", loader=lambda: report(hostile)), DiffScreen) as (app, pilot, screen):
        shown = str(screen.query_one(".diff-verdict", Static).render())
        assert "[bold red]2 kernels[/]" in shown and "\x1b" not in shown and "\x07" not in shown
        assert "\x1b" not in screen.sub_title


@pytest.mark.parametrize(("name", "first"), [("diff.md", "### Verdict"), ("diff.csv", "kernel,base_ms,new_ms,change,verdict")])
async def test_export_writes_the_verdict_and_tables(tmp_path: Path, name: str, first: str) -> None:
    target = tmp_path / name
    async with open_screen(lambda: DiffScreen("base", "new", loader=report), DiffScreen) as (app, pilot, screen):
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
    text = target.read_text()
    assert text.startswith(first)
    if name.endswith(".md"):  # every table, verdict first
        assert text.index(VERDICT) < text.index("### Kernels compared") < text.index("### Runs") < text.index("### Findings")
    else:  # CSV holds one table: the tab shown
        assert [row[0] for row in csv.reader(text.splitlines())][1:] == ["gemm", "relu", "softmax"]


def test_snapshot_at_80x24(snap_compare: Any) -> None:
    app = GpuscopeApp(first_screen=lambda: DiffScreen("runs/base", "runs/new", loader=report))

    async def ready(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.report is not None)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


# --- the browser's marks ---------------------------------------------------------------


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    for name in ("a", "b", "c"):
        shutil.copytree(KERNELS, root / name)
    return root


def label(screen: BrowseScreen, path: Path) -> str:
    tree = screen.query_one(BrowseTree)
    node = tree.node_for(path)
    assert node is not None, path
    return tree.render_label(node, Style(), Style()).plain


async def browser(pilot: Any) -> BrowseScreen:
    screen = pilot.app.screen
    assert isinstance(screen, BrowseScreen)
    await until(pilot, lambda: screen.recognition_done)
    await pilot.pause()
    return screen


async def mark(pilot: Any, screen: BrowseScreen, path: Path) -> None:
    assert await screen.show_path(path)
    await pilot.pause()
    await pilot.press("space")
    await pilot.pause()


async def test_space_marks_two_and_d_opens_their_diff(runs: Path, recorder: Recorder) -> None:
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(runs), mode="browse")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await browser(pilot)
        a, b, c = (runs.resolve() / name for name in "abc")
        await pilot.press("d")
        assert any("Mark two files or folders" in n for n in notes_of(app))
        await mark(pilot, screen, a)
        assert label(screen, a).startswith(" base ") and screen.cursor_path == b  # then the next line
        await mark(pilot, screen, b)
        assert label(screen, b).startswith(" new ") and screen.marked == [a, b]
        await mark(pilot, screen, c)  # a third replaces the oldest, and says so
        assert screen.marked == [b, c] and not label(screen, a).startswith(" base ") and label(screen, b).startswith(" base ")
        assert any("Unmarked" in n and "oldest" in n for n in notes_of(app))
        await mark(pilot, screen, c)  # space again unmarks
        assert screen.marked == [b]
        await mark(pilot, screen, a)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.report is not None)
        assert recorder.calls == [(runs / "b", runs / "a")]  # as typed: the first marked is the base
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert screen.marked == [b, a]  # kept for another diff


# --- the diff tab of a study screen ----------------------------------------------------


async def test_diff_tab_checks_the_path_and_shows_the_diff(tmp_path: Path, recorder: Recorder) -> None:
    # Opened over another screen, as from the browser, so that Escape has a screen to close.
    async with open_screen(Screen, Screen) as (app, pilot, _):
        await app.push_screen(KernelsScreen([str(KERNELS)]))
        screen = await settled(app, pilot, KernelsScreen)
        await pilot.press("d")
        tab = screen.query_one(DiffTab)
        assert screen.query_one("#kernels-tables", TabbedContent).active == TAB_ID
        box = tab.query_one(Input)
        await until(pilot, lambda: app.focused is box)
        for typed, why in ((str(tmp_path / "nope"), "No such file or folder"), (str(KERNELS), "this screen's own run")):
            box.value = typed
            await pilot.press("enter")
            await pilot.pause()
            assert why in str(tab.query_one(".diff-tab-hint", Static).render())
        assert not recorder.calls
        box.value = str(MAGMA)
        await pilot.press("enter")
        await until(pilot, lambda: tab.query_one(DiffPane).report is not None)
        assert recorder.calls == [(MAGMA, KERNELS)]  # the other run is the base, this screen's the new one
        assert "Base" in str(tab.query_one(".diff-tab-hint", Static).render()) and not box.display  # the tables get its line
        target = tmp_path / "diff.json"
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await until(pilot, lambda: target.exists())
        assert '"kernels_compared"' in target.read_text() and '"verdict"' in target.read_text()
        await pilot.press("d")  # in the diff: another run
        await until(pilot, lambda: app.focused is box and box.display)
        await pilot.press("escape")  # leaves the box, back to the diff: the screen stays
        await until(pilot, lambda: not box.display and app.focused is not box)
        assert app.screen is screen
        await pilot.press("escape")  # out of the box, Escape closes the screen as everywhere
        assert await until(pilot, lambda: app.screen is not screen), "Escape out of the box closes the screen"


async def test_diff_tab_offers_the_browsers_mark(runs: Path, recorder: Recorder) -> None:
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(runs), mode="browse")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await browser(pilot)
        await mark(pilot, screen, runs.resolve() / "a")
        await pilot.press("enter")  # opens folder b, under the cursor now: a is marked
        file = sorted((runs / "b").iterdir())[0]
        assert await screen.show_path(file)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, KernelsScreen) and app.screen.model is not None)
        await pilot.press("d")
        box = app.screen.query_one(DiffTab).query_one(Input)
        await until(pilot, lambda: app.focused is box)
        assert box.value == str(runs / "a")


async def test_diff_tab_over_several_paths_says_why() -> None:
    files = sorted(map(str, KERNELS.iterdir()))
    async with open_screen(lambda: KernelsScreen(files), KernelsScreen) as (app, pilot, screen):
        await pilot.press("d")
        tab = screen.query_one(DiffTab)
        assert not tab.query_one(Input).display
        assert "reads 2 paths" in str(tab.query_one(".diff-tab-hint", Static).render())
        await pilot.press("e")
        assert any("Nothing compared yet" in n for n in notes_of(app))


# --- real runs, through the real comparison ----------------------------------------------


async def test_two_real_profiles_compared_on_screen() -> None:
    base, new = sorted(KERNELS.iterdir())
    async with open_screen(lambda: DiffScreen(base, new), DiffScreen) as (app, pilot, screen):
        assert screen.report is not None and screen.report.kind == "kernels"
        verdict = str(screen.query_one(".diff-verdict", Static).render())
        assert verdict == screen.report.verdict and "no noise estimate" in verdict  # one profile a side: no verdict on noise
        table = screen.query_one("#diff-table-0", ResultTableView).model
        assert table is not None and "cudnn::detail::wgrad_alg0_engine" in table.column_values(table.keys.index("kernel"))


async def test_sides_of_two_kinds_say_so(tmp_path: Path) -> None:
    base = sorted(KERNELS.iterdir())[0]
    async with open_screen(lambda: DiffScreen(base, MAGMA), DiffScreen) as (app, pilot, screen):
        assert screen.query_one("#diff-switch").current == "diff-empty"
        assert "both sides must be of one kind" in str(screen.query_one("#diff-empty-message", Static).render())


@pytest.mark.parametrize("kind", ["magma", "kernels", "scaling"])
async def test_d_opens_the_diff_tab_of_each_study(kind: str) -> None:
    from gpuscope.tui.screens.browse.open import study_screen

    path = {"magma": MAGMA, "kernels": KERNELS, "scaling": ROOT / "tests" / "data" / "scaling" / "seed002"}[kind]
    async with open_screen(lambda: study_screen(kind, [path])) as (app, pilot, screen):
        await pilot.press("d")
        tab = screen.query_one(DiffTab)
        await until(pilot, lambda: app.focused is tab.query_one(Input))
        assert tab.this == path
