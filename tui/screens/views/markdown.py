"""Provides `MarkdownViewScreen`: a Markdown file rendered (headings, tables, lists, code).

The text is read in a thread worker, at most `MAX_MARKDOWN` bytes of it (a longer file is cut
at a line and says so: Textual builds a widget per block, so rendering megabytes would stall
the screen), decoded with replacement and cleaned of escape sequences. Links are not
followed (a link could name any file, of any size): an anchor link scrolls to its heading,
any other shows where it points. Images in the Markdown are not drawn; the browser opens the
figure files themselves in the image view.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import ContentSwitcher, Markdown

from gpuscope.metrics.safe_text import clean, clean_lines
from gpuscope.parsers.files import _human, decode, display_name, head, looks_binary
from gpuscope.tui.screens.base import CannotShow
from gpuscope.tui.screens.views.base import FileScreen

MAX_MARKDOWN = 512 * 1024
"""Bytes of a Markdown file rendered; past this, the rest is left out and the status says so."""


class MarkdownViewScreen(FileScreen):
    """The rendered document, scrolling."""

    KIND = "Markdown"
    HELP_TITLE = "Keys: Markdown"
    DEFAULT_CSS = """
    MarkdownViewScreen #markdown-scroll { height: 1fr; background: $surface; padding: 0 1; }
    """

    def __init__(self, path: str | Path, recognition: Any = None) -> None:
        super().__init__(path, recognition)
        self.source = ""
        """The (cleaned, bounded) Markdown text rendered."""

    FAILED_TITLE = "Markdown · cannot show {name}"
    FAILED_TEXT = "Cannot show {paths}: {error}"

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="markdown-scroll"):
            yield Markdown(id="markdown-document", open_links=False)

    def read_model(self) -> tuple[str, bool, int]:
        """The cleaned text, whether it was cut, and the bytes read."""
        label = display_name(self.path)
        data, findings = head(self.path, label, MAX_MARKDOWN + 1)
        if data is None:
            raise CannotShow(findings[0].message if findings else "cannot read")
        if looks_binary(data[:8192]):
            raise CannotShow("binary file, not Markdown")
        cut = len(data) > MAX_MARKDOWN
        if cut:
            data = data[: data.rfind(b"\n", 0, MAX_MARKDOWN) + 1]
        text, _ = decode(data, label)
        return clean_lines(text), cut, len(data)

    async def show(self, model: tuple[str, bool, int]) -> None:
        self.source, cut, size = model
        if not self.source.strip():
            self.show_empty(f"{self.paths_text()} is empty.", ())
            return
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "markdown-scroll"
        await self.query_one(Markdown).update(self.source)
        lines = self.source.count("\n") + 1
        note = f" · only the first {_human(size)} shown (the file is longer)" if cut else ""
        self.status(Text(f"{lines:,} lines · {_human(size)}{note}"))
        self.query_one("#markdown-scroll").focus()

    @on(Markdown.LinkClicked)
    def _link(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        if event.href.startswith("#"):
            self.query_one(Markdown).goto_anchor(event.href[1:])
        else:
            self.notify(f"Link to {clean(event.href)} (not opened here)", markup=False)
