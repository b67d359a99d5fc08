"""The keys footer on the watch as a person meets it: compact at 80 columns with Quit and Help
drawn whole, the keys that fit a wide terminal joining it on a resize (the palette key docked
right), a click on a key pressing it, the replay's Play turning to Pause as it plays (drawn
again when the screen's bindings change)."""

from __future__ import annotations

from pathlib import Path

from fake_watch import FakeSource, poll
from gpuscope.collectors.recorder import Recorder
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.model.replay import open_replay
from gpuscope.tui.screens.help import HelpScreen
from gpuscope.tui.screens.replay import ReplayScreen
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.widgets.keys_footer import KeysFooter
from loading_helpers import until


def watch_mode_app() -> GpuscopeApp:
    """The watch as `gpuscope watch` starts it (its mode keys, b to the browser, included)."""
    return GpuscopeApp(first_screen=lambda: WatchScreen(FakeSource(), interval=None), mode="watch")


async def test_narrow_footer_is_compact_and_keeps_quit_and_help() -> None:
    async with watch_mode_app().run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        footer = screen.query_one(KeysFooter)
        shown = {key.description: key for key in footer.shown_keys()}
        assert {"Quit", "Help", "Pause"} <= shown.keys() and "Commands" not in shown and "Browse" not in shown
        assert all(key.end <= 80 for key in shown.values())
        line = footer.render().plain
        assert line.startswith("space Pause s Sort ") and "q Quit ? Help" in line
        assert line[shown["Quit"].start:shown["Quit"].end] == "q Quit"


async def test_wide_footer_shows_the_mode_keys_and_the_palette_key_right() -> None:
    async with watch_mode_app().run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        footer = screen.query_one(KeysFooter)
        await pilot.resize_terminal(160, 40)
        keys = await until(pilot, lambda: [key.description for key in footer.shown_keys() if key.description == "Browse"] and footer.shown_keys())
        descriptions = [key.description for key in keys]
        assert {"Browse", "Quit", "Help"} <= set(descriptions) and descriptions[-1] == "Commands"
        assert keys[-1].end == 160  # docked right
        line = footer.render().plain
        assert line.startswith(" space Pause  s Sort ") and line.rstrip().endswith("^p Commands")


async def test_a_click_on_a_key_presses_it() -> None:
    async with watch_mode_app().run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        help_key = next(key for key in screen.query_one(KeysFooter).shown_keys() if key.description == "Help")
        await pilot.click(KeysFooter, offset=(help_key.start, 0))
        assert await until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))


async def test_play_turns_to_pause_on_the_replay_footer(tmp_path: Path) -> None:
    path = tmp_path / "job.gsrec"
    source = FakeSource(gpus=1, processes=5)
    with Recorder(path, batch_samples=30) as recorder:
        for _ in range(30):
            recorder.add(source.poll())
    replay = open_replay(path)
    async with GpuscopeApp(first_screen=lambda: ReplayScreen(path, replay)).run_test(size=(120, 40)) as pilot:
        def words() -> list[str]:
            """The words of the footer's line as last drawn."""
            screen = pilot.app.screen
            return screen.query_one(KeysFooter).render_line(0).text.split() if isinstance(screen, ReplayScreen) else []

        assert "Play" in await until(pilot, words)
        await pilot.press("space")  # at the first speed: still playing when the footer is read
        assert await until(pilot, lambda: "Pause" in words() and "Play" not in words())
