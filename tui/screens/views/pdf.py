"""Provides `PdfViewScreen`: a PDF named with its page count, version and size, and the text
of its first pages (not rendered).

The facts come from `parsers.media.read_pdf` (a bounded read that counts page objects), the
text from pypdf (`first_pages_text`: the first `TEXT_PAGES` pages, at most `TEXT_CHARS`
characters), both in a thread worker. A PDF whose page objects are compressed has no countable
pages: the count is n/a, never 0, and the note says why. Without pypdf installed, or on a PDF
it cannot read (encrypted, truncated, not a PDF), the view says so under the facts. Drawing
pages is left to a PDF viewer.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, Static

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import media
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.files import MAX_BYTES, _human
from gpuscope.tui.screens.views.base import FileScreen

TEXT_PAGES = 3
TEXT_CHARS = 20_000
"""The text shown: of the first pages only, and cut here (a page can hold a whole book's words)."""


def first_pages_text(path: Path) -> tuple[str, str]:
    """(text of the first `TEXT_PAGES` pages, cleaned and cut at `TEXT_CHARS`; a note saying
    what was left out or why there is no text). Runs in a thread; never raises."""
    try:
        import pypdf
    except ImportError:
        return "", "Text not shown: pypdf is not installed (pip install pypdf)."
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # its warnings on stderr would draw over the screen
    try:
        if path.stat().st_size > MAX_BYTES:
            return "", f"Text not read: the file is over the {_human(MAX_BYTES)} size limit (GPUSCOPE_MAX_FILE_MB raises it)."
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            return "", "Text not read: the PDF is encrypted (it needs a password)."
        pages = len(reader.pages)
        parts, size = [], 0
        for number in range(min(pages, TEXT_PAGES)):
            text = "\n".join(clean(line) for line in (reader.pages[number].extract_text() or "").splitlines())
            parts.append(f"── page {number + 1} ──\n{text.strip() or '(no text on this page)'}")
            size += len(text)
            if size >= TEXT_CHARS:
                break
    # pypdf raises many kinds (its own, ValueError, KeyError, struct errors...) on a broken
    # file, and decrypting can need a library that is absent: any of them is a message here.
    except Exception as error:  # noqa: BLE001
        return "", f"Text not read: the file cannot be parsed as a PDF (damaged or cut short?): {clean(type(error).__name__)}: {clean(str(error))[:200]}"
    text = "\n\n".join(parts)
    cut = len(text) > TEXT_CHARS
    shown = min(pages, TEXT_PAGES, len(parts))
    note = f"Text of the first {shown} of {pages} pages" if pages > shown else f"Text of all {pages} page{'s' if pages != 1 else ''}"
    return text[:TEXT_CHARS], note + (f", cut at {TEXT_CHARS:,} characters" if cut else "") + "; pages are not drawn: open the file in a PDF viewer."


class PdfViewScreen(FileScreen):
    """Name, pages, version, size, and what could not be counted."""

    KIND = "PDF"
    HELP_TITLE = "Keys: PDF"
    DEFAULT_CSS = """
    PdfViewScreen #pdf-body { height: 1fr; padding: 1 2; }
    PdfViewScreen #pdf-facts { height: auto; }
    PdfViewScreen #pdf-notes { height: auto; color: $text-muted; margin-top: 1; }
    PdfViewScreen #pdf-text-scroll { height: 1fr; margin-top: 1; }
    """

    pages: int | None = None
    """Page count once read; None (n/a) when the pages could not be counted."""
    text: str = ""
    """The first pages' text shown (empty when there is none or it could not be read)."""

    FAILED_TEXT = "Cannot read {paths}.\n{error}"

    def compose_body(self) -> ComposeResult:
        with Vertical(id="pdf-body"):
            yield Static(id="pdf-facts", markup=False)
            yield Static(id="pdf-notes", markup=False)
            with VerticalScroll(id="pdf-text-scroll"):
                yield Static(id="pdf-text", markup=False)

    def read_model(self) -> object:
        got = media.read_pdf(self.path)
        return got, first_pages_text(self.path) if got.meta else ("", "")

    def show(self, model: tuple[FileRead, tuple[str, str]]) -> None:
        got, (text, text_note) = model
        self.text = text
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
        notes = [clean(f.message) for f in got.findings] + [text_note]
        self.query_one("#pdf-notes", Static).update(Text("\n".join(notes)))
        self.query_one("#pdf-text", Static).update(Text(text))
        self.status(Text(facts.plain.split("\n", 1)[1]))
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "pdf-body"

