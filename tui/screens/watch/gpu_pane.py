"""Provides `GpuPane`: one line per GPU (name, utilisation, memory, temperature and power, with
bars and a sparkline of recent utilisation where there is room), a line per MIG instance under
its GPU (as many for every MIG GPU, and how many more, when they do not all fit), titled with the backend and a SIMULATED label when the GPUs are not real.

What the GPU really does (GPM: SM active, tensor active, DRAM bandwidth, Hopper and later) and
its energy since the watch started join each row as room allows, activity first: in the row
from a 57-cell pane (a 120-column terminal), else on a detail line under each GPU when the pane
has the lines for all of them (z zooms it). GPUs without GPM say `activity n/a`, never 0; the
pane's tooltip says why, and what each figure is.

All rows are one widget that renders text for its current width, so 16 GPUs cost one render.
When the pane is shorter than its lines, the last one says `+N more GPUs` (z zooms the pane).
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.containers import Vertical
from textual.geometry import Size
from textual.widget import Widget

from gpuscope.metrics.energy import human_energy
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import GpuSample, GpuStatus, MigSample
from gpuscope.tui.render.bars import bar, fixed, id_ranges, level_style, sparkline
from gpuscope.tui.widgets.quiet_update import set_border_title

GIB = 1024**3
FIXED_W = 4 + 10 + 10
"""Cells every row's numbers take: "100%", " 34.1/80G", " 71° 310W"."""
ACTIVITY_W = 26
"""Cells of the GPM block in a row: " SM 100% TC 100% DRAM 100%"."""
ENERGY_W = 9
"""Cells of the energy since the watch started in a row: " 1.84 kWh"."""
LEGEND = ("SM: share of the SMs with work resident (GPM), TC: tensor-core activity, DRAM: DRAM bandwidth used of its "
          "peak, each between two refreshes (utilization only says some kernel ran); energy: since the watch started, "
          "from NVML's energy counter, else power integrated over the refreshes. A narrow pane shows them on a line under "
          "each GPU when it has the lines (z zooms the focused pane)")


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


def has_activity(g: GpuSample) -> bool:
    """Whether GPM gave this GPU any of the figures a row shows."""
    return g.sm_active_pct is not None or g.tensor_active_pct is not None or g.dram_bw_pct is not None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def activity_cells(g: GpuSample, compact: bool = False) -> Text:
    """` SM  12% TC   0% DRAM  45%` (ACTIVITY_W cells; `compact`: without the padding, for a
    detail line); `activity n/a` when GPM gave none of them (the tooltip says why)."""
    if not has_activity(g):
        return Text("activity n/a" if compact else fixed(" activity n/a", ACTIVITY_W), style="dim")
    text = Text()
    for label, value in (("SM", g.sm_active_pct), ("TC", g.tensor_active_pct), ("DRAM", g.dram_bw_pct)):
        text.append(f"{' ' if text or not compact else ''}{label}", style="dim")
        text.append(" " + _pct(value) if compact else fixed(_pct(value), 5, right=True), style=level_style(value))
    return text


def energy_text(history: History | None, index: int) -> str | None:
    """GPU `index`'s energy since the watch started (`1.84 kWh`, `n/a` before two readings);
    None when the watch never read it."""
    figure = history.energy.figure(index) if history is not None else None
    return None if figure is None else human_energy(figure.joules)


def gpu_line(g: GpuSample, width: int, history: Sequence[float], allocated: bool, label: str | None = None, *,
             model: bool = True, activity: bool = False, energy: str | None = None) -> Text:
    """One GPU in `width` cells: index (or `label`, e.g. `cn01:3` across nodes), name,
    utilisation, memory, temperature and power always (abbreviated when narrow); then, as room
    allows, the GPM block (`activity`), the bars, the full name, the `energy` since the watch
    started and the sparkline (the energy takes the sparkline's cells, never the bars'). `model`: the short model name on narrow rows (left out when the
    title names the only model and the GPM block needs its cells)."""
    line = Text().append("●" if allocated else " ", style="bold magenta")
    line.append(f"{g.index:>2} " if label is None else f" {label} ", style="bold")
    if width >= 90:
        line.append(fixed(_short_name(g.name), 15) + " ", style="dim")
    elif label is None and model:  # narrow: the model alone; with a node:index label, none (the title names it)
        line.append(fixed(_model(g.name), 5) + " ", style="dim")
    if g.error:
        line.append(g.error, style="red")
        line.truncate(width, overflow="ellipsis")
        return line
    rest = width - len(line) - FIXED_W
    if activity and rest >= ACTIVITY_W:
        rest -= ACTIVITY_W
    else:
        activity = False
    bar_w = min(14, (rest - 2) // 3) if rest >= 8 else 0
    spark_w = rest - 2 * bar_w - (2 if bar_w else 0)  # the gaps before each bar
    if energy is not None and spark_w >= ENERGY_W:  # in the sparkline's place, never the bars'
        spark_w -= ENERGY_W
    else:
        energy = None
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
    if activity:
        line.append_text(activity_cells(g))
    if energy is not None:
        line.append(fixed(energy, ENERGY_W, right=True), style="dim")
    if spark_w >= 6:
        line.append(" ")
        line.append_text(sparkline(history, spark_w - 1))
    line.truncate(width, overflow="ellipsis")
    return line


def detail_line(g: GpuSample, width: int, activity: bool, energy: str | None) -> Text:
    """The line under a GPU in a pane too narrow for them in its row: its GPM figures (when the
    pane shows activity) and its energy since the watch started."""
    line = Text("    ")
    if activity and not g.error:
        line.append_text(activity_cells(g, compact=True))
    if energy is not None:
        line.append(" · " if len(line) > 4 else "", style="dim").append(energy, style="dim")
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


def activity_seen(gpus: Sequence[GpuSample], history: History | None) -> bool:
    """Whether any GPU has GPM figures now or had some during the watch (a GPU's rows then
    keep their place for them, `activity n/a` while it has none)."""
    if any(has_activity(g) for g in gpus):
        return True
    return history is not None and any(history.peak(f"gpu{g.index}.{name}") is not None
                                       for g in gpus for name in ("sm_active", "tensor", "dram"))


def pane_tooltip(gpus: Sequence[GpuSample], history: History | None) -> str:
    """What the figures are, then why any is n/a (GPUs with the same reason together)."""
    reasons: dict[str, list[int]] = {}
    for g in gpus:
        if g.activity_note:
            what = "activity" if has_activity(g) else "activity n/a"
            reasons.setdefault(f"{what}: {g.activity_note}", []).append(g.index)
        figure = history.energy.figure(g.index) if history is not None else None
        for note in figure.notes if figure is not None else ((f"energy: {g.energy_note}",) if g.energy_note else ()):
            reasons.setdefault(note if note.startswith(("energy", "integrated", "no energy")) else f"energy: {note}", []).append(g.index)
    lines = [LEGEND]
    so_far = [f"GPU {g.index} {energy}" for g in gpus if (energy := energy_text(history, g.index)) is not None]
    if so_far:
        lines.append("energy so far: " + " · ".join(so_far))
    lines += [f"GPU {id_ranges(tuple(sorted(set(ids))))}: {text}" for text, ids in reasons.items()]
    return "\n".join(lines)


def pane_title(status: GpuStatus, gpus: Sequence[GpuSample], unseen: int = 0, activity: bool = True) -> Text:
    """`GPUs SIMULATED · 8 × A100-SXM4-80GB · driver 550.54` (the label in reverse video);
    `· activity n/a` when no GPU has GPM figures (`activity` False), the tooltip says why."""
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
    if gpus and not activity:
        title.append(" · activity n/a", style="dim")
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
        self.activity = False
        """Some GPU has (or had) GPM figures: rows keep a place for them."""

    def layout_for(self, width: int) -> tuple[bool, bool, bool]:
        """(model names in narrow rows, GPM block in the rows, detail lines wanted) at `width`:
        the block first, taking the model's cells when the title names the only model; a
        detail line per GPU (with its energy) when the block has no room in the rows. Without
        GPM figures, no detail lines: the energy is in the rows where they have room, and in
        the tooltip."""
        labels = self.labels
        label_w = min(16, max((len(v) for v in labels.values()), default=0)) + 2 if labels else 3
        name_w = 16 if width >= 90 else (0 if labels else 6)
        rest = width - 1 - label_w - name_w - FIXED_W
        model, inline = True, self.activity and rest >= ACTIVITY_W
        if self.activity and not inline and name_w == 6 and rest + 6 >= ACTIVITY_W and len({g.name for g in self.gpus}) == 1:
            model, inline = False, True
        return model, inline, self.activity and not inline

    def most_lines(self) -> int | None:
        """The most lines the pane can give (its max-height less its border); None when unbounded."""
        pane = self.parent
        if not isinstance(pane, Widget) or pane.styles.max_height is None or not isinstance(pane.parent, Widget):
            return None
        return int(pane.styles.max_height.resolve(pane.parent.size, self.app.size)) - pane.styles.gutter.height

    def line_count(self, width: int | None = None) -> int:
        """Lines wanted: each GPU and its MIG instances, and the detail lines when they are
        wanted and the pane can hold them all."""
        base = max(1, sum(1 + len(g.mig) for g in self.gpus))
        if not self.layout_for(self.size.width if width is None else width)[2]:
            return base
        most = self.most_lines()
        return base + len(self.gpus) if most is None or base + len(self.gpus) <= most else base

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.line_count(width)

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
        model, inline, wanted = self.layout_for(width)
        base = sum(1 + len(g.mig) for g in self.gpus)
        details = wanted and base + len(self.gpus) <= room
        # Every MIG GPU the same way: all its instances when every line fits, else the same
        # number of lines each (instances, the last line saying how many more), else none
        # (the GPU's own line says MIG).
        split = sum(1 for g in self.gpus if g.mig)
        per = None if base <= room else max(0, room - len(self.gpus)) // max(1, split)
        lines: list[tuple[int, Text]] = []  # (GPU position, line)
        labels = self.labels
        label_w = min(16, max((len(v) for v in labels.values()), default=0)) if labels else 0
        for k, g in enumerate(self.gpus):
            recent = self.history.series(f"gpu{g.index}.util")[-width:].tolist() if self.history else []
            label = fixed(labels.get(g.index, str(g.index)), label_w) if labels else None
            energy = energy_text(self.history, g.index)
            lines.append((k, gpu_line(g, width, recent, g.index in self.allocated, label, model=model, activity=inline,
                                       energy=None if details else energy)))
            if details:
                lines.append((k, detail_line(g, width, self.activity, energy)))
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
        self.query_one(GpuRows).refresh(layout=True)  # a new size may change what fits, and detail lines come and go with the width

    def show(self, status: GpuStatus, gpus: tuple[GpuSample, ...], history: History, allocated: frozenset[int], unseen: int = 0,
             labels: dict[int, str] | None = None) -> None:
        """Draw `gpus`; `allocated` (the job's GPU indices) get a marker; `unseen`: GPU
        processes missing from the process list, said in the title instead of staying silent;
        `labels`: what to call each GPU instead of its index (`node:index` across nodes)."""
        rows = self.query_one(GpuRows)
        before = rows.line_count()
        rows.gpus, rows.history, rows.allocated, rows.labels = gpus, history, allocated, labels
        rows.activity = activity_seen(gpus, history)
        relayout = rows.line_count() != before  # only a new line count changes the layout
        title = pane_title(status, gpus, unseen, rows.activity)
        set_border_title(self, title)
        tooltip = pane_tooltip(gpus, history)
        if tooltip != rows.tooltip:
            rows.tooltip = tooltip
        rows.refresh(layout=relayout)
