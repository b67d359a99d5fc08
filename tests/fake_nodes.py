"""Provides `FakeNodes`: a multi-node job's source in memory, for the all-nodes watch's tests.

Each poll, every node still streaming gives its next `FakeSource` snapshot under its own host
name, as `collectors.fanout.NodesSource` would; a node put in `gone` has ended (with that
reason) and keeps its last reading; when all have, the reading says the streams ended.
"""

from __future__ import annotations

import dataclasses

from fake_watch import FakeSource
from gpuscope.collectors.fanout import NodesReading, NodeState
from gpuscope.metrics.samples import Snapshot


def on_node(snapshot: Snapshot, name: str, uptime: float | None = 1000.0) -> Snapshot:
    return dataclasses.replace(snapshot, host=dataclasses.replace(snapshot.host, hostname=name, uptime=uptime))


class FakeNodes:
    """A multi-node source in memory: each poll, every live node gives its next snapshot."""

    def __init__(self, names: tuple[str, ...] = ("cn01", "cn02", "cn03"), gpus: int = 2) -> None:
        self.sources = {n: FakeSource(gpus=gpus, processes=12) for n in names}
        self.gone: dict[str, str] = {}
        self.latest: dict[str, Snapshot] = {}
        self.closed = False

    def poll(self) -> NodesReading:
        fresh = []
        for name, source in self.sources.items():
            if name not in self.gone:
                self.latest[name] = snap = on_node(source.poll(), name)
                fresh.append(snap)
        states = tuple(NodeState(n, 0.0, self.sources[n].polls, f"ended: {self.gone[n]}" if n in self.gone else "ok") for n in sorted(self.latest))
        every = len(self.gone) == len(self.sources)
        return NodesReading(dict(sorted(self.latest.items())), tuple(fresh), states, every, "srun exited with status 1" if every else None)

    def close(self) -> None:
        self.closed = True
