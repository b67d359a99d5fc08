"""Provides `JobPanel`: what the scope was given against what it uses (cores, memory, GPUs),
with peaks, the GPUs' energy since the watch started, the verdicts in plain words, and the
evidence for each allocation.

Verdicts first (most serious first, the fine ones on one line), then allocation versus use:
side by side when wide, verdicts on top when narrow, so a short terminal keeps them. Everything that came from
the system (labels, cgroup paths, evidence, scontrol's messages) is `Text`, never markup, and
passes through `metrics.safe_text.clean` (no escape sequence reaches the terminal).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from gpuscope.metrics.energy import human_energy
from gpuscope.metrics.history import History
from gpuscope.metrics.job.verdicts import ranked
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import elapsed_text, scope_memory_used
from gpuscope.metrics.units import human_bytes
from gpuscope.tui.model.watch import activity_verdicts, scope_gpus
from gpuscope.tui.render.bars import id_ranges
from gpuscope.tui.widgets.quiet_update import set_border_title, set_text

ICONS = {"problem": ("✖", "bold red"), "warning": ("▲", "bold yellow"), "ok": ("✓", "green")}
WINDOW = 60.0


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "n/a" if value is None else format(value, fmt)


def use_lines(snapshot: Snapshot, history: History) -> list[Text]:
    """CPU, memory and GPU lines: allocated, now, mean over the last minute, peak."""
    scope = snapshot.scope
    if scope.kind == "node":  # the evidence says why (e.g. "no job found"), when there is some
        out = [] if scope.evidence else [Text("Whole node: no job, user or process scope.", style="dim")]
    else:
        cpu = Text().append("CPU ", style="bold")
        if scope.cpus_allocated is not None:
            cpu.append(f"{scope.cpus_allocated} allocated")
            if scope.cpu_ids:
                cpu.append(f" ({id_ranges(scope.cpu_ids)})", style="magenta")
        else:
            cpu.append("no allocation known", style="dim")
        cpu.append(f" · busy {_num(history.last('scope.cores'))} now, {_num(history.window_mean('scope.cores', WINDOW))} avg 1 min")
        cpu.append(f" · peak {_num(history.peak('scope.cores'))}")
        mem = Text().append("Mem ", style="bold")
        limit = scope.memory_limit
        mem.append(f"{human_bytes(limit)} limit" if limit else "no limit known", style="" if limit else "dim")
        used = scope_memory_used(snapshot)
        peak = scope.memory_peak if scope.memory_peak is not None else history.peak("scope.mem")
        mem.append(f" · {human_bytes(used)} used")
        mem.append(f" · peak {human_bytes(peak)}")
        if limit and peak is not None:
            mem.append(f" ({peak / limit:.0%})")
        out = [cpu, mem, gpu_line(snapshot, history)]
    energy = energy_line(snapshot, history)
    if energy is not None:
        out.append(energy)
    for problem in scope.problems:
        out.append(Text("✖ " + clean(problem), style="red"))
    if scope.evidence:
        out.append(Text("evidence: " + " · ".join(clean(e) for e in scope.evidence), style="dim"))
    return out


def gpu_line(snapshot: Snapshot, history: History) -> Text:
    """Allocated GPUs with their mean use over the last minute and the highest memory peak."""
    line = Text().append("GPU ", style="bold")
    given = [g.index for g in snapshot.scope.gpus if g.index is not None]
    if not snapshot.scope.gpus:
        line.append("none allocated", style="dim")
        return line
    line.append(f"{id_ranges(tuple(given)) or len(snapshot.scope.gpus)} allocated", style="")
    means = [history.window_mean(f"gpu{i}.util", WINDOW) for i in given]
    known = [m for m in means if m is not None]
    if known:
        line.append(f" · busy {sum(known) / len(known):.0f}% avg 1 min")
    peaks = [(history.peak(f"gpu{i}.mem_bytes"), i) for i in given]
    peaks = [(p, i) for p, i in peaks if p is not None]
    if peaks:
        top, index = max(peaks)
        line.append(f" · peak mem {human_bytes(top)} (GPU {index})")
    return line


def energy_line(snapshot: Snapshot, history: History) -> Text | None:
    """`Energy GPUs 0-3: 1.84 kWh so far, 612 W mean (energy counters over 12:03)`: the view's
    GPUs since the watch started (their counters' deltas, else integrated power, said), the
    mean their sum drew; None when the watch has no reading of them (a replay without energy)."""
    figures = [(i, history.energy.figure(i)) for i in scope_gpus(snapshot)]
    figures = [(i, f) for i, f in figures if f is not None]
    if not figures:
        return None
    ids = id_ranges(tuple(i for i, _ in figures))
    line = Text().append("Energy ", style="bold").append(f"GPU{'s' if len(figures) > 1 else ''} {ids}: ")
    known = [(i, f) for i, f in figures if f.joules is not None]
    if not known:
        return line.append("n/a until a second reading", style="dim")
    line.append(f"{human_energy(sum(f.joules for _, f in known))} so far")  # type: ignore[misc]
    means = [f.mean_w for _, f in known if f.mean_w is not None]
    if means:
        line.append(f", {sum(means):.0f} W mean")
    counted = [i for i, f in known if f.source == "energy counter"]
    integrated = [i for i, f in known if f.source == "integrated power"]
    span = elapsed_text(max((f.seconds or 0.0) for _, f in known))
    how = f"energy counters over {span}" if counted else f"integrated power over {span}: no energy counter"
    if counted and integrated:
        how += f"; integrated power on GPU {id_ranges(tuple(integrated))}"
    line.append(f" ({how})", style="dim")
    missing = [i for i, f in figures if f.joules is None]
    if missing:
        line.append(f" · GPU {id_ranges(tuple(missing))} n/a", style="dim")
    if any(f.disagree for _, f in known):
        line.append(" · counter and integrated power differ > 5 %", style="yellow")
    if any(n.startswith("energy counter: reset") for _, f in known for n in f.notes):
        line.append(" · a counter reset: a lower bound", style="yellow")
    return line


def energy_notes(snapshot: Snapshot, history: History) -> str:
    """Each GPU's energy since the watch started, and what its figure rests on (the tooltip)."""
    out = []
    for i in scope_gpus(snapshot):
        figure = history.energy.figure(i)
        if figure is not None:
            mean = f", {figure.mean_w:.0f} W mean" if figure.mean_w is not None else ""
            out.append(f"GPU {i}: {human_energy(figure.joules)}{mean}" + (f" ({figure.source})" if figure.source else ""))
            out += [f"  {clean(note)}" for note in figure.notes]
    return "\n".join(out)


def verdict_lines(found: tuple[Verdict, ...]) -> list[Text]:
    if not found:
        return [Text("No verdicts yet (they judge the last minute).", style="dim")]
    out = []
    for v in found:
        if v.severity == "ok":
            continue
        icon, style = ICONS.get(v.severity, ("·", ""))
        line = Text().append(icon + " ", style=style)
        line.append(clean(v.text), style=style.replace("bold ", ""))
        out.append(line)
    fine = [clean(v.text) for v in found if v.severity == "ok"]
    if fine:  # what is fine shares one line: the problems need the room
        icon, style = ICONS["ok"]
        out.append(Text().append(icon + " ", style=style).append(" · ".join(fine)))
    return out


class JobPanel(Horizontal):
    """Verdicts on the left, allocation versus use on the right (stacked when narrow)."""

    DEFAULT_CSS = """
    JobPanel {
        height: auto;
    }
    JobPanel > Static {
        width: 1fr;
        height: auto;
    }
    JobPanel > #job-use {
        padding-left: 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="job-verdicts", markup=False)
        yield Static(Text("waiting for the first reading…", style="dim"), id="job-use", markup=False)

    def show(self, snapshot: Snapshot, history: History, found: tuple[Verdict, ...]) -> None:
        title = Text().append(clean(snapshot.scope.label or snapshot.scope.kind), style="bold")
        if snapshot.scope.cgroup:
            title.append(f" · {clean(snapshot.scope.cgroup)}", style="dim")
        set_border_title(self, title)
        use = self.query_one("#job-use", Static)
        set_text(use, Text("\n").join(use_lines(snapshot, history)))
        tooltip = energy_notes(snapshot, history) or None
        if tooltip != use.tooltip:
            use.tooltip = tooltip
        # judged here, on the watch's own history: the source's verdicts know no GPM
        activity = activity_verdicts(snapshot, history)
        verdicts = self.query_one("#job-verdicts", Static)
        verdicts.display = snapshot.scope.kind != "node" or bool(activity)
        set_text(verdicts, Text("\n").join(verdict_lines(ranked((*found, *activity)))))

