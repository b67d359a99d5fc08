"""Provides `ImageViewScreen`: a PNG or JPEG drawn in half-block characters, scaled to the pane.

The picture is decoded and scaled in thread workers (decoding a large figure takes a good part
of a second: anchors-turn2 §B), once when the view opens and again, from the decoded copy, when
the pane changes size. The status line gives the format and size from the file's header
(`parsers.media`), at once. Half blocks work in every terminal with colour, SSH and tmux
included; a graphics protocol (kitty, sixel) is not used yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Center, Middle
from textual.events import Resize
from textual.message import Message
from textual.widgets import ContentSwitcher, Header, Static

from gpuscope.parsers import media
from gpuscope.parsers.textfile import _human
from gpuscope.tui.model.halfblocks import ImageError, halfblocks, load_image
from gpuscope.tui.screens.file_view import FileScreen
from gpuscope.tui.widgets.keys_footer import KeysFooter


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

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id=self.VIEW_ID, markup=False)
        with ContentSwitcher(initial="view-loading", id=self.SWITCH_ID):
            yield from self.compose_states()
            with Middle(id="image-body"):
                with Center():
                    yield Static(id="image-picture", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        super().on_mount()
        self.decode()

    def _pane(self) -> tuple[int, int]:
        body = self.query_one("#image-body")
        size = body.size if body.size.width else self.query_one(f"#{self.SWITCH_ID}").size
        return max(1, size.width), max(1, size.height)

    def _background(self) -> tuple[int, int, int]:
        color = Color.parse(self.app.theme_variables.get("background", "#000000"))
        return color.r, color.g, color.b

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def decode(self) -> None:
        """Header facts (format, pixels, bytes), then the decoded picture, then its first drawing."""
        got = media.read_image(self.path)
        meta = got.meta
        facts = [str(meta.get("format") or "image")]
        if meta.get("width") and meta.get("height"):
            facts.append(f"{meta['width']}×{meta['height']} px")
        if meta.get("bytes") is not None:
            facts.append(_human(meta["bytes"]))
        self.app.call_from_thread(self.status, Text(" · ".join(facts)))
        try:
            image = load_image(self.path)
        except ImageError as error:
            self.post_message(self.LoadFailed(str(error)))
            return
        self.post_message(self.Loaded(image))

    def on_loading_screen_loaded(self, message: FileScreen.Loaded) -> None:
        self.image = message.model
        self.draw(*self._pane(), self._background())

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

    def on_loading_screen_load_failed(self, message: FileScreen.LoadFailed) -> None:
        self.sub_title = f"Image · cannot show {self.name_text}"
        self.show_empty(f"Cannot show {self.paths_text()}: {message.error}", ())

    @on(Resize)
    def _resized(self, event: Resize) -> None:
        if self.image is not None and self.drawn_size is not None and self._pane() != self.drawn_size:
            self.draw(*self._pane(), self._background())
