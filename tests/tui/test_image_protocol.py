"""How the image view draws a picture: the choice from the environment (a pure function), and
each protocol's drawing in an offscreen app. No terminal is needed or touched: the process's
real stdout is replaced by a buffer, so the kitty protocol's uploads (which textual-image
writes there, not through Textual) land in the buffer, where the tests read them."""

from __future__ import annotations

import base64
import io
import re
import sys
from typing import Any

import pytest
from textual.geometry import Region
from textual.widgets import Static

from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.render.image_protocol import choose_protocol
from gpuscope.tui.screens.views import image as image_view
from gpuscope.tui.screens.views.image import ImageViewScreen
from loading_helpers import settled
from paths import ROOT

PICTURE = ROOT / "examples" / "analysis" / "figures" / "speedup.png"
PLACEHOLDER = "\U0010eeee"
"""The kitty protocol's Unicode placeholder: the cells an uploaded picture is shown in."""


@pytest.mark.parametrize(("env", "terminal", "protocol", "why"), [
    ({"TERM": "xterm-kitty"}, True, "kitty", "TERM=xterm-kitty"),
    ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}, True, "kitty", "KITTY_WINDOW_ID"),
    ({"TERM": "xterm-ghostty", "TERM_PROGRAM": "ghostty"}, True, "kitty", "TERM=xterm-ghostty"),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, True, "sixel", "TERM_PROGRAM=WezTerm"),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, True, "sixel", "TERM_PROGRAM=iTerm.app"),
    ({"TERM": "foot"}, True, "sixel", "TERM=foot"),
    ({"TERM": "mlterm"}, True, "sixel", "TERM=mlterm"),
    ({"TERM": "xterm-256color", "KONSOLE_VERSION": "230805"}, True, "sixel", "KONSOLE_VERSION=230805"),
    ({"TERM": "xterm-256color", "KONSOLE_VERSION": "211201"}, True, "halfblocks", "TERM=xterm-256color"),
    ({"TERM": "xterm-256color", "XTERM_VERSION": "XTerm(390)"}, True, "halfblocks", "TERM=xterm-256color; GPUSCOPE_IMAGES overrides"),
    ({}, True, "halfblocks", "TERM=(unset)"),
    # tmux and screen drop graphics escapes unless wrapped for passthrough: half blocks, even in kitty
    ({"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0", "KITTY_WINDOW_ID": "1"}, True, "halfblocks", "inside tmux"),
    ({"TERM": "screen-256color", "TERM_PROGRAM": "WezTerm"}, True, "halfblocks", "inside tmux or screen"),
    ({"TERM": "xterm-kitty", "STY": "123.pts-0.host"}, True, "halfblocks", "inside tmux or screen"),
    # not a terminal (tests, pipes): half blocks whatever the terminal is called
    ({"TERM": "xterm-kitty"}, False, "halfblocks", "not a terminal"),
    # the override is obeyed as it is, tmux and pipes included
    ({"TERM": "tmux-256color", "TMUX": "x", "GPUSCOPE_IMAGES": "sixel"}, True, "sixel", "GPUSCOPE_IMAGES=sixel"),
    ({"TERM": "xterm-kitty", "GPUSCOPE_IMAGES": " HalfBlocks "}, True, "halfblocks", "GPUSCOPE_IMAGES=halfblocks"),
    ({"TERM": "xterm", "GPUSCOPE_IMAGES": "kitty"}, False, "kitty", "GPUSCOPE_IMAGES=kitty"),
    ({"TERM": "xterm-kitty", "GPUSCOPE_IMAGES": "auto"}, True, "kitty", "TERM=xterm-kitty"),
    ({"TERM": "xterm-kitty", "GPUSCOPE_IMAGES": "iterm"}, True, "kitty", "GPUSCOPE_IMAGES='iterm' unknown, auto: TERM=xterm-kitty"),
])
def test_protocol_is_chosen_from_the_environment(env: dict[str, str], terminal: bool, protocol: str, why: str) -> None:
    chosen, reason = choose_protocol(env, terminal)
    assert chosen == protocol and why in reason


@pytest.fixture
def no_terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The process's stdout as a buffer (never a terminal); PROTOCOL restored afterwards."""
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "__stdout__", buffer)
    monkeypatch.setattr(image_view, "PROTOCOL", image_view.PROTOCOL)
    monkeypatch.setattr(image_view, "WHY", image_view.WHY)
    return buffer


def test_use_protocol_without_a_terminal_is_half_blocks_and_writes_nothing(no_terminal: io.StringIO) -> None:
    assert image_view.use_protocol({"TERM": "xterm-kitty"}) == ("halfblocks", "not a terminal")
    assert image_view.use_protocol({"GPUSCOPE_IMAGES": "sixel"})[0] == image_view.PROTOCOL == "sixel"
    assert no_terminal.getvalue() == ""  # textual-image was imported without querying anything


async def shown(app: GpuscopeApp, pilot: Any) -> ImageViewScreen:
    for _ in range(3):  # decode, then draw
        screen = await settled(app, pilot, ImageViewScreen)
    return screen


async def test_headless_default_is_half_blocks(no_terminal: io.StringIO) -> None:
    app = GpuscopeApp(first_screen=lambda: ImageViewScreen(PICTURE))
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await shown(app, pilot)
        picture = screen.query_one("#image-picture")
        assert type(picture) is Static and set(str(picture.render()).replace("\n", "")) == {"▀"}
        assert image_view.NAMES["halfblocks"] in str(screen.query_one("#view-status", Static).render())
    assert no_terminal.getvalue() == ""


async def test_kitty_uploads_the_picture_and_fills_the_pane_with_placeholders(no_terminal: io.StringIO) -> None:
    image_view.PROTOCOL = "kitty"
    app = GpuscopeApp(first_screen=lambda: ImageViewScreen(PICTURE))
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await shown(app, pilot)
        picture = screen.query_one("#image-picture")
        assert type(picture).__name__ == "TGPImage" and picture.image is screen.image
        assert "kitty graphics" in str(screen.query_one("#view-status", Static).render())
        shot = app.export_screenshot()
        width, height = picture.size
        assert 0 < width <= 80 and 0 < height <= 27
        assert shot.count(PLACEHOLDER) == width * height and "\x1b" not in shot  # Textual's frame: placeholders only
    # textual-image's own writes: the PNG in chunks (m=1 ... m=0), then a virtual placement (U=1) of width x height cells
    messages = re.findall(r"\x1b_G([^;\x1b]*)(?:;([^\x1b]*))?\x1b\\", no_terminal.getvalue())
    assert messages and "".join(re.findall(r"\x1b_G.*?\x1b\\", no_terminal.getvalue())) == no_terminal.getvalue()
    chunks = [payload for keys, payload in messages if "f=100" in keys]
    assert base64.b64decode("".join(chunks[: next(i for i, (keys, _) in enumerate(messages) if "m=0" in keys) + 1])).startswith(b"\x89PNG")
    placements = [dict(kv.split("=") for kv in keys.split(",")) for keys, _ in messages if keys.startswith("a=p")]
    assert placements and placements[0]["U"] == "1" and (int(placements[0]["c"]), int(placements[0]["r"])) == (width, height)


async def test_sixel_draws_the_picture_through_textuals_frame(no_terminal: io.StringIO) -> None:
    image_view.PROTOCOL = "sixel"
    app = GpuscopeApp(first_screen=lambda: ImageViewScreen(PICTURE))
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await shown(app, pilot)
        picture = screen.query_one("#image-picture")
        assert type(picture).__module__ == "textual_image.widget.sixel" and picture.image is screen.image
        assert "sixel graphics" in str(screen.query_one("#view-status", Static).render())
        inner = picture.children[0]  # the widget that puts the sixels into the frame's last line
        width, height = inner.size
        lines = inner.render_lines(Region(0, 0, width, height))
        data = "".join(segment.text for segment in lines[-1])
        sixels = re.search(r"\x1bP0;0;0q\"1;1;(\d+);(\d+)(.*?)\x1b\\", data, re.DOTALL)
        assert sixels is not None and (int(sixels[1]), int(sixels[2])) == (width * 10, height * 20)  # 10x20 px cells without a terminal
        assert "#0;2;" in sixels[3]  # a colour register: the palette precedes the pixels
    assert no_terminal.getvalue() == ""  # sixels go through Textual's own output, nothing beside it
