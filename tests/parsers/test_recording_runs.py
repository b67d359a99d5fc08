"""The recording reader checks a run of batches at once (parsers/recording/read.py: `budget`
over every message before any is decoded, `checked` over a table of a run's batches): a day
of small batches reads as the batches written would, joined; a batch that fails a check in
the middle of a run still keeps every batch before it; a compressed buffer that claims a
negative size is refused before it is decoded; the replay's batch under the cursor comes from
the listing the read made."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

import hostile_recordings as hostile
from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording import schema as recording_schema


def _write(path: Path, batches: list[pa.RecordBatch]) -> Path:
    with pa.ipc.new_stream(str(path), recording_schema.SCHEMA, options=hostile.ZSTD) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return path


def _without_kind(batch: pa.RecordBatch) -> pa.RecordBatch:
    scope = batch.column("scope")
    children = [pa.nulls(len(scope), f.type) if f.name == "kind" else scope.field(f.name) for f in scope.type]
    return batch.set_column(batch.schema.get_field_index("scope"), "scope", pa.StructArray.from_arrays(children, fields=list(scope.type)))


def test_small_batches_read_joined_and_as_written(tmp_path: Path) -> None:
    path = hostile.one_row_batches(tmp_path / "small.gsrec", 40)
    stream = recording.Stream(path)
    batches = list(stream.batches())
    assert stream.samples == 40 and stream.complete and not stream.findings
    assert len(batches) < 40  # a run of them comes back as one batch
    written = pa.ipc.open_stream(str(path)).read_all()
    assert pa.Table.from_batches(batches).equals(written)
    rec = recording.read(path, columns=("timestamp", "gpus"), indexed=True)
    assert rec.batches is not None and rec.batches.rows.sum() == 40 and set(rec.batches.rows.tolist()) <= {0, 1}
    k = int(np.flatnonzero(rec.batches.rows)[7])
    whole, row = rec.batches.batch(k), int(rec.batches.rows[:k].sum())
    assert whole is not None and whole.num_rows == 1 and whole.column("processes").to_pylist() == written.column("processes").to_pylist()[row:row + 1]


def test_a_batch_failing_a_check_inside_a_run_keeps_those_before(tmp_path: Path) -> None:
    samples = hostile._batch(12)
    good = [samples.slice(3 * i, 3) for i in range(4)]
    path = _write(tmp_path / "bad-third.gsrec", [good[0], good[1], _without_kind(good[2]), good[3]])
    rec = recording.read(path)
    assert rec.samples == 6 and [f.kind for f in rec.findings] == ["damaged"]
    assert "it has no kind" in rec.findings[0].message and "the 6 samples before are kept" in rec.findings[0].message
    assert rec.table.column("timestamp").to_pylist() == [t for b in good[:2] for t in b.column("timestamp").to_pylist()]


def test_a_negative_decompressed_length_is_refused_before_decoding(tmp_path: Path) -> None:
    samples = hostile._batch(6)
    path = _write(tmp_path / "negative.gsrec", [samples.slice(0, 3), samples.slice(3, 3)])
    data = bytearray(path.read_bytes())
    messages = hostile._messages(bytes(data))
    start, _meta, meta_end = messages[2]  # the second batch (the first message is the schema)
    message = pa.ipc.read_message(pa.py_buffer(bytes(data[start:])))
    rows, at, count, compressed = recording._layout(message.metadata)
    pairs = np.frombuffer(message.metadata, "<i8", 2 * count, at).reshape(-1, 2)
    offset = int(pairs[np.flatnonzero(pairs[:, 1] >= 8)[0], 0])
    assert compressed and rows == 3
    data[meta_end + offset:meta_end + offset + 8] = (-2).to_bytes(8, "little", signed=True)
    path.write_bytes(bytes(data))
    rec = recording.read(path)
    assert rec.samples == 3 and [f.kind for f in rec.findings] == ["damaged"] and "negative size" in rec.findings[0].message
