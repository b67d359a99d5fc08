"""The process rows' columns of a recording: read field by field in PROCESS's order (written
out by name in schema.py), so each value lands in its own column and comes back as it went."""

from __future__ import annotations

import dataclasses
import operator

import pyarrow as pa

from fake_watch import FakeSource
from gpuscope.metrics.samples import ProcessRow
from gpuscope.parsers.recording import schema as recording_schema

NAMES = [name for name, _kind in recording_schema.PROCESS]


def distinct_rows() -> list[ProcessRow]:
    """Rows whose fields all differ from one another, so a value read from the wrong field shows."""
    return [ProcessRow(pid=10 + i, ppid=20 + i, user=f"user{i}", uid=30 + i, state="SR"[i], cpu_percent=40.5 + i, rss=50 + i, threads=60 + i,
                       started=70.25 + i, command=f"cmd {i}", cpu_id=None if i else 80, cpu_time=90.75 + i, gpu_memory=None if i else 100,
                       gpu_sm_percent=None if i else 110.5, gpu_indices=(i, 7)) for i in range(2)]


def test_process_columns_are_process_rows_fields_in_order() -> None:
    assert NAMES == [f.name for f in dataclasses.fields(ProcessRow)]
    rows = distinct_rows()
    assert recording_schema._process_values(rows) == [list(map(operator.attrgetter(name), rows)) for name in NAMES]


def test_each_process_field_comes_back_from_its_own_column() -> None:
    snapshot = FakeSource(gpus=1, processes=3).poll()
    snapshot = dataclasses.replace(snapshot, processes=tuple(distinct_rows()))
    batch = recording_schema.to_batch([snapshot, snapshot])
    rows = batch.column("processes").to_pylist()[1]
    assert [[row[name] for name in NAMES] for row in rows] == [[list(v) if isinstance(v, tuple) else v for v in dataclasses.astuple(r)]
                                                                for r in distinct_rows()]
    assert recording_schema.snapshot_at(pa.Table.from_batches([batch]), 1).processes == tuple(distinct_rows())
