"""Provides `JobPanel`: what the scope was given against what it uses (cores, memory, GPUs),
with peaks, the verdicts in plain words, and the evidence for each allocation.

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

from gpuscope.metrics.history import History
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import scope_memory_used
from gpuscope.metrics.units import human_bytes
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
        set_text(self.query_one("#job-use", Static), Text("\n").join(use_lines(snapshot, history)))
        verdicts = self.query_one("#job-verdicts", Static)
        verdicts.display = snapshot.scope.kind != "node"
        set_text(verdicts, Text("\n").join(verdict_lines(found)))

