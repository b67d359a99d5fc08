"""Pilot tests of the browser: opening on a folder of real files, the preview, Enter into the
MAGMA, kernels and scaling screens and Escape back to the same node, `a` and `s` on a folder,
watch <-> browse keeping each mode's state, hostile names, FIFOs and links, and keys answered
while a tree of 2,000 files is being recognised."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from rich.console import Console
from rich.style import Style
from textual import events
from textual.widgets import OptionList

from fake_watch import FakeSource, poll
from gpuscope.parsers import registry
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.browse.screen import BrowseScreen
from gpuscope.tui.screens.studies.folder import FolderSummaryScreen, StudyModal
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen
from gpuscope.tui.screens.studies.scaling import ScalingScreen
from gpuscope.tui.screens.watch.screen import BROWSE_TIP, WatchScreen
from gpuscope.tui.screens.browse.preview import PreviewPane
from gpuscope.tui.screens.browse.tree import BrowseTree
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import open_screen, polled

ROOT = Path(__file__).resolve().parents[2]
MAGMA = ROOT / "examples" / "magma" / "aws" / "eks" / "gpu" / "size4" / "results" / "magma"
KERNELS = ROOT / "tests" / "data" / "kernels"
SCALING = ROOT / "tests" / "data" / "scaling" / "seed002"
TABLE = ROOT / "examples" / "specmoe" / "research_paper_table.csv"
LOG = "start\nWARNING: low memory\nstep 1\nERROR: NaN loss at step 2\nANALYSIS COMPLETED SUCCESSFULLY\n"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A result folder of real files: MAGMA outputs, nvprof exports, seed 002 run logs, a CSV
    table and a plain log with an error and a warning."""
    root = tmp_path / "results"
    shutil.copytree(MAGMA, root / "magma")
    shutil.copytree(KERNELS, root / "kernels")
    shutil.copytree(SCALING, root / "scaling")
    shutil.copy(TABLE, root / "table.csv")
    (root / "notes.log").write_text(LOG)
    return root


def browse_app(root: Path, **kwargs: Any) -> GpuscopeApp:
    return GpuscopeApp(first_screen=lambda: BrowseScreen(root, **kwargs), mode="browse")


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 60.0) -> None:  # a hang guard, not a timing claim
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        await pilot.pause(0.02)


async def opened(pilot: Any) -> BrowseScreen:
    """The browse screen once every file is recognised."""
    screen = pilot.app.screen
    assert isinstance(screen, BrowseScreen)
    await until(pilot, lambda: screen.recognition_done)
    await pilot.pause()
    return screen


async def loaded(pilot: Any) -> Any:
    """The screen on top once its loading worker is done (not `workers.wait_for_complete`: the
    directory tree's loader waits on its queue for as long as the tree exists)."""
    screen = pilot.app.screen
    await until(pilot, lambda: getattr(screen, "model", None) is not None or bool(getattr(screen, "tables", None)))
    await pilot.pause()
    return screen


def tree(screen: BrowseScreen) -> BrowseTree:
    return screen.query_one(BrowseTree)


def label(screen: BrowseScreen, path: Path) -> str:
    node = tree(screen).node_for(path)
    assert node is not None, path
    return tree(screen).render_label(node, Style(), Style()).plain


def cursor_path(screen: BrowseScreen) -> Path | None:
    return screen.cursor_path


def preview(screen: BrowseScreen) -> str:
    """The preview pane's text: its head (a rich grid) and body, rendered without colour."""
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    pane = screen.query_one(PreviewPane)
    console.print(pane.head)
    console.print(pane.body)
    return out.getvalue()


async def go_to(pilot: Any, screen: BrowseScreen, path: Path) -> None:
    assert await screen.show_path(path)
    await pilot.pause()
    assert cursor_path(screen) == path.resolve()


async def test_opens_and_labels_every_kind(results: Path) -> None:
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        base = results.resolve()
        assert len(screen.recognitions) == 2 + 2 + 4 + 2
        await go_to(pilot, screen, base / "magma" / sorted(os.listdir(MAGMA))[0])
        assert "magma" in label(screen, base / "magma" / sorted(os.listdir(MAGMA))[0])
        await go_to(pilot, screen, base / "kernels" / sorted(os.listdir(KERNELS))[0])
        assert "  pyprof  " in label(screen, base / "kernels" / sorted(os.listdir(KERNELS))[0])
        await go_to(pilot, screen, base / "scaling" / "slurm-4123456.out")
        assert "seed-log" in label(screen, base / "scaling" / "slurm-4123456.out")
        assert "  csv  " in label(screen, base / "table.csv")
        assert "2 magma" in label(screen, base / "magma")  # folders count their kinds
        assert "results" in screen.sub_title and "10 files" in screen.sub_title


async def test_preview_follows_the_cursor(results: Path) -> None:
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        base = results.resolve()
        await go_to(pilot, screen, base / "notes.log")
        await until(pilot, lambda: "NaN loss" in preview(screen))
        assert "Plain log" in preview(screen) and "`.log` name" in preview(screen)
        await pilot.press("down")  # table.csv is the next (and last) entry
        assert cursor_path(screen) == base / "table.csv"
        await until(pilot, lambda: "Delimited table" in preview(screen) and "a,b" not in preview(screen))
        await go_to(pilot, screen, base / "magma")
        await until(pilot, lambda: "MAGMA distributions (2)" in preview(screen))
        tree = screen.query_one(BrowseTree)
        node = tree.cursor_node
        await pilot.press("right")  # as ranger and yazi: right unfolds, left folds, then goes up
        assert node.is_expanded
        await pilot.press("left")
        assert not node.is_expanded and cursor_path(screen) == base / "magma"
        await pilot.press("left")
        assert cursor_path(screen) == base


@pytest.mark.parametrize(("folder", "kind"), [("magma", MagmaScreen), ("kernels", KernelsScreen), ("scaling", ScalingScreen)])
async def test_enter_opens_the_screen_and_escape_comes_back(results: Path, folder: str, kind: type) -> None:
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        target = sorted((results.resolve() / folder).iterdir())[-1]
        await go_to(pilot, screen, target)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, kind))
        opened_screen = pilot.app.screen
        assert [Path(p) for p in opened_screen.paths] == [results / folder / target.name]  # as typed
        await loaded(pilot)
        assert not opened_screen.model.empty
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        assert cursor_path(screen) == target


async def test_enter_on_a_table_opens_the_table_view(results: Path) -> None:
    table_view = pytest.importorskip("gpuscope.tui.screens.views.table")
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, results.resolve() / "table.csv")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, table_view.TableViewScreen))
        await loaded(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        assert cursor_path(screen) == results.resolve() / "table.csv"


async def test_a_on_a_folder_of_one_kind_opens_its_study(results: Path) -> None:
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, results.resolve() / "magma")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(pilot.app.screen, MagmaScreen))
        assert pilot.app.screen.paths == [results / "magma"]  # the folder: its reader takes its MAGMA files
        model = await loaded(pilot)
        assert model.model.result.files_read == 2
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)


async def test_a_asks_which_kind_when_there_are_several(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(results.parent)  # the root as typed, relative: `gpuscope browse results`
    async with browse_app(Path("results")).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, results.resolve())
        assert "2 magma" in label(screen, results.resolve()) and "10 below" in preview(screen)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(pilot.app.screen, StudyModal))
        options = pilot.app.screen.query_one(OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == ["magma", "kernels", "scaling", "summary"]
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, KernelsScreen))
        assert pilot.app.screen.paths == ["results"]  # as typed
        kernels = await loaded(pilot)
        assert len(kernels.model.runs) == 2  # both profiles, nothing else
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        assert cursor_path(screen) == results.resolve()


async def test_folder_summary_lists_kinds_failures_and_log_lines(results: Path) -> None:
    (results / "garbage.bin").write_bytes(bytes(range(256)) * 8)
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, results.resolve())
        await pilot.press("s")
        await until(pilot, lambda: isinstance(pilot.app.screen, FolderSummaryScreen))
        summary = await loaded(pilot)
        kinds, failed, logs, lines = summary.tables
        assert dict((row[0], row[2]) for row in kinds.rows)["magma"] == 2
        assert [row[0] for row in failed.rows] == ["garbage.bin"]
        notes = next(row for row in logs.rows if row[0] == "notes.log")
        assert notes[1:4] == (1, 1, 1)  # one error, one warning, one success line
        assert ("notes.log", 4, "error", "ERROR: NaN loss at step 2") in lines.rows
        assert summary.query_one("#summary-kinds", ResultTableView).model is kinds
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)


async def test_hostile_names_fifo_and_links_are_marked(tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    root.mkdir()
    (root / "\x1b]0;pwned\x07\x1b[31mred.log").write_text("fine\n")
    (root / "[red]x[bold].csv").write_text("a,b\n1,2\n")
    os.mkfifo(root / "pipe")
    os.symlink("loop", root / "loop")
    (root / "locked").mkdir()
    (root / "locked" / "secret.log").write_text("x\n")
    unreadable = os.geteuid() != 0  # root reads everything: the mode bits then change nothing
    if unreadable:
        (root / "locked").chmod(0)
    try:
        async with browse_app(root).run_test(size=(120, 40)) as pilot:
            screen = await opened(pilot)
            base = root.resolve()
            red = next(p for p in screen.recognitions if "red.log" in p.name)
            assert label(screen, red).startswith("  red.log  log")  # escape sequences removed, nothing else
            assert label(screen, base / "[red]x[bold].csv").startswith("  [red]x[bold].csv  csv")  # markup shown as typed
            assert "⚠" in label(screen, base / "pipe") and "FIFO" in label(screen, base / "pipe")
            assert "⚠" in label(screen, base / "loop") and "loop" in label(screen, base / "loop")
            if unreadable:
                assert "⚠" in label(screen, base / "locked") and "cannot list" in label(screen, base / "locked")
            await go_to(pilot, screen, base / "pipe")
            await until(pilot, lambda: "FIFO" in preview(screen))
            await pilot.press("enter")  # nothing to open: said, never a hang
            await pilot.pause(0.2)
            assert pilot.app.screen is screen
            assert any("FIFO" in n.message for n in pilot.app._notifications)
            await go_to(pilot, screen, base / "[red]x[bold].csv")
            await until(pilot, lambda: "[red]x[bold].csv" in preview(screen))
            assert "\x1b" not in preview(screen) and "\x1b" not in "".join(label(screen, p) for p in screen.recognitions if p.parent == base)
    finally:
        (root / "locked").chmod(0o755)


async def test_keys_are_answered_while_2000_files_are_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "many"
    for i in range(2000):
        folder = root / f"run-{i // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"log-{i:04d}.log").write_text(f"step {i}\n")
    real = registry.recognise

    def slow(path: Any) -> Any:  # 2,000 files take over 4 s: keys must be answered meanwhile
        time.sleep(0.002)
        return real(path)

    monkeypatch.setattr(registry, "recognise", slow)
    async with browse_app(root).run_test(size=(100, 30)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, BrowseScreen)
        await pilot.pause()
        assert not screen.recognition_done  # the tree is up first
        await until(pilot, lambda: tree(screen).cursor_node is not None and len(tree(screen).root.children) == 20)
        waits = []
        for _ in range(5):
            # The key straight to the app: `pilot.press` waits for the process to go idle (up to
            # a second per wait), which it never is while recognition runs.
            before = tree(screen).cursor_line
            pressed = time.monotonic()
            pilot.app.post_message(events.Key("down", None))
            while tree(screen).cursor_line == before and time.monotonic() - pressed < 30:
                await asyncio.sleep(0.002)
            waits.append(time.monotonic() - pressed)
            assert tree(screen).cursor_line != before, waits
        # Every key moved the cursor while recognition was still running (a UI blocked by it
        # would answer only once it is done); bench/browse_bench.py measures the latency.
        assert not screen.recognition_done, ("recognition finished before the keys were answered", waits)
        assert 0 < len(screen.recognitions) < 2000
        await until(pilot, lambda: screen.recognition_done, timeout=60)
        assert len(screen.recognitions) == 2000


async def test_watch_and_browse_keep_their_state(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(results)
    source = FakeSource()
    app = GpuscopeApp(first_screen=lambda: WatchScreen(source, interval=None), mode="watch")
    async with app.run_test(size=(120, 40)) as pilot:
        watch = await poll(pilot, 2)
        await pilot.press("s")  # sort by memory: state the watch must keep
        assert watch.view.sort == "mem"
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, BrowseScreen))
        browse = await opened(pilot)
        assert browse.base == results.resolve()  # no job: the current folder
        await go_to(pilot, browse, results.resolve() / "notes.log")
        done = watch.poll_now()  # the watch keeps recording while the browser is shown ...
        assert done is not None
        await done.wait()
        assert len(watch.history) == 3 and app.screen is browse
        await pilot.press("w")
        await until(pilot, lambda: app.screen is watch)
        assert watch.view.sort == "mem" and len(watch.history) == 3
        await pilot.press("b")
        await until(pilot, lambda: app.screen is browse)
        assert cursor_path(browse) == results.resolve() / "notes.log"  # ... and the browser is as it was


async def test_b_opens_the_jobs_work_dir_with_its_output_selected(results: Path) -> None:
    out = results.resolve() / "scaling" / "slurm-4123456.out"

    class JobSource(FakeSource):
        def _scope(self, rows: Any) -> Any:
            return dataclasses.replace(super()._scope(rows), work_dir=str(results), stdout=str(out))

    async with open_screen(GpuscopeApp(first_screen=lambda: WatchScreen(JobSource(), interval=None), mode="watch"), WatchScreen, (120, 40), ready=polled()) as (app, pilot, _):
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, BrowseScreen))
        browse = app.screen
        await until(pilot, lambda: cursor_path(browse) == out)
        await opened(pilot)
        await until(pilot, lambda: "seed-log" in preview(browse) or "Training log" in preview(browse))


async def test_browse_first_then_watch(results: Path) -> None:
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(results), mode="browse",
                      watch=lambda: WatchScreen(FakeSource(), interval=None))
    async with app.run_test(size=(120, 40)) as pilot:
        browse = await opened(pilot)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, WatchScreen))
        await poll(pilot)
        await pilot.press("b")
        await until(pilot, lambda: app.screen is browse)
    without = browse_app(results)  # no watch to switch to: w is not offered
    async with without.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        assert screen.check_action("watch", ()) is False
        await pilot.press("w")
        await pilot.pause()
        await until(pilot, lambda: pilot.app.screen is screen)
        assert pilot.app.screen is screen


async def test_analysis_waits_for_recognition(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = asyncio.Event()
    real = registry.recognise

    def held(path: Any) -> Any:
        while not gate.is_set():
            time.sleep(0.01)
        return real(path)

    monkeypatch.setattr(registry, "recognise", held)
    async with browse_app(results).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        await until(pilot, lambda: pilot.app.screen is screen)
        assert pilot.app.screen is screen and any("Still recognising" in n.message for n in pilot.app._notifications)
        gate.set()
        await opened(pilot)


@pytest.mark.parametrize("width", [80, 120])
async def test_mode_keys_in_footer_and_help(results: Path, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """b on the watch: in the footer where it fits (at 80 columns Quit and Help come first),
    in the help at every width; w on the browser; Escape as Back over the browser."""
    from gpuscope.tui.screens.help import HelpScreen

    monkeypatch.chdir(results)
    app = GpuscopeApp(first_screen=lambda: WatchScreen(FakeSource(), interval=None), mode="watch")
    async with app.run_test(size=(width, 30)) as pilot:
        watch = await poll(pilot)
        footer_keys = {key for key, active in watch.active_bindings.items() if active.binding.show and active.enabled}
        assert ("b" in footer_keys) == (width >= 110) and {"q", "question_mark"} <= footer_keys
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert [row for row in app.screen.keys if row[1] == "Browse"] == [("b", "Browse", BROWSE_TIP)]
        await pilot.press("escape", "b")
        await until(pilot, lambda: isinstance(app.screen, BrowseScreen))
        browse = await opened(pilot)
        assert "w" in {key for key, active in browse.active_bindings.items() if active.binding.show and active.enabled}
        await go_to(pilot, browse, results.resolve() / "magma")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, MagmaScreen))
        back = app.screen.active_bindings.get("escape")
        assert back is not None and back.binding.description == "Back" and back.enabled


async def test_expected_ranges_checked_marked_and_passed_to_the_table(tmp_path: Path) -> None:
    """expected.toml beside the results is checked once recognition is done: the table that
    misses a range says so in the tree and the preview, and opens with the cells marked."""
    table_view = pytest.importorskip("gpuscope.tui.screens.views.table")
    root = tmp_path / "analysis"
    shutil.copytree(ROOT / "tests" / "data" / "expected" / "data", root / "data")
    shutil.copy(ROOT / "tests" / "data" / "expected" / "failing.toml", root / "expected.toml")
    async with browse_app(root).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        table = root.resolve() / "data" / "all_systems_comparison.csv"
        await until(pilot, lambda: table in screen.checks)
        await go_to(pilot, screen, table)
        assert "1 expected range missed" in label(screen, table)
        await until(pilot, lambda: "FAIL speedup" in preview(screen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, table_view.TableViewScreen))
        assert pilot.app.screen.marks and all(column == "speedup" for _, column in pilot.app.screen.marks)


async def test_help_lists_the_browse_keys_and_enter_works_from_the_preview(results: Path) -> None:
    from gpuscope.tui.screens.help import HelpScreen

    async with browse_app(results).run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot)
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        assert [row[1] for row in pilot.app.screen.keys][:3] == ["Open", "Analyse", "Summary"]
        await pilot.press("escape")
        await go_to(pilot, screen, results.resolve() / "scaling" / "slurm-4123456.out")
        screen.query_one(PreviewPane).focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, ScalingScreen))


PARQUET = ROOT / "examples" / "analysis" / "comprehensive_summary.parquet"


async def test_parquet_preview_shows_schema_and_first_rows(tmp_path: Path) -> None:
    root = tmp_path / "pq"
    root.mkdir()
    shutil.copy(PARQUET, root / "summary.parquet")
    async with browse_app(root).run_test(size=(160, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, root / "summary.parquet")
        await until(pilot, lambda: "First 10 rows of 25" in preview(screen))
        shown = preview(screen)
        assert "Parquet · 25 rows · 20 columns" in shown and "int64         batch_size" in shown
        assert "On-Demand" in shown and "2281.47" in shown


def test_parquet_preview_of_hostile_files_is_bounded_and_says_why(tmp_path: Path) -> None:
    """A dictionary bomb shows its first rows, cut; a row group over the preview's budget is not
    decoded (the schema is still shown); a file that only starts like Parquet says so."""
    from hostile_decoded_gen import big_strings, dictionary_bomb
    from gpuscope.tui.screens.browse.preview import head_text

    bomb = head_text(dictionary_bomb(tmp_path / "bomb.parquet", rows=100_000)).plain
    assert "100,000 rows" in bomb and "First 10 rows of 100,000" in bomb and "…" in bomb
    big = head_text(big_strings(tmp_path / "big.parquet", rows=40)).plain
    assert "string  name" in big and "First rows not read: row group 1 of 3 holds" in big and "GPUSCOPE_" not in big
    (tmp_path / "bad.parquet").write_bytes(b"PAR1" + b"\x00" * 64)
    assert head_text(tmp_path / "bad.parquet").plain.startswith("not a readable Parquet file")


async def test_back_from_a_view_a_file_that_grew_is_recognised_again(tmp_path: Path) -> None:
    """A job's log read in its view goes on growing: back in the browser, its line and preview
    say what it is now, not what it was when the folder was first read."""
    log = tmp_path / "slurm-7.out"
    log.write_text("step 1\n")
    async with browse_app(tmp_path).run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot)
        await go_to(pilot, screen, tmp_path.resolve() / log.name)
        await until(pilot, lambda: "1 line" in preview(screen))
        await pilot.press("enter")
        await until(pilot, lambda: pilot.app.screen is not screen)
        with log.open("a") as handle:
            handle.write("step 2\nERROR: out of memory\n")
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen and "3 lines" in preview(screen))
        assert "3 lines" in screen.recognitions[tmp_path.resolve() / log.name].summary
