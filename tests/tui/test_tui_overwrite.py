"""The screens never replace a file without asking: `e` (export) asks before writing over a file
that is there, and ctrl+s (screenshot) picks a free name instead of reusing one, and says so."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Button, Input, Static

from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.app import GpuscopeApp, free_name
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.screens.studies.magma import MagmaScreen
from loading_helpers import open_screen, until


class ModalHost(App[None]):
    """Opens one export dialog and keeps what it was dismissed with."""

    def __init__(self, default: str) -> None:
        super().__init__()
        self.default = default
        self.results: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(ExportModal(self.default), self.results.append)


def _hint(app: App[Any]) -> str:
    return str(app.screen.query_one("#export-format", Static).render())


async def test_an_existing_file_is_replaced_only_after_asking(tmp_path: Path) -> None:
    there = tmp_path / "summary.csv"
    there.write_text("keep me\n")
    app = ModalHost(str(there))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal) and app.results == []  # asked, not dismissed
        assert "exists: replace it?" in _hint(app)
        assert str(app.screen.query_one("#export-ok", Button).label) == "Replace"
        await pilot.press("enter")  # confirmed
        await pilot.pause()
    assert app.results == [str(there)]


async def test_editing_the_path_asks_again_and_escape_keeps_the_file(tmp_path: Path) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("a\n")
    second.write_text("b\n")
    app = ModalHost(str(first))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")  # asks about a.csv
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(second)
        await pilot.pause()
        assert str(app.screen.query_one("#export-ok", Button).label) == "Export"
        await pilot.press("enter")  # b.csv exists too: asked again, not taken as confirmed
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal) and f"{second} exists" in _hint(app)
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_a_new_file_is_written_without_a_question(tmp_path: Path) -> None:
    app = ModalHost(str(tmp_path / "new.csv"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [str(tmp_path / "new.csv")]


async def test_magma_export_onto_its_input_asks_and_escape_keeps_the_input(magma_data: Path, tmp_path: Path) -> None:
    """The screen's `e` over the very file it shows: a question, and the MAGMA output survives."""
    given = tmp_path / "run.out"
    shutil.copyfile(next(iter(sorted(magma_data.rglob("*.out")))), given)
    before = given.read_bytes()
    result = read_tree([given])
    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen([given], loader=lambda: result)), MagmaScreen, (120, 40)) as (app, pilot, screen):
        await pilot.press("e")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal)
        app.screen.query_one("#export-path", Input).value = str(given)
        await pilot.press("enter")
        await pilot.pause()
        await until(pilot, lambda: isinstance(app.screen, ExportModal))
        assert isinstance(app.screen, ExportModal) and "exists: replace it?" in _hint(app)
        await pilot.press("escape")
        await pilot.pause()
        await until(pilot, lambda: app.screen is screen)
        assert app.screen is screen
    assert given.read_bytes() == before


async def test_screenshot_never_reuses_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    taken = tmp_path / "shot.svg"
    taken.write_text("an earlier screenshot")
    (tmp_path / "shot-2.svg").write_text("and another")
    app = GpuscopeApp()
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        original = app.notify
        app.notify = lambda message, **kw: (notes.append(message), original(message, **kw))[1]  # type: ignore[method-assign]
        app.deliver_screenshot("shot.svg")
        for _ in range(20):
            await pilot.pause(0.05)
            if (tmp_path / "shot-3.svg").exists():
                break
    assert "<svg" in (tmp_path / "shot-3.svg").read_text()
    assert taken.read_text() == "an earlier screenshot" and (tmp_path / "shot-2.svg").read_text() == "and another"
    assert any("shot.svg exists: screenshot saved as shot-3.svg" in n for n in notes)


def test_free_name_counts_past_taken_names(tmp_path: Path) -> None:
    assert free_name(str(tmp_path), "x.svg") == "x.svg"
    (tmp_path / "x.svg").write_text("")
    (tmp_path / "x-2.svg").symlink_to(tmp_path / "absent")  # a dangling link is a name taken too
    assert free_name(str(tmp_path), "x.svg") == "x-3.svg"
