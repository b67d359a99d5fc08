"""Provides `GpuPane`: one line per GPU (utilisation and memory bars, temperature, power, and a
sparkline of recent utilisation), titled with the backend and a SIMULATED label when the GPUs
are not real.

All rows are one widget that renders text for its current width, inside a scroll container,
so 16 GPUs cost one render and scroll on a small terminal instead of squeezing.
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget

from gpuscope.metrics.history import History
from gpuscope.metrics.samples import GpuSample, GpuStatus
from gpuscope.tui.model.watch_bars import bar, fixed, level_style, sparkline
from gpuscope.tui.widgets.quiet_update import set_border_title

GIB = 1024**3


def _short_name(name: str) -> str:
    return name.replace("NVIDIA ", "").replace("GeForce ", "")


def _mem_text(g: GpuSample) -> str:
    if g.memory_used is None or not g.memory_total:
        return "n/a"
    return f"{g.memory_used / GIB:.1f}/{g.memory_total / GIB:.0f}G"


def gpu_line(g: GpuSample, width: int, history: Sequence[float], allocated: bool) -> Text:
    """One GPU in `width` cells; optional parts (name, temperature/power, sparkline) drop out
    as the width shrinks, the bars never do."""
    line = Text().append("●" if allocated else " ", style="bold magenta")
    line.append(f"{g.index:>2} ", style="bold")
    name_w = 15 if width >= 90 else 0
    if name_w:
        line.append(fixed(_short_name(g.name), name_w) + " ", style="dim")
    if g.error:
        line.append(g.error, style="red")
        line.truncate(width, overflow="ellipsis")
        return line
    extras = width >= 72
    rest = width - len(line) - 5 - 11 - (11 if extras else 0)  # "100%" + " 34.1/80G " + " 71°C 310W"
    bar_w = max(3, min(14, rest // 3))
    spark_w = rest - 2 * bar_w - 2  # the gap between the bars and the one before the sparkline
    mem_pct = 100.0 * g.memory_used / g.memory_total if g.memory_used is not None and g.memory_total else None
    line.append_text(bar(g.util_gpu, bar_w))
    line.append(fixed("n/a" if g.util_gpu is None else f"{g.util_gpu:.0f}%", 5, right=True), style=level_style(g.util_gpu))
    line.append(" ")
    line.append_text(bar(mem_pct, bar_w))
    line.append(fixed(_mem_text(g), 11, right=True))
    if extras:
        temp = "n/a" if g.temperature_c is None else f"{g.temperature_c:.0f}°C"
        power = "n/a" if g.power_w is None else f"{g.power_w:.0f}W"
        line.append(fixed(temp, 6, right=True), style="dim")
        line.append(fixed(power, 5, right=True), style="dim")
    if spark_w >= 6:
        line.append(" ")
        line.append_text(sparkline(history, spark_w))
    line.truncate(width, overflow="ellipsis")
    return line


def pane_title(status: GpuStatus, gpus: Sequence[GpuSample], unseen: int = 0) -> Text:
    """`GPUs SIMULATED · 8 × A100-SXM4-80GB · driver 550.54` (the label in reverse video)."""
    title = Text().append("GPUs", style="bold")
    if status.backend == "simulated" or any(g.simulated for g in gpus):
        title.append(" ")  # first, so a narrow pane cannot cut it off
        title.append(" SIMULATED ", style="bold reverse yellow")
    names = sorted({_short_name(g.name) for g in gpus})
    if gpus:
        title.append(f" · {len(gpus)} × {names[0]}" if len(names) == 1 else f" · {len(gpus)} GPUs")
    if status.driver_version:
        title.append(f" · driver {status.driver_version}")
    if unseen:  # NVML reports host pids; in a container they are not in our /proc
        title.append(f" · {unseen} GPU process{'es' if unseen > 1 else ''} not in /proc (other PID namespace?)", style="yellow")
    return title


class GpuRows(Widget):
    """The GPU lines; height is one line per GPU at any width."""

    DEFAULT_CSS = """
    GpuRows {
        height: auto;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.gpus: tuple[GpuSample, ...] = ()
        self.history: History | None = None
        self.allocated: frozenset[int] = frozenset()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.gpus))

    def render(self) -> Text:
        width = self.size.width
        if not self.gpus:
            waiting = self.history is None
            return Text("waiting for the first reading…" if waiting else "the GPU backend reports no GPUs", style="dim")
        lines = []
        for g in self.gpus:
            recent = self.history.series(f"gpu{g.index}.util")[-width:].tolist() if self.history else []
            lines.append(gpu_line(g, width, recent, g.index in self.allocated))
        return Text("\n").join(lines)


class GpuPane(VerticalScroll):
    """The GPU rows under a title that names the backend (and says SIMULATED)."""

    DEFAULT_CSS = """
    GpuPane {
        height: auto;
    }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield GpuRows()

    def show(self, status: GpuStatus, gpus: tuple[GpuSample, ...], history: History, allocated: frozenset[int], unseen: int = 0) -> None:
        """Draw `gpus`; `allocated` (the job's GPU indices) get a marker; `unseen`: GPU
        processes missing from the process list, said in the title instead of staying silent."""
        rows = self.query_one(GpuRows)
        relayout = len(rows.gpus or ()) != len(gpus)  # only a new row count changes the layout
        rows.gpus, rows.history, rows.allocated = gpus, history, allocated
        title = pane_title(status, gpus, unseen)
        set_border_title(self, title)
        rows.refresh(layout=relayout)
