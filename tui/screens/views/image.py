"""Provides `ImageViewScreen`: a PNG or JPEG shown in the terminal, scaled to the pane.

How it is drawn is chosen once, from the environment, before the app starts
(`use_protocol`, called by the command line; `tui.model.image_protocol` says how): the kitty
graphics protocol or sixel where the terminal has one, drawn by `textual-image`'s widgets,
else half blocks (`tui.model.halfblocks`), which every colour terminal draws, SSH and tmux
included. Tests and other headless runs never call `use_protocol`, so they get half blocks
and no escape sequence reaches their output. `GPUSCOPE_IMAGES=kitty|sixel|halfblocks|auto`
overrides the choice.

The picture is decoded in the loading worker (decoding a large figure takes a good part of a
second: anchors-turn2 §B) with the bomb limits of `load_image`, which also caps it at 1024
px a side. Half blocks are then scaled and drawn in a worker too, again when the pane changes
size. A graphics widget scales and encodes the decoded copy itself, on the UI thread when
Textual renders it (for a 1000×800 px pane here: PNG for kitty 0.04 s, sixel 0.13 s), which
keeps one way to draw each protocol: textual-image's. The status line gives the format and
size from the file's header (`parsers.media`), at once, and how the picture is drawn.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any, Iterator

from PIL import Image
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Center, Middle
from textual.events import Resize
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Static

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import media
from gpuscope.parsers.files import _human
from gpuscope.tui.render.halfblocks import ImageError, halfblocks, load_image
from gpuscope.tui.render.image_protocol import choose_protocol
from gpuscope.tui.screens.views.base import FileScreen

PROTOCOL = "halfblocks"
"""How pictures are drawn in this process: 'kitty', 'sixel' or 'halfblocks' (`use_protocol`)."""
WHY = ""
"""The environment fact that chose `PROTOCOL` (shown in the status line); empty in tests."""
NAMES = {"kitty": "kitty graphics", "sixel": "sixel graphics", "halfblocks": "half blocks"}


def use_protocol(env: Any = None) -> tuple[str, str]:
    """Choose how pictures are drawn in this terminal: (protocol, why). Call it before the app
    starts: a graphics protocol needs the size of a cell in pixels, which `textual-image`
    asks the terminal for (TIOCGWINSZ, else an escape-sequence query that Textual's input
    thread would steal the reply to) and keeps."""
    global PROTOCOL, WHY
    try:  # both: the cell-size query writes to stdout and reads the reply from stdin
        is_terminal = all(stream is not None and os.isatty(stream.fileno()) for stream in (sys.__stdout__, sys.__stdin__))
    except (OSError, ValueError):  # closed, or no descriptor
        is_terminal = False
    protocol, why = choose_protocol(os.environ if env is None else env, is_terminal)
    if protocol != "halfblocks":
        try:
            _graphics_widgets()
        except Exception as error:  # optional: whatever fails here (no textual-image, a garbled reply), half blocks work
            protocol, why = "halfblocks", f"{NAMES[protocol]} cannot start ({type(error).__name__}: {error})"
    PROTOCOL, WHY = protocol, why
    return protocol, why


def _graphics_widgets() -> Any:
    """`textual_image.widget`. Its renderable package queries the terminal for sixel and kitty
    support when first imported, whenever `sys.__stdout__` is a terminal; the choice is
    ours (from the environment), and an unanswered query costs 0.1 s and can swallow a key,
    so that stream is hidden while it is imported."""
    if "textual_image.renderable" not in sys.modules:
        real = sys.__stdout__
        sys.__stdout__ = io.StringIO()  # isatty() is False: no query
        try:
            import textual_image.renderable  # noqa: F401
        finally:
            sys.__stdout__ = real
    import textual_image.widget

    return textual_image.widget


class ImageViewScreen(FileScreen):
    """The picture, centred, as large as the pane allows."""

    KIND = "Image"
    HELP_TITLE = "Keys: image"
    DEFAULT_CSS = """
    ImageViewScreen #image-body { height: 1fr; }
    ImageViewScreen #image-picture { width: auto; height: auto; }
    """

    class Drawn(Message):
        """The picture drawn for a pane of (columns, rows)."""

        def __init__(self, text: Text, size: tuple[int, int]) -> None:
            super().__init__()
            self.text, self.size = text, size

    def __init__(self, path: str | Path, recognition: Any = None) -> None:
        super().__init__(path, recognition)
        self.image: Image.Image | None = None
        """The decoded picture (at most 1024 px a side); None until decoded."""
        self.drawn_size: tuple[int, int] | None = None
        """(columns, rows) of the pane the picture shown was drawn for."""

    FAILED_TITLE = "Image · cannot show {name}"
    FAILED_TEXT = "Cannot show {paths}: {error}"
    EXPECTED = (ImageError,)

    def compose_body(self) -> ComposeResult:
        with Middle(id="image-body"):
            with Center():
                yield self._picture()

    def _picture(self) -> Widget:
        """The widget the picture is drawn in: one per protocol."""
        if PROTOCOL == "kitty":
            return _graphics_widgets().TGPImage(id="image-picture")
        if PROTOCOL == "sixel":
            return _graphics_widgets().SixelImage(id="image-picture")
        return Static(id="image-picture", markup=False)

    def _pane(self) -> tuple[int, int]:
        body = self.query_one("#image-body")
        size = body.size if body.size.width else self.query_one(f"#{self.SWITCH_ID}").size
        return max(1, size.width), max(1, size.height)

    def _background(self) -> tuple[int, int, int]:
        color = Color.parse(self.app.theme_variables.get("background", "#000000"))
        return color.r, color.g, color.b

    def read_steps(self) -> Iterator[Text | Image.Image]:
        """Header facts (format, pixels, bytes) for the status line, then the decoded picture."""
        meta = media.read_image(self.path).meta
        facts = [str(meta.get("format") or "image")]
        if meta.get("width") and meta.get("height"):
            facts.append(f"{meta['width']}×{meta['height']} px")
        if meta.get("bytes") is not None:
            facts.append(_human(meta["bytes"]))
        facts.append(f"{NAMES[PROTOCOL]} ({clean(WHY)})" if WHY else NAMES[PROTOCOL])  # WHY quotes the environment
        yield Text(" · ".join(facts))
        yield load_image(self.path)

    def show(self, step: Text | Image.Image) -> None:
        if isinstance(step, Text):
            self.status(step)
            return
        self.image = step
        picture = self.query_one("#image-picture")
        if isinstance(picture, Static):
            self.draw(*self._pane(), self._background())
        else:  # a graphics widget: it scales to the pane itself, and again when the pane changes
            picture.image = self.image
            self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "image-body"

    @work(thread=True, exclusive=True, group="draw", exit_on_error=False)
    def draw(self, columns: int, rows: int, background: tuple[int, int, int]) -> None:
        """Scale and draw the decoded picture for a pane of `columns` × `rows` (a newer call
        supersedes this one: the pane was resized again)."""
        if self.image is not None:
            self.post_message(self.Drawn(halfblocks(self.image, columns, rows, background), (columns, rows)))

    def on_image_view_screen_drawn(self, message: Drawn) -> None:
        self.drawn_size = message.size
        self.query_one("#image-picture", Static).update(message.text)
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "image-body"

    @on(Resize)
    def _resized(self, event: Resize) -> None:
        if self.image is not None and self.drawn_size is not None and self._pane() != self.drawn_size:
            self.draw(*self._pane(), self._background())
