"""Provides `OutputPane`: the last lines of the watched job's StdOut and StdErr, with their
error and warning counts in the title; Enter opens the log view following StdOut, `m` the
job's outputs merged in time order.

A small pane under the job panel on tall terminals; `o` on the watch screen makes it a tab in
place of the meters and the process table (the only way to see it on short terminals). The lines come from `tui.model.job_outputs`,
read in the watch's poll thread; drawing is one `Text` per poll, no layout pass once the pane
is full. Lines are plain text (cleaned when read); error and warning lines are tinted.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.widget import Widget

from gpuscope.parsers import logs as plain_log
from gpuscope.tui.model.job_outputs import JobFiles, TailView
from gpuscope.tui.widgets.quiet_update import set_border_title

ROWS = 6
"""Lines the small pane shows (the tab shows its whole height)."""
TINTS = {"error": "red", "warning": "yellow"}
ROLE_STYLES = {"out": "dim", "err": "dim red"}


def counts_text(view: TailView) -> Text:
    """`slurm-42.out ✖ 2 errors ▲ 1 warning`, `+` after a count that covers the file's end only."""
    text = Text(view.label, style="bold" if view.role == "out" else "bold red")
    if view.problem:
        return text.append(f" {view.problem}", style="dim")
    more = "+" if view.partial else ""
    for count, word, icon, style in ((view.errors, "error", "✖", "bold red"), (view.warnings, "warning", "▲", "bold yellow")):
        if count:
            text.append(f" {icon} {count}{more} {word}{'s' if count > 1 else ''}", style=style)
    if not (view.errors or view.warnings):
        text.append(" no errors" + (" in its end" if view.partial else ""), style="dim green")
    return text


def body_lines(views: tuple[TailView, ...], rows: int) -> list[Text]:
    """The last lines of each file, the rows shared among them (a file with fewer lines leaves
    its rows to the others); with two files each line starts with its file's role (`out`, `err`)."""
    shown = [v for v in views if v.lines]
    if not shown:
        return [Text("no output yet" if views else "no output file known", style="dim")]
    takes = [0] * len(shown)
    while sum(takes) < rows and any(t < len(v.lines) for t, v in zip(takes, shown)):
        for k, view in enumerate(shown):  # one row each in turn
            if takes[k] < len(view.lines) and sum(takes) < rows:
                takes[k] += 1
    out: list[Text] = []
    for view, take in zip(shown, takes):
        for line in view.lines[-take:] if take else ():
            text = Text(no_wrap=True, overflow="ellipsis")
            if len(shown) > 1:
                text.append(f"{view.role} ", style=ROLE_STYLES.get(view.role, "dim"))
            text.append(line, style=TINTS.get(plain_log.classify(line) or "", ""))
            out.append(text)
    return out


class OutputPane(Widget, can_focus=True):
    """The job's output files' last lines; Enter follows StdOut in the log view."""

    DEFAULT_CSS = """
    OutputPane {
        height: auto;
        padding: 0 1;
        border-top: hkey $panel;
        border-title-color: $text;
    }
    OutputPane:focus {
        border-top: hkey $accent;
    }
    OutputPane.-tab {
        height: 1fr;
    }
    """
    BINDINGS = [
        Binding("enter", "follow", "Follow", show=False, tooltip="Open the job's StdOut in the log view, following it as it grows"),
        Binding("m", "merged", "Merged", show=False, tooltip="The job's StdOut, StdErr and per-rank files merged in time order"),
    ]
    """Out of the footer, which has no room for them at 80 columns: the pane's title says them
    first, and help lists them."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.views: tuple[TailView, ...] = ()
        self.job: JobFiles | None = None

    def show(self, views: tuple[TailView, ...], job: JobFiles | None) -> None:
        """Draw what the poll read; the layout is redone only when the number of lines changes."""
        before = self.get_content_height(Size(0, 0), Size(0, 0), 0)
        self.views, self.job = views, job
        title = Text().append("Output", style="bold").append(" ⏎ follow · m merged", style="dim")
        for view in views:
            title.append(" · ").append_text(counts_text(view))
        set_border_title(self, title)
        self.refresh(layout=self.get_content_height(Size(0, 0), Size(0, 0), 0) != before)

    def rows(self) -> int:
        return max(1, self.size.height) if self.has_class("-tab") else ROWS

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return min(ROWS, max(1, sum(len(v.lines) for v in self.views)))

    def render(self) -> Text:
        return Text("\n", no_wrap=True).join(body_lines(self.views, self.rows()))

    def _followed(self) -> TailView | None:
        return next((v for v in self.views if v.problem is None), None)

    def action_follow(self) -> None:
        """Enter: the log view on StdOut (StdErr when only it can be read), following it."""
        from gpuscope.tui.screens.views.log import LogViewScreen

        view = self._followed()
        if view is None:
            self.notify("No output file to open yet.", severity="warning")
            return
        self.app.push_screen(LogViewScreen(view.path, follow=True))

    def action_merged(self) -> None:
        """`m`: every output file of the job, merged in time order."""
        from gpuscope.tui.screens.views.merged_log import MergedLogScreen

        if self.job is None:
            self.notify("This scope has no job output files.", severity="warning")
            return
        self.app.push_screen(MergedLogScreen(self.job))
