"""Provides `PdfViewScreen`: a PDF named with its page count, version and size (not rendered).

The facts come from `parsers.media.read_pdf` (a bounded read that counts page objects), in a
thread worker. A PDF whose page objects are compressed has no countable pages: the count is
n/a, never 0, and the note says why. Rendering pages is left to a PDF viewer.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ContentSwitcher, Static

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import media
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.files import _human
from gpuscope.tui.screens.views.base import FileScreen


class PdfViewScreen(FileScreen):
    """Name, pages, version, size, and what could not be counted."""

    KIND = "PDF"
    HELP_TITLE = "Keys: PDF"
    DEFAULT_CSS = """
    PdfViewScreen #pdf-body { height: 1fr; padding: 1 2; }
    PdfViewScreen #pdf-facts { height: auto; }
    PdfViewScreen #pdf-notes { height: auto; color: $text-muted; margin-top: 1; }
    """

    pages: int | None = None
    """Page count once read; None (n/a) when the pages could not be counted."""

    FAILED_TEXT = "Cannot read {paths}.\n{error}"

    def compose_body(self) -> ComposeResult:
        with Vertical(id="pdf-body"):
            yield Static(id="pdf-facts", markup=False)
            yield Static(id="pdf-notes", markup=False)

    def read_model(self) -> object:
        return media.read_pdf(self.path)

    def show(self, got: FileRead) -> None:
        meta = got.meta
        if not meta:
            self.show_empty(f"Cannot read {self.paths_text()}.", got.findings)
            return
        pages = self.pages = meta.get("pages")
        facts = Text()
        facts.append(self.name_text, style="bold").append("\n")
        facts.append(f"{pages:,} page{'s' if pages != 1 else ''}" if pages else "pages: n/a")
        if meta.get("version"):
            facts.append(f" · PDF {clean(meta['version'])}")
        if meta.get("bytes") is not None:
            facts.append(f" · {_human(meta['bytes'])}")
        self.query_one("#pdf-facts", Static).update(facts)
        notes = [clean(f.message) for f in got.findings] + ["Pages are not drawn here: open the file in a PDF viewer."]
        self.query_one("#pdf-notes", Static).update(Text("\n".join(notes)))
        self.status(Text(facts.plain.split("\n", 1)[1]))
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "pdf-body"

