"""Provides `status_text`: the watch screen's one-line state (live or paused, period, sort,
filters, row counts, read-only, last poll error), so every key's effect is visible at once;
and `StatusLine`, the widget that shows it.

`StatusLine` is not a `Static`: `Static.update` asks for a layout pass, which repaints the
whole screen, and this line changes with every key press.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from gpuscope.tui.model.job_outputs import TailView
from gpuscope.tui.model.watch import SORTS, ProcessView

SORT_LABELS = {key: label for key, (label, _, _) in SORTS.items()}


def status_text(
    paused: bool,
    interval: float,
    view: ProcessView,
    counts: tuple[int, int, str] | None,
    readonly: bool,
    error: str | None,
    narrow: bool = False,
    search: str | None = None,
    mode: Text | None = None,
    output: Text | None = None,
) -> Text:
    """`counts`: (rows shown, rows before filters, 'scope'/'all'/'node'), None before data.
    `narrow` (under 110 columns): the same facts in short words, so that the row counts and a
    filter are not cut off at 80 columns. `search`: the text of an F3 search in progress. `mode`:
    what replaces the live/paused state and the period (a replay's position and speed). `output`:
    the job output's error count and how to see it (`output_hint`)."""
    line = Text()
    if mode is not None:
        line.append_text(mode)
    elif paused:
        line.append(" PAUSED ", style="bold reverse yellow")
    else:
        line.append("● live ·", style="bold green")
    if mode is not None:
        line.append(f" · sort {SORT_LABELS.get(view.sort, view.sort) if narrow else view.sort_label}{'↑' if narrow and view.reverse else ''}")
    elif narrow:
        line.append(f" {interval:g} s · sort {SORT_LABELS.get(view.sort, view.sort)}{'↑' if view.reverse else ''}")
    else:
        line.append(f" every {interval:g} s (+/-) · sort {view.sort_label}")
    if view.tree:
        line.append(" · tree")
    if view.user is not None:
        line.append(" · user ").append(view.user, style="bold")
    if view.text:
        line.append(" · filter ").append(repr(view.text), style="bold")
    if search is not None:  # the box under the table searches: say so, its placeholder is gone once typed in
        line.append(" · search ").append(repr(search), style="bold").append(" (F3 next)", style="dim")
    if counts is not None:
        shown, total, scope = counts
        line.append(f" · {shown}/{total} {scope} procs" if narrow else f" · {shown} of {total} {scope} processes")
        if not narrow:
            line.append({"scope": " (a: all)", "all": " (a: scope)"}.get(scope, ""), style="dim")
    if readonly and mode is None:  # a replay is never live: no need to say
        line.append(" · read-only", style="bold")
    if output is not None:
        line.append(" · ").append_text(output)
    if error:
        line.append(f" · poll failed: {error}", style="bold red")
    return line


def output_hint(views: tuple[TailView, ...], tab: bool) -> Text:
    """`output ✖ 3 (o)`: the job output's errors at a glance, and the key that shows it (or,
    while it is shown in the table's place, goes back)."""
    errors = sum(v.errors for v in views)
    text = Text("output")
    if errors:
        text.append(f" ✖ {errors}{'+' if any(v.partial for v in views) else ''}", style="bold red")
    return text.append(" (o: processes)" if tab else " (o)", style="dim")


class StatusLine(Widget):
    """One line of `Text`; `show()` repaints only this line."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.text = Text()

    def show(self, text: Text) -> None:
        if text != self.text:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        text = self.text.copy()
        text.no_wrap, text.overflow = True, "ellipsis"  # a cut line ends in '…'
        return text
