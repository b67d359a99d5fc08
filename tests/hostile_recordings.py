"""Provides hostile recordings, written by the tests into their tmp_path (none is committed):
outside text holding terminal escapes, batches that claim more than they hold, crafted and
foreign schemas, and a recording written a sample per batch. Each function writes one file
and returns its path; the big ones stay small on disk (crafted metadata, compression).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow as pa

from energy_readings import with_energy
from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder
from gpuscope.metrics.samples import JobScope
from gpuscope.parsers.recording import schema as recording_schema

OSC_TITLE = "\x1b]0;PWNED-TITLE\x07"
OSC_CLIPBOARD = "\x1b]52;c;UFdORUQtQ0xJUA==\x07"
CLEAR = "\x1b[2J\x1b[H"
HOSTILE = OSC_TITLE + OSC_CLIPBOARD + CLEAR
"""Sets the terminal's title, writes its clipboard and clears the screen, when printed raw."""
ZSTD = pa.ipc.IpcWriteOptions(compression="zstd")


def _snapshots(n: int, **kwargs: object) -> list:
    source = FakeSource(**kwargs)
    return [source.poll() for _ in range(n)]


def _write(path: Path, snapshots: list, batch_samples: int = 60) -> Path:
    with Recorder(path, batch_samples=batch_samples) as rec:
        for snap in snapshots:
            rec.add(snap)
    return path


def escapes(path: Path, n: int = 30) -> Path:
    """Every outside string a recording keeps holds HOSTILE: process command and user, GPU
    name, driver, error, throttle reason, energy and activity notes, host name, the scope's
    label and user, a verdict, the RAPL zones' names and reason."""
    def bad(text: str | None) -> str:
        return f"{text or ''}{HOSTILE}x"

    out = []
    for i, snap in enumerate(with_energy(_snapshots(n, gpus=2, processes=8))):
        host = dataclasses.replace(snap.host, hostname=bad("node"))
        processes = tuple(dataclasses.replace(p, command=bad(p.command), user=bad(p.user)) for p in snap.processes)
        gpus = tuple(dataclasses.replace(g, name=bad(g.name), error=bad("err"), throttle_reasons=(bad("hw_slowdown"),) if i % 2 else (),
                                         energy_note=bad("whole GPU"), activity_note=bad("no GPM")) for g in snap.gpus)
        status = dataclasses.replace(snap.gpu_status, driver_version=bad("550"), reason=bad(""))
        scope = dataclasses.replace(snap.scope, label=bad(snap.scope.label), user=bad(snap.scope.user), evidence=(bad("from"),))
        verdicts = tuple(dataclasses.replace(v, text=bad(v.text)) for v in snap.verdicts)
        rapl = dataclasses.replace(snap.rapl, reason=bad("root only"), zones=tuple(dataclasses.replace(z, name=bad(z.name)) for z in snap.rapl.zones))
        out.append(dataclasses.replace(snap, host=host, processes=processes, gpus=gpus, gpu_status=status, scope=scope, verdicts=verdicts, rapl=rapl))
    return _write(path, out, batch_samples=10)


def one_row_batches(path: Path, n: int) -> Path:
    """`n` samples, one batch each (what `record` writes when every batch times out at once)."""
    return _write(path, _snapshots(n, gpus=2, processes=6), batch_samples=1)


def _messages(data: bytes) -> list[tuple[int, int, int]]:
    """(start, metadata start, metadata end) of each message of an Arrow IPC stream."""
    out, at = [], 0
    while at + 8 <= len(data) and data[at:at + 4] == b"\xff\xff\xff\xff":
        size = int.from_bytes(data[at + 4:at + 8], "little")
        if not size:
            break
        message = pa.ipc.read_message(pa.py_buffer(data[at:]))
        out.append((at, at + 8, at + 8 + size))
        at += 8 + size + message.body.size
    return out


def claims_rows(path: Path, rows: int = 2**31) -> Path:
    """A batch of 1,001 samples whose metadata says `rows` (the batch's length and its
    columns'): a few kilobytes claiming gigabytes (a node view: its scope is two strings)."""
    snap = dataclasses.replace(_snapshots(1, gpus=0, backend="none", processes=0)[0], scope=JobScope(kind="node", label="node"))
    batch = recording_schema.to_batch([snap] * 1001)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, recording_schema.SCHEMA, options=ZSTD) as writer:
        writer.write_batch(batch)
    data = bytearray(sink.getvalue().to_pybytes())
    _start, meta, end = _messages(bytes(data))[1]
    old, new = (1001).to_bytes(8, "little"), rows.to_bytes(8, "little")
    patched = data[meta:end].replace(old, new)
    assert patched != data[meta:end]
    data[meta:end] = patched
    path.write_bytes(bytes(data))
    return path


def huge_string(path: Path, size: int = 2**30) -> Path:
    """One sample whose host name says it is `size` bytes: a real 1,000,003-byte name (NULs,
    ~40 bytes compressed) whose compressed buffer's length prefix is raised to `size`. (A
    genuine gigabyte compresses as small, but writing it takes a gigabyte of memory here;
    the reader refuses both on the same prefix, before decompressing.)"""
    snap = _snapshots(1, gpus=0, backend="none", processes=0)[0]
    batch = recording_schema.to_batch([dataclasses.replace(snap, host=dataclasses.replace(snap.host, hostname="\0" * 1_000_003))])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, recording_schema.SCHEMA, options=ZSTD) as writer:
        writer.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    at = data.index((1_000_003).to_bytes(8, "little") + b"\x28\xb5\x2f\xfd", _messages(data)[1][2])  # the prefix, then zstd's magic
    path.write_bytes(data[:at] + size.to_bytes(8, "little") + data[at + 8:])
    return path


def _as_version(batch: pa.RecordBatch, version: int) -> pa.RecordBatch:
    """A current batch in an older version's columns: the columns it did not have left out,
    and the GPUs' fields it did not have (a crafted column, e.g. a string scope, is kept)."""
    expected = recording_schema.SCHEMAS[version]
    columns = []
    for name in expected.names:
        column = batch.column(name)
        want = expected.field(name).type
        if name == "gpus" and column.type != want:
            values = column.values
            struct = pa.StructArray.from_arrays([values.field(f.name) for f in want.value_type], fields=list(want.value_type))
            column = pa.ListArray.from_arrays(column.offsets, struct, type=want)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=expected.names)


def _with(path: Path, batch: pa.RecordBatch, version: bytes = str(recording_schema.VERSION).encode()) -> Path:
    if version.isdigit() and int(version) in recording_schema.SCHEMAS and int(version) != recording_schema.VERSION:
        batch = _as_version(batch, int(version))
    schema = batch.schema.with_metadata({recording_schema.VERSION_KEY: version})
    with pa.ipc.new_stream(str(path), schema, options=ZSTD) as writer:
        writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
    return path


def _batch(n: int = 5) -> pa.RecordBatch:
    return recording_schema.to_batch(_snapshots(n, gpus=2, processes=4))


def missing_column(path: Path, column: str = "gpus") -> Path:
    batch = _batch()
    return _with(path, batch.drop_columns([column]))


def all_strings(path: Path) -> Path:
    """Every column a string (a CSV converted to Arrow by another tool, say), the current version."""
    batch = _batch()
    return _with(path, pa.RecordBatch.from_pydict({name: [str(v) for v in batch.column(name).to_pylist()] for name in batch.schema.names}))


def scope_text(path: Path, text: str) -> Path:
    """A version 1 recording (its scope JSON text) whose samples' scope is `text` (not JSON,
    JSON nested deep...)."""
    batch = _batch()
    scope = pa.array([text] * batch.num_rows, pa.string())
    return _with(path, batch.set_column(batch.schema.get_field_index("scope"), "scope", scope), b"1")


def scope_json_v1(path: Path, snapshots: list, order=sorted) -> Path:
    """A version 1 recording of `snapshots`, its scope JSON text as version 1 wrote it, the
    keys put in `order` (version 1 wrote JobScope's field order; JSON does not fix one)."""
    def text(scope) -> str:
        data = dataclasses.asdict(scope)
        data["pids"] = sorted(scope.pids)
        return json.dumps({k: data[k] for k in order(data)}, separators=(",", ":"))

    batch = recording_schema.to_batch(snapshots)
    scope = pa.array([text(s.scope) for s in snapshots], pa.string())
    return _with(path, batch.set_column(batch.schema.get_field_index("scope"), "scope", scope), b"1")


def scope_without(path: Path, name: str = "kind") -> Path:
    """A current recording whose samples' scope struct has no `name` (null)."""
    batch = _batch()
    scope = batch.column("scope")
    children = [pa.nulls(len(scope), f.type) if f.name == name else scope.field(f.name) for f in scope.type]
    return _with(path, batch.set_column(batch.schema.get_field_index("scope"), "scope", pa.StructArray.from_arrays(children, fields=list(scope.type))))


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def scope_wrong_types() -> str:
    return json.dumps({"kind": "job", "label": "x", "pids": "1,2", "memory_used": "lots"})


def version(path: Path, text: bytes) -> Path:
    """A well-formed recording whose schema says version `text`."""
    return _with(path, _batch(), text)
