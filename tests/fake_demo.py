"""Provides `DemoSource`: `FakeSource`'s host, processes and scope with a `--demo` scenario's
GPUs, for the watch's energy and GPM tests and snapshots.

The scenario's clock is the poll's timestamp (one second a poll), so its energy counters grow
by its simulated power over time exactly as NVML's do, and every run sees the same numbers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fake_watch import T0, FakeSource
from gpuscope.collectors.simulated import SimulatedBackend
from gpuscope.metrics.samples import Snapshot


class DemoSource(FakeSource):
    def __init__(self, scenario: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.simulated = SimulatedBackend(scenario, clock=lambda: T0 + self.polls - 1)

    def poll(self) -> Snapshot:
        snapshot = super().poll()
        return dataclasses.replace(snapshot, gpus=self.simulated.sample(), gpu_status=self.simulated.status())
