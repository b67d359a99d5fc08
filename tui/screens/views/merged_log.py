"""Provides `MergedLogScreen`: a job's output files (StdOut, StdErr, per-node and per-task files,
`rank-N.log` beside them) as one log, in time order where the lines carry timestamps, each
line tagged with its file (toolong's merged view).

The worker finds the files (`tui.model.job_outputs.all_outputs`) and reads the last
`log_merge.TAIL_BYTES` of each (`parsers.log_merge.read`); the lines are drawn with the line
API, only those on screen, error and warning lines tinted as in the log view (classified
when drawn). Lines are plain, cleaned text.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import log_merge
from gpuscope.parsers import logs as plain_log
from gpuscope.tui.model.job_outputs import JobFiles, all_outputs
from gpuscope.tui.screens.base import CannotShow
from gpuscope.tui.screens.views.base import FileScreen

TAG_WIDTH = 18
"""The most cells a file's tag takes (a longer name is cut)."""
TAG_STYLES = ("cyan", "magenta", "green", "blue", "yellow", "bright_cyan", "bright_magenta", "bright_green")


class MergedLines(ScrollView, can_focus=True):
    """Merged lines, each after its file's tag in that file's colour."""

    COMPONENT_CLASSES = {"merged-lines--error", "merged-lines--warning"}
    DEFAULT_CSS = """
    MergedLines { height: 1fr; background: $surface; }
    MergedLines > .merged-lines--error { color: $text-error; background: $error-muted; }
    MergedLines > .merged-lines--warning { color: $text-warning; background: $warning-muted; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.merged: log_merge.Merged | None = None
        self._tag_w = 0
        self._kinds: dict[int, str | None] = {}

    def show(self, merged: log_merge.Merged) -> None:
        self.merged, self._kinds = merged, {}
        self._tag_w = min(TAG_WIDTH, max((cell_len(label) for label in merged.labels), default=0))
        widest = max((cell_len(m.text) for m in merged.lines[-2000:]), default=0)
        self.virtual_size = Size(self._tag_w + 3 + widest, len(merged.lines))
        self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def _kind(self, index: int) -> str | None:
        if index not in self._kinds:
            assert self.merged is not None
            self._kinds[index] = plain_log.classify(self.merged.lines[index].text)
        return self._kinds[index]

    def render_line(self, y: int) -> Strip:
        merged, width, base = self.merged, self.size.width, self.rich_style
        index = int(self.scroll_offset.y) + y
        if merged is None or index >= len(merged.lines):
            return Strip.blank(width, base)
        line = merged.lines[index]
        label = merged.labels[line.source]
        tag = label if cell_len(label) <= self._tag_w else label[: self._tag_w - 1] + "…"
        tag_style = base + Style(color=TAG_STYLES[line.source % len(TAG_STYLES)])
        kind = self._kind(index)
        style = base + self.get_component_rich_style(f"merged-lines--{kind}") if kind else base
        text = Strip([Segment(line.text, style)]).crop(int(self.scroll_offset.x), int(self.scroll_offset.x) + width)
        head = Strip([Segment(tag.ljust(self._tag_w), tag_style), Segment(" │ ", base + Style(dim=True))])
        return Strip.join([head, text]).extend_cell_length(width, style).crop(0, width)


class MergedLogScreen(FileScreen):
    """A job's output files as one log, in time order, each line tagged with its file."""

    KIND = "Merged output"
    HELP_TITLE = "Keys: merged output"
    DEFAULT_CSS = """
    MergedLogScreen #merged-body { height: 1fr; }
    """
    BINDINGS = [
        Binding("g,home", "edge(False)", "Top", show=False, tooltip="First line"),
        Binding("G,end", "edge(True)", "End", show=False, tooltip="Last line"),
    ]
    LOADING_TEXT = "Finding and reading the output files of {name} ..."

    def __init__(self, job: JobFiles) -> None:
        super().__init__(job.stdout or job.stderr or job.work_dir or ".")
        self.job = job
        self.paths = [f"job {job.job_id}" if job.job_id else "the job"]

    @property
    def name_text(self) -> str:
        return clean(self.paths[0])

    def compose_body(self) -> ComposeResult:
        yield MergedLines(id="merged-body")

    def read_model(self) -> log_merge.Merged:
        files = all_outputs(self.job)
        if not files:
            named = ", ".join(clean(p) for p in (self.job.stdout, self.job.stderr) if p)
            raise CannotShow(f"No output file of {self.name_text} exists yet (scontrol names {named or 'none'}).")
        return log_merge.read(files)

    def show(self, model: log_merge.Merged) -> None:
        self.query_one(MergedLines).show(model)
        self.query_one("#view-switch").current = "merged-body"  # type: ignore[attr-defined]
        self.sub_title = f"{self.KIND} · {self.name_text} · {len(model.labels)} file{'s' if len(model.labels) != 1 else ''}"
        self.status(merged_status(model))
        self.query_one(MergedLines).focus()

    def action_edge(self, end: bool) -> None:
        lines = self.query_one(MergedLines)
        lines.scroll_end(animate=False) if end else lines.scroll_home(animate=False)


def merged_status(merged: log_merge.Merged) -> str:
    """`3 files · 1,204 lines in time order · slurm-1.err has no timestamps (after the rest) ·
    last 4 MB of slurm-1.out · missing.out: No such file`."""
    stamped = {m.source for m in merged.lines if m.time is not None}
    present = {m.source for m in merged.lines}
    parts = [f"{len(merged.labels)} file{'s' if len(merged.labels) != 1 else ''} · {len(merged.lines):,} lines"
             + (" in time order" if stamped else " (no timestamps: one file after the other)")]
    unstamped = [merged.labels[i] for i in sorted(present - stamped)]
    if stamped and unstamped:
        parts.append(f"no timestamps, shown after the rest: {', '.join(unstamped)}")
    if merged.cut:
        parts.append(f"last {log_merge.TAIL_BYTES // (1024 * 1024)} MB of {', '.join(merged.cut)}")
    parts += [f"{f.file}: {f.message}" for f in merged.findings]
    return clean(" · ".join(parts))
