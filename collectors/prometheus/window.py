"""Provides what a Prometheus import reads (`Window`) and what one section of it found
(`_Section`): shared by the asking (collectors/prometheus/to_recording.py) and the table
(collectors/prometheus/table.py), which load apart (the table's numpy and pyarrow while
Prometheus answers the asking).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.collectors.prometheus.maps import MetricMap
from gpuscope.collectors.prometheus.query import Series


@dataclass(frozen=True)
class Window:
    """What to read: the job (None: the nodes alone), its nodes (empty: every node found), its span."""

    job: str | None
    nodes: tuple[str, ...]
    start: float
    end: float


@dataclass
class _Section:
    """A section's map, its series per field, and whether they were asked by the job's label."""

    map: MetricMap
    series: dict[str, list[Series]]
    by_job: bool
