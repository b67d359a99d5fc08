"""Provides `GpuPane`: one line per GPU (name, utilisation, memory, temperature and power, with
bars and a sparkline of recent utilisation where there is room), a line per MIG instance under
its GPU (as many for every MIG GPU, and how many more, when they do not all fit), titled with the backend and a SIMULATED label when the GPUs are not real.

All rows are one widget that renders text for its current width, so 16 GPUs cost one render.
When the pane is shorter than its lines, the last one says `+N more GPUs` (z zooms the pane).
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.containers import Vertical
from textual.geometry import Size
from textual.widget import Widget

from gpuscope.metrics.history import History
from gpuscope.metrics.samples import GpuSample, GpuStatus, MigSample
from gpuscope.tui.render.bars import bar, fixed, level_style, sparkline
from gpuscope.tui.widgets.quiet_update import set_border_title

GIB = 1024**3


def _short_name(name: str) -> str:
    return name.replace("NVIDIA ", "").replace("GeForce ", "")


def _mem_text(g: GpuSample) -> str:
    if g.memory_used is None or not g.memory_total:
        return "n/a"
    return f"{g.memory_used / GIB:.1f}/{g.memory_total / GIB:.0f}G"


def _model(name: str) -> str:
    """`NVIDIA H100 80GB HBM3` -> `H100`, `NVIDIA A100-SXM4-80GB` -> `A100`: the model alone."""
    return _short_name(name).replace("-", " ").split(" ")[0] or name


def util_text(g: GpuSample) -> str:
    """`98%`; `MIG` where NVML has no utilisation because the GPU is split into MIG instances
    (NOT_SUPPORTED on a MIG parent), `n/a` otherwise."""
    if g.util_gpu is not None:
        return f"{g.util_gpu:.0f}%"
    return "MIG" if g.mig else "n/a"


def gpu_line(g: GpuSample, width: int, history: Sequence[float], allocated: bool, label: str | None = None) -> Text:
    """One GPU in `width` cells: index (or `label`, e.g. `cn01:3` across nodes), name,
    utilisation, memory, temperature and power always (abbreviated when narrow); the bars, the
    full name and the sparkline join as room allows."""
    line = Text().append("●" if allocated else " ", style="bold magenta")
    line.append(f"{g.index:>2} " if label is None else f" {label} ", style="bold")
    if width >= 90:
        line.append(fixed(_short_name(g.name), 15) + " ", style="dim")
    elif label is None:  # narrow: the model alone; with a node:index label, none (the title names it)
        line.append(fixed(_model(g.name), 5) + " ", style="dim")
    if g.error:
        line.append(g.error, style="red")
        line.truncate(width, overflow="ellipsis")
        return line
    rest = width - len(line) - 4 - 10 - 10  # "100%" + " 34.1/80G" + " 71° 310W"
    bar_w = min(14, (rest - 2) // 3) if rest >= 8 else 0
    spark_w = rest - 2 * bar_w - (2 if bar_w else 0)  # the gaps before each bar
    mem_pct = 100.0 * g.memory_used / g.memory_total if g.memory_used is not None and g.memory_total else None
    if bar_w:
        line.append_text(bar(g.util_gpu, bar_w))
    line.append(fixed(util_text(g), 4, right=True), style=level_style(g.util_gpu))
    line.append(" ")
    if bar_w:
        line.append_text(bar(mem_pct, bar_w))
    line.append(fixed(_mem_text(g), 9, right=True), style=level_style(mem_pct) if not bar_w else "")
    temp = "n/a" if g.temperature_c is None else f"{g.temperature_c:.0f}°"
    power = "n/a" if g.power_w is None else f"{g.power_w:.0f}W"
    line.append(fixed(temp, 5, right=True), style="dim")
    line.append(fixed(power, 5, right=True), style="dim")
    if spark_w >= 6:
        line.append(" ")
        line.append_text(sparkline(history, spark_w - 1))
    line.truncate(width, overflow="ellipsis")
    return line


def mig_line(m: MigSample, width: int, last: bool) -> Text:
    """One MIG instance under its GPU: profile and memory (NVML gives no utilisation per instance)."""
    line = Text("   " + ("└─" if last else "├─") + " ", style="dim")
    line.append(fixed(f"MIG {m.mig_index} {m.profile}", 16))
    mem_pct = 100.0 * m.memory_used / m.memory_total if m.memory_used is not None and m.memory_total else None
    bar_w = min(14, max(0, width - len(line) - 10))
    if bar_w >= 3:
        line.append_text(bar(mem_pct, bar_w))
    text = "n/a" if m.memory_used is None or not m.memory_total else f"{m.memory_used / GIB:.1f}/{m.memory_total / GIB:.0f}G"
    line.append(fixed(text, 10, right=True))
    line.truncate(width, overflow="ellipsis")
    return line


def mig_more(hidden: Sequence[MigSample], after: bool, width: int) -> Text:
    """The last line under a MIG GPU whose instances do not all fit: how many are left out
    (`after` some shown: `+N more`), and their memory in use."""
    line = Text("   └─ ", style="dim").append(f"{'+' if after else ''}{len(hidden)}{' more' if after else ''} MIG instance{'s' if len(hidden) > 1 else ''}")
    used = [m.memory_used for m in hidden]
    if all(u is not None for u in used):
        line.append(f" · {sum(used) / GIB:.1f}G used", style="dim")  # type: ignore[arg-type]
    line.append(" (z: zoom)", style="dim")
    line.truncate(width, overflow="ellipsis")
    return line


def more_line(hidden: int, width: int) -> Text:
    """The last line when GPUs do not fit: how many are left out, and how to see them."""
    return Text(fixed(f" +{hidden} more GPU{'s' if hidden > 1 else ''} (z: zoom)", width), style="bold yellow")


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
    """The GPU lines (a GPU's MIG instances under it); when the pane is shorter than they are,
    the last line says how many GPUs are left out instead of hiding them silently."""

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
        self.labels: dict[int, str] | None = None

    def line_count(self) -> int:
        return max(1, sum(1 + len(g.mig) for g in self.gpus))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.line_count()

    def room(self) -> int:
        """Lines the pane shows: its own height, less where the parent (max-height) cuts it."""
        parent = self.parent
        height = self.size.height
        if isinstance(parent, Widget) and parent.content_region.height > 0:
            height = min(height, parent.content_region.height)
        return height

    def render(self) -> Text:
        width = self.size.width
        if not self.gpus:
            waiting = self.history is None
            return Text("waiting for the first reading…" if waiting else "the GPU backend reports no GPUs", style="dim")
        room = self.room()
        # Every MIG GPU the same way: all its instances when every line fits, else the same
        # number of lines each (instances, the last line saying how many more), else none
        # (the GPU's own line says MIG).
        split = sum(1 for g in self.gpus if g.mig)
        per = None if self.line_count() <= room else max(0, room - len(self.gpus)) // max(1, split)
        lines: list[tuple[int, Text]] = []  # (GPU position, line)
        labels = self.labels
        label_w = min(16, max((len(v) for v in labels.values()), default=0)) if labels else 0
        for k, g in enumerate(self.gpus):
            recent = self.history.series(f"gpu{g.index}.util")[-width:].tolist() if self.history else []
            label = fixed(labels.get(g.index, str(g.index)), label_w) if labels else None
            lines.append((k, gpu_line(g, width, recent, g.index in self.allocated, label)))
            shown = g.mig if per is None or len(g.mig) <= per else g.mig[: max(0, per - 1)]
            lines.extend((k, mig_line(m, width, i == len(g.mig) - 1)) for i, m in enumerate(shown))
            if per and len(g.mig) > per:
                lines.append((k, mig_more(g.mig[len(shown):], bool(shown), width)))
        if len(lines) > room >= 1:
            kept = lines[: room - 1]
            shown = kept[-1][0] + 1 if kept else 0  # a GPU with some of its MIG lines counts as shown
            return Text("\n").join([line for _, line in kept] + [more_line(len(self.gpus) - shown, width)])
        return Text("\n").join(line for _, line in lines)


class GpuPane(Vertical, can_focus=True):
    """The GPU rows under a title that names the backend (and says SIMULATED)."""

    DEFAULT_CSS = """
    GpuPane {
        height: auto;
        overflow: hidden;
    }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield GpuRows()

    def on_resize(self) -> None:
        self.query_one(GpuRows).refresh()  # a new height may change what fits

    def show(self, status: GpuStatus, gpus: tuple[GpuSample, ...], history: History, allocated: frozenset[int], unseen: int = 0,
             labels: dict[int, str] | None = None) -> None:
        """Draw `gpus`; `allocated` (the job's GPU indices) get a marker; `unseen`: GPU
        processes missing from the process list, said in the title instead of staying silent;
        `labels`: what to call each GPU instead of its index (`node:index` across nodes)."""
        rows = self.query_one(GpuRows)
        before = rows.line_count()
        rows.gpus, rows.history, rows.allocated, rows.labels = gpus, history, allocated, labels
        relayout = rows.line_count() != before  # only a new line count changes the layout
        title = pane_title(status, gpus, unseen)
        set_border_title(self, title)
        rows.refresh(layout=relayout)
