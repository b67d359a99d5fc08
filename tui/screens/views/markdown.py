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
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import ContentSwitcher, Header, Markdown, Static

from gpuscope.metrics.safe_text import clean, clean_lines
from gpuscope.parsers.files import _human, decode, display_name, head, looks_binary
from gpuscope.tui.screens.views.base import FileScreen
from gpuscope.tui.widgets.keys_footer import KeysFooter

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

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id=self.VIEW_ID, markup=False)
        with ContentSwitcher(initial="view-loading", id=self.SWITCH_ID):
            yield from self.compose_states()
            with VerticalScroll(id="markdown-scroll"):
                yield Markdown(id="markdown-document", open_links=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        super().on_mount()
        self.read_markdown()

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def read_markdown(self) -> None:
        label = display_name(self.path)
        data, findings = head(self.path, label, MAX_MARKDOWN + 1)
        if data is None:
            self.post_message(self.LoadFailed(findings[0].message if findings else "cannot read"))
            return
        if looks_binary(data[:8192]):
            self.post_message(self.LoadFailed("binary file, not Markdown"))
            return
        cut = len(data) > MAX_MARKDOWN
        if cut:
            data = data[: data.rfind(b"\n", 0, MAX_MARKDOWN) + 1]
        text, _ = decode(data, label)
        self.post_message(self.Loaded((clean_lines(text), cut, len(data))))

    async def on_loading_screen_loaded(self, message: FileScreen.Loaded) -> None:
        self.source, cut, size = message.model
        if not self.source.strip():
            self.show_empty(f"{self.paths_text()} is empty.", ())
            return
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "markdown-scroll"
        await self.query_one(Markdown).update(self.source)
        lines = self.source.count("\n") + 1
        note = f" · only the first {_human(size)} shown (the file is longer)" if cut else ""
        self.status(Text(f"{lines:,} lines · {_human(size)}{note}"))
        self.query_one("#markdown-scroll").focus()

    def on_loading_screen_load_failed(self, message: FileScreen.LoadFailed) -> None:
        self.sub_title = f"Markdown · cannot show {self.name_text}"
        self.show_empty(f"Cannot show {self.paths_text()}: {message.error}", ())

    @on(Markdown.LinkClicked)
    def _link(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        if event.href.startswith("#"):
            self.query_one(Markdown).goto_anchor(event.href[1:])
        else:
            self.notify(f"Link to {clean(event.href)} (not opened here)", markup=False)
