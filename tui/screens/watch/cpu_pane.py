"""Provides `CpuPane`: per-core busy bars (htop's column layout), then memory, swap and load.

The job's own cores (its cpuset) get their number highlighted, so "asked for 2 cores, using
1" can be checked at a glance: one of the two highlighted bars is full, the other empty.
"""

from __future__ import annotations

import math

from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from gpuscope.metrics.samples import HostSample
from gpuscope.tui.render.bars import bar, fixed, id_ranges, level_style
from gpuscope.tui.widgets.quiet_update import same_text, set_border_title

GIB = 1024**3


def _columns(cores: int, width: int) -> int:
    """As many columns as keep bars at least 8 cells wide (5 on nodes with >32 cores)."""
    overhead = len(str(cores - 1)) + 1 + 5  # "12 " and " 100%"
    cell = overhead + (5 if cores > 32 else 8)
    return max(1, min(cores, (width + 1) // (cell + 1)))


def core_lines(host: HostSample, width: int, job_cores: frozenset[int]) -> list[Text]:
    """Column-major grid of `id bar pct` cells, like htop's CPU meters."""
    busy = host.cpu_percent
    n = len(busy)
    if n == 0:
        return [Text("no per-core reading", style="dim")]
    cols = _columns(n, width)
    rows = math.ceil(n / cols)
    cell = (width + 1) // cols - 1
    id_w = len(str(n - 1))
    bar_w = max(2, cell - id_w - 6)
    lines = []
    for r in range(rows):
        line = Text()
        for c in range(cols):
            core = c * rows + r
            if core >= n:
                break
            if c:
                line.append(" ")
            mine = core in job_cores
            line.append(str(core).rjust(id_w) + " ", style="bold magenta" if mine else "dim")
            line.append_text(bar(busy[core], bar_w))
            line.append(fixed(f"{busy[core]:.0f}%", 5, right=True), style=level_style(busy[core]))
        lines.append(line)
    return lines


def memory_lines(host: HostSample, width: int) -> list[Text]:
    """`Mem` and `Swp` bars with used/total, then the load average and the mean busy %."""
    m = host.memory
    bar_w = max(4, min(40, width - 4 - 14))
    out = []
    for label, used, total in (("Mem", m.used, m.total), ("Swp", m.swap_used, m.swap_total)):
        pct = 100.0 * used / total if total else None
        line = Text().append(label + " ", style="bold")
        line.append_text(bar(pct, bar_w, style="cyan" if label == "Mem" else "magenta"))
        line.append(fixed(f"{used / GIB:.1f}/{total / GIB:.1f}G", 13, right=True))
        lines_extra = width - line.cell_len
        if label == "Mem" and lines_extra > 16:
            line.append(f"  cache {m.cached / GIB:.1f}G", style="dim")
        out.append(line)
    busy = host.cpu_percent
    load = Text().append("Load ", style="bold")
    load.append(" ".join("n/a" if x is None or x != x else f"{x:.2f}" for x in host.load_avg))
    if busy:
        load.append(f" · {sum(busy) / len(busy):.0f}% busy avg", style=level_style(sum(busy) / len(busy)))
    load.append(f" · {host.hostname}", style="dim")
    out.append(load)
    for line in out:
        line.truncate(width, overflow="ellipsis")
    return out


class CpuRows(Widget):
    """Core grid plus memory lines; height follows the width (more columns, fewer rows).

    A line-API widget: the lines are turned into strips once per reading (`show`), which
    costs a tenth of letting Textual wrap and format one multi-line text every second."""

    DEFAULT_CSS = """
    CpuRows {
        height: auto;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.host: HostSample | None = None
        self.job_cores: frozenset[int] = frozenset()
        self._strips: list[Strip] = []
        self._drawn: list[Text] = []
        self._drawn_width = -1
        self._drawn_key: tuple[int, str] | None = None
        self._base = Style()
        self._cache: dict[str, tuple[Text, Strip]] = {}
        """Line text -> (line, strip) of recent readings."""

    def _lines(self, width: int) -> list[Text]:
        if self.host is None:
            return [Text("waiting for the first reading…", style="dim")]
        return core_lines(self.host, width, self.job_cores) + memory_lines(self.host, width)

    def show(self, host: HostSample, job_cores: frozenset[int]) -> None:
        """Take a new reading: repaint the lines that changed; re-run layout only when the
        number of lines did (a new core count)."""
        self.host, self.job_cores = host, job_cores
        width = self.size.width
        old = self._drawn
        self._draw(width)
        if len(old) != len(self._drawn) or width != self._drawn_width:
            self.refresh(layout=len(old) != len(self._drawn))
        else:
            changed = [Region(0, y, width, 1) for y, (a, b) in enumerate(zip(old, self._drawn)) if not same_text(a, b)]
            if changed:
                self.refresh(*changed)

    def _draw(self, width: int) -> None:
        """Lines to strips; an unchanged line keeps its strip (Mem, Swp, Load rarely change)."""
        lines = self._lines(width)
        key = (width, self.app.theme)
        if key != self._drawn_key:
            self._cache.clear()
            self._base = self.rich_style  # walks every ancestor: once per theme, not per line
            self._drawn_key = key
        console, strips = self.app.console, []
        for line in lines:
            cached = self._cache.get(line.plain)
            if cached is None or not same_text(cached[0], line):
                cached = self._cache[line.plain] = (line, Strip(line.render(console), line.cell_len).apply_style(self._base))
            strips.append(cached[1])
        if len(self._cache) > 4 * len(lines) + 16:
            self._cache = {line.plain: self._cache[line.plain] for line in lines}
        self._drawn, self._strips, self._drawn_width = lines, strips, width

    def notify_style_update(self) -> None:
        self._drawn_key = None  # a theme or CSS change: styles and strips drawn with them
        super().notify_style_update()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._drawn_width or self._drawn_key is None:
            self._draw(width)
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(width)


class CpuPane(VerticalScroll):
    """Scrolls when a many-core node does not fit."""

    DEFAULT_CSS = """
    CpuPane {
        height: auto;
    }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield CpuRows()

    def show(self, host: HostSample, job_cores: frozenset[int]) -> None:
        # Nothing that changes every second goes in the title: a new title repaints the whole
        # pane's frame. The average is on the Load line.
        title = Text().append("CPU", style="bold")
        title.append(f" · {len(host.cpu_percent)} cores")
        if job_cores:
            title.append(" · job ")
            title.append(id_ranges(job_cores), style="bold magenta")
        set_border_title(self, title)
        self.query_one(CpuRows).show(host, job_cores)
