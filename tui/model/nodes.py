"""Provides `NodesView`: the watch's state for a job on several nodes, without Textual.

Every poll of `collectors.fanout.NodesSource` gives each node's latest snapshot; this keeps a
`History` per node and one for the all-nodes aggregate (`metrics.node_aggregate`), remembers
which entry the switcher shows (`ALL` or a node), and says what each entry's state is. A node
whose stream ended keeps its last reading in its own entry and leaves the aggregate; when all
have ended, `summary()` says so and the last readings stay on screen.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rich.text import Text

from gpuscope.collectors.fanout import NodesReading, NodeState
from gpuscope.metrics.history import History
from gpuscope.metrics.job.nodes import aggregate
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot, Verdict
from gpuscope.tui.render.bars import fixed
from gpuscope.tui.model.watch import record, window_verdicts

ALL = ""
"""The switcher entry of the aggregate (a node name is never empty)."""
STATUS_WIDTH = 32
"""A node's state in the switcher is cut to this many cells, so one long reason leaves room for the others."""


@dataclass(frozen=True)
class Shown:
    """What the screen draws for the selected entry."""

    snapshot: Snapshot | None
    history: History
    verdicts: tuple[Verdict, ...]
    gpu_labels: dict[int, str] | None
    """`node:index` per GPU index in the aggregate; None for one node (its own indices)."""


class NodesView:
    def __init__(self) -> None:
        self.selected = ALL
        self.snapshots: dict[str, Snapshot] = {}
        """Node -> its latest snapshot, with verdicts (its collector's, else judged on its history)."""
        self.histories: dict[str, History] = {ALL: History()}
        self.states: dict[str, NodeState] = {}
        self.position: dict[str, int] = {}
        """Node -> its place, in the order first seen (sorted within a poll): fixes GPU indices."""
        self.total: Snapshot | None = None
        self.gpu_labels: dict[int, str] = {}
        self.ended = False
        self.error: str | None = None
        self._live: tuple[str, ...] = ()

    def take(self, reading: NodesReading) -> bool:
        """Take a poll in; True when there is something to redraw (a reading or a state)."""
        self.states = {s.node: s for s in reading.states}
        self.ended, self.error = reading.ended, reading.error
        changed = False
        for node, snap in reading.latest.items():
            old = self.snapshots.get(node)
            if old is not None and old.host.timestamp == snap.host.timestamp and old.host == snap.host:
                continue
            self.position.setdefault(node, len(self.position))
            history = self.histories.setdefault(node, History())
            record(history, snap)
            self.snapshots[node] = dataclasses.replace(snap, verdicts=snap.verdicts or window_verdicts(snap, history))
            changed = True
        live = {n: s for n, s in sorted(self.snapshots.items()) if not self.is_ended(n)}
        if live and (changed or tuple(live) != self._live):  # a node that ends leaves the sums at once
            total = aggregate(live, self.position)
            self.total, self.gpu_labels = total.snapshot, total.gpu_labels
            if changed:  # a sample only for new readings: one per time in the history
                record(self.histories[ALL], self.total)
        self._live = tuple(live)
        return changed or bool(reading.states)

    def is_ended(self, node: str) -> bool:
        state = self.states.get(node)
        return self.ended or (state is not None and state.ended)

    @property
    def nodes(self) -> list[str]:
        return sorted(self.snapshots.keys() | self.states.keys())

    def entries(self) -> list[str]:
        """What the switcher lists, in order: the aggregate, then each node."""
        return [ALL, *self.nodes]

    def cycle(self, step: int) -> str:
        """`n` / `N`: the next or previous entry (round); returns the one selected."""
        entries = self.entries()
        at = entries.index(self.selected) if self.selected in entries else 0
        self.selected = entries[(at + step) % len(entries)]
        return self.selected

    def shown(self) -> Shown:
        if self.selected == ALL:
            return Shown(self.total, self.histories[ALL], self.total.verdicts if self.total else (), self.gpu_labels)
        snap = self.snapshots.get(self.selected)
        return Shown(snap, self.histories.get(self.selected) or History(1), snap.verdicts if snap else (), None)

    def title(self) -> str:
        """Which entry the screen shows, for the title."""
        return self.all_label() if self.selected == ALL else f"node {clean(self.selected)}"

    def all_label(self) -> str:
        """The aggregate's entry: `all 3 nodes`, `all 3 nodes (2 live)` once one has ended."""
        live = sum(not self.is_ended(n) for n in self.nodes)
        return f"all {len(self.nodes)} nodes" + (f" ({live} live)" if live < len(self.nodes) else "")

    def status(self, node: str) -> str:
        state = self.states.get(node)
        return state.status if state is not None else "ok"

    def summary(self) -> str | None:
        """A line when every node's stream has ended (the readings shown are the last ones)."""
        nodes = self.nodes
        if not (self.ended or (nodes and all(self.is_ended(n) for n in nodes))):
            return None
        if not nodes:
            return f"no node answered: {self.error or 'the streams ended'}"
        return "every node's stream has ended" + (f" ({self.error})" if self.error else "") + ": the last readings are shown"


def switcher_text(view: NodesView, width: int) -> Text:
    """One line: `Nodes n/N ▸ all 3 ◂ cn01 cn02 cn03 ended: Killed`, the shown entry in reverse;
    entries before it are left out (`…`) when the line would not fit, so it stays visible."""
    head = Text("Nodes (n/N) ", style="bold")
    if (summary := view.summary()) is not None:
        head.append(clean(summary) + " · ", style="bold red")
    parts: list[Text] = []
    for entry in view.entries():
        status = view.status(entry) if entry != ALL else "ok"
        label = Text(f" {view.all_label() if entry == ALL else clean(entry)} ")
        if entry == view.selected:
            label.stylize("bold reverse")
        if status != "ok":  # cut unless shown: one long reason must not push the other nodes off the line
            shown = clean(status)
            label.append((shown if entry == view.selected else fixed(shown, min(len(shown), STATUS_WIDTH))) + " ", style="red" if status.startswith("ended") else "yellow")
        parts.append(label)
    selected = view.entries().index(view.selected) if view.selected in view.entries() else 0
    first = 0
    while first < selected and len(head) + 1 + sum(len(p) + 1 for p in parts[first:selected + 1]) > width:
        first += 1
    line = head.copy()
    if first:
        line.append("… ", style="dim")
    line.append_text(Text(" ").join(parts[first:]))
    line.truncate(width, overflow="ellipsis")
    return line
