"""Provides the recording schema: `Snapshot`s as Arrow record batches and back, version by version.

A recording (`gpuscope record`, `watch --record`) is an Arrow IPC stream, one row per sample, in
the schema of `gpuscope watch --once --format json` (metrics/samples.py): the host's readings
as columns, `cpu_percent` a list, `gpus` and `processes` lists of structs (each GPU with its
processes and MIG instances nested), `verdicts` a list of structs, and the job scope a struct
(JobScope's fields; its pid set a sorted list; it changes rarely, so compression makes its
repeats nearly free). The version is in the schema's metadata (`gpuscope.recording.version`).

The fields are declared once, below, as (name, Arrow type) per dataclass; a tuple of fields in
place of a type is a list of those structs. Writing reads each row's fields as one tuple (one
`attrgetter`) and lets pyarrow build a whole batch's struct array from those tuples; reading
gives back the same dataclasses. Every later version reads every earlier one: a batch of an
earlier version is brought to the current layout as it is read (`current`, through
`UPGRADES`), so whatever reads a recording sees one layout; `SCHEMAS` keeps each version's
columns, and tests keep a recording of each version.

Version 1 wrote the scope as JSON text; version 2 writes it as a struct; version 3 adds the
job's time limit and error file to that struct; version 4 adds each GPU's clock maxima, energy
counter and GPM activity (with the notes saying why they are n/a), and the node's RAPL counters
(`node_rapl`, a node figure: every process on the node counts, never one job's alone).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import operator
import re
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.energy import RaplSample, RaplZone
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import (AllocatedGpu, GpuProcess, GpuSample, GpuStatus, HostSample, JobScope, MemoryUse, MigSample, ProcessRow,
                                      Snapshot, Verdict)

VERSION = 4
VERSION_KEY = b"gpuscope.recording.version"

GPU_PROCESS = (("pid", pa.int32()), ("gpu_index", pa.int16()), ("used_memory", pa.int64()), ("sm_percent", pa.float64()), ("kind", pa.string()))
MIG = (("gpu_index", pa.int16()), ("mig_index", pa.int16()), ("uuid", pa.string()), ("profile", pa.string()),
       ("memory_used", pa.int64()), ("memory_total", pa.int64()))
GPU = (("index", pa.int16()), ("uuid", pa.string()), ("name", pa.string()), ("bus_id", pa.string()), ("timestamp", pa.float64()),
       ("util_gpu", pa.float64()), ("util_memory", pa.float64()), ("memory_used", pa.int64()), ("memory_total", pa.int64()),
       ("temperature_c", pa.float64()), ("power_w", pa.float64()), ("power_limit_w", pa.float64()), ("sm_clock_mhz", pa.int32()),
       ("memory_clock_mhz", pa.int32()), ("throttle_reasons", pa.list_(pa.string())), ("mig", MIG), ("processes", GPU_PROCESS),
       ("simulated", pa.bool_()), ("error", pa.string()),
       ("sm_clock_max_mhz", pa.int32()), ("memory_clock_max_mhz", pa.int32()), ("energy_mj", pa.int64()), ("energy_note", pa.string()),
       ("sm_active_pct", pa.float64()), ("sm_occupancy_pct", pa.float64()), ("tensor_active_pct", pa.float64()), ("dram_bw_pct", pa.float64()),
       ("pcie_tx_bytes_per_s", pa.float64()), ("pcie_rx_bytes_per_s", pa.float64()), ("nvlink_tx_bytes_per_s", pa.float64()),
       ("nvlink_rx_bytes_per_s", pa.float64()), ("activity_note", pa.string()))
"""GpuSample's fields in its order (a test holds them equal)."""
GPU_V3 = GPU[:-13]
"""Versions 1 to 3's GPUs: no clock maxima, energy or activity."""
PROCESS = (("pid", pa.int32()), ("ppid", pa.int32()), ("user", pa.string()), ("uid", pa.int64()), ("state", pa.string()),
           ("cpu_percent", pa.float64()), ("rss", pa.int64()), ("threads", pa.int32()), ("started", pa.float64()), ("command", pa.string()),
           ("cpu_id", pa.int32()), ("cpu_time", pa.float64()), ("gpu_memory", pa.int64()), ("gpu_sm_percent", pa.float64()),
           ("gpu_indices", pa.list_(pa.int16())))
VERDICT = (("severity", pa.string()), ("text", pa.string()))
ALLOCATED_GPU = (("index", pa.int16()), ("uuid", pa.string()), ("evidence", pa.string()))
SCOPE = (("kind", pa.string()), ("label", pa.string()), ("pids", pa.list_(pa.int32())), ("job_id", pa.string()), ("user", pa.string()),
         ("cpus_allocated", pa.int32()), ("cpu_ids", pa.list_(pa.int32())), ("memory_limit", pa.int64()), ("memory_used", pa.int64()),
         ("memory_peak", pa.int64()), ("gpus", ALLOCATED_GPU), ("cgroup", pa.string()), ("work_dir", pa.string()), ("stdout", pa.string()),
         ("evidence", pa.list_(pa.string())), ("problems", pa.list_(pa.string())), ("time_limit_s", pa.float64()),
         ("stderr", pa.string()))
"""JobScope's fields in its order (a test holds them equal); `pids`, a set, is written sorted."""
SCOPE_V2 = SCOPE[:-2]
"""Version 2's scope: no time limit, no error file."""
HOST = (("timestamp", pa.float64()), ("hostname", pa.string()), ("cpu_count", pa.int32()), ("uptime", pa.float64()))
MEMORY = tuple((f.name, pa.int64()) for f in dataclasses.fields(MemoryUse))
RAPL_ZONE = (("zone", pa.string()), ("name", pa.string()), ("energy_uj", pa.int64()), ("max_energy_range_uj", pa.int64()))
RAPL = (("timestamp", pa.float64()), ("zones", RAPL_ZONE), ("reason", pa.string()))
"""The node's RAPL reading (RaplSample without its `scope`, which is always 'node'): a null
row where it was not read."""
CLASSES = {GPU_PROCESS: GpuProcess, MIG: MigSample, GPU: GpuSample, PROCESS: ProcessRow, VERDICT: Verdict, RAPL_ZONE: RaplZone}


def _fields(kind: tuple) -> list[pa.Field]:
    return [pa.field(n, _arrow_type(k)) for n, k in kind]


def _arrow_type(kind: Any) -> pa.DataType:
    return pa.list_(pa.struct(_fields(kind))) if isinstance(kind, tuple) else kind


def _schema(version: int, scope: pa.DataType, gpu: tuple = GPU, rapl: bool = True) -> pa.Schema:
    return pa.schema(
        [*HOST, ("load_avg", pa.list_(pa.float64())), *((f"memory_{n}", t) for n, t in MEMORY), ("cpu_percent", pa.list_(pa.float64())),
         ("gpu_backend", pa.string()), ("gpu_reason", pa.string()), ("gpu_driver", pa.string()),
         ("gpus", _arrow_type(gpu)), ("processes", _arrow_type(PROCESS)), ("verdicts", _arrow_type(VERDICT)), ("scope", scope),
         *([("node_rapl", RAPL_TYPE)] if rapl else [])],
        metadata={VERSION_KEY: str(version).encode()},
    )


SCOPE_TYPE = pa.struct(_fields(SCOPE))
GPUS_TYPE = _arrow_type(GPU)
RAPL_TYPE = pa.struct(_fields(RAPL))
SCHEMA = _schema(VERSION, SCOPE_TYPE)
SCHEMAS = {1: _schema(1, pa.string(), GPU_V3, rapl=False), 2: _schema(2, pa.struct(_fields(SCOPE_V2)), GPU_V3, rapl=False),
           3: _schema(3, SCOPE_TYPE, GPU_V3, rapl=False), 4: SCHEMA}
"""The columns of each version (a new version adds its own and keeps the old ones)."""


# --- writing ------------------------------------------------------------------------------


def _column(values: Sequence[Any], kind: Any) -> pa.Array:
    """One field's values (for a whole batch) as an Arrow array; a tuple of fields is a list of
    dataclass rows per value, built as a flat struct array plus offsets."""
    if not isinstance(kind, tuple):
        return pa.array(values, type=kind)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(list(map(len, values)), out=offsets[1:])
    rows = list(itertools.chain.from_iterable(values))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), _struct(rows, kind))


def _struct(rows: Sequence[Any], kind: tuple) -> pa.StructArray:
    """Dataclass rows as one struct array. Each row's plain fields are read at once, as a tuple
    that pyarrow converts row by row: a row is read once, while it is in the cache (a field at
    a time read a batch's thousands of process rows again per field, and took 40 % more
    instructions). A list of dataclass rows, and a set (written sorted), are made a field at a
    time."""
    first = rows[0] if rows else None
    apart = [n for n, sub in kind if isinstance(sub, tuple) or isinstance(getattr(first, n, None), (set, frozenset))]
    plain = tuple((n, sub) for n, sub in kind if n not in apart)
    names = [n for n, _ in plain]
    get = operator.attrgetter(*names) if len(names) > 1 else lambda row: tuple(getattr(row, n) for n in names)
    flat = pa.array(list(map(get, rows)), type=pa.struct(_fields(plain)))
    if not apart:
        return flat
    children = []
    for name, sub in kind:
        if name not in apart:
            children.append(flat.field(name))
            continue
        values = list(map(operator.attrgetter(name), rows))
        children.append(_column(values if isinstance(sub, tuple) else [sorted(v) for v in values], sub))
    return pa.StructArray.from_arrays(children, fields=_fields(kind))


_NO_RAPL = RaplSample(0.0)


def _rapl_column(samples: Sequence[RaplSample | None]) -> pa.StructArray:
    """Each sample's RAPL reading; a null row where none was read."""
    if all(s is None for s in samples):
        return pa.nulls(len(samples), RAPL_TYPE)
    read = _struct([_NO_RAPL if s is None else s for s in samples], RAPL)
    if all(s is not None for s in samples):
        return read
    mask = pa.array([s is None for s in samples], pa.bool_())
    return pa.StructArray.from_arrays([read.field(i) for i in range(read.type.num_fields)], fields=list(RAPL_TYPE), mask=mask)


def _scope_column(scopes: Sequence[JobScope]) -> pa.StructArray:
    """Each sample's scope; built once per run of equal ones (the scope rarely changes)."""
    starts = [i for i, s in enumerate(scopes) if not i or s != scopes[i - 1]]
    distinct = scope_structs([scopes[i] for i in starts])
    if len(starts) == len(scopes):
        return distinct
    return distinct.take(pa.array(np.repeat(np.arange(len(starts)), np.diff([*starts, len(scopes)]))))


def to_batch(snapshots: Sequence[Snapshot]) -> pa.RecordBatch:
    """Samples as one record batch in SCHEMA."""
    host = [s.host for s in snapshots]
    arrays = [_column([getattr(h, n) for h in host], t) for n, t in HOST]
    arrays.append(_column([list(h.load_avg) for h in host], pa.list_(pa.float64())))
    arrays += [_column([getattr(h.memory, n) for h in host], t) for n, t in MEMORY]
    arrays.append(_column([list(h.cpu_percent) for h in host], pa.list_(pa.float64())))
    arrays.append(_column([s.gpu_status.backend for s in snapshots], pa.string()))
    arrays.append(_column([s.gpu_status.reason for s in snapshots], pa.string()))
    arrays.append(_column([s.gpu_status.driver_version for s in snapshots], pa.string()))
    arrays.append(_column([s.gpus for s in snapshots], GPU))
    arrays.append(_column([s.processes for s in snapshots], PROCESS))
    arrays.append(_column([s.verdicts for s in snapshots], VERDICT))
    arrays.append(_scope_column([s.scope for s in snapshots]))
    arrays.append(_rapl_column([s.rapl for s in snapshots]))
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


# --- reading ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _defaults(cls: type) -> dict[str, Any]:
    """A dataclass's fields whose default is not None ('' for a note, False, ()): what a null
    in the file stands for (a column an older version did not have reads as its default)."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING and f.default is not None}


def _rows(values: list[dict[str, Any]] | None, kind: tuple) -> tuple:
    """Dataclass rows of one list-of-struct value (None: no rows)."""
    cls = CLASSES[kind]
    defaults = _defaults(cls)
    out = []
    for value in values or ():
        fields = {}
        for name, sub in kind:
            v = value.get(name)
            if isinstance(sub, tuple):
                v = _rows(v, sub)
            elif isinstance(v, list):
                v = tuple(v)
            elif v is None and name in defaults:
                v = defaults[name]
            fields[name] = v
        out.append(cls(**fields))
    return tuple(out)


def rapl_from(value: dict[str, Any] | None) -> RaplSample | None:
    """A row of the `node_rapl` column (or its JSON dict) back as a RaplSample, labelled node;
    None when none was read or it has no time. A zone without its id or name is left out (a
    damaged file). ValueError when a value is not of its type (JSON that gpuscope did not write)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("a sample's RAPL reading is not one gpuscope writes")
    timestamp = value.get("timestamp")
    if timestamp is None:
        return None
    if not (_is(timestamp, float) or _is(timestamp, int)) or not isinstance(value.get("zones") or [], list) \
            or not isinstance(value.get("reason") or "", str):
        raise ValueError("a sample's RAPL reading is not one gpuscope writes")
    zones = []
    for z in value.get("zones") or ():
        if not isinstance(z, dict) or not all(z.get(k) is None or isinstance(z.get(k), str) for k in ("zone", "name")) \
                or not all(z.get(k) is None or _is(z.get(k), int) for k in ("energy_uj", "max_energy_range_uj")):
            raise ValueError("a sample's RAPL zone is not one gpuscope writes")
        if z.get("zone") is not None and z.get("name") is not None:
            zones.append(RaplZone(clean(z["zone"]), clean(z["name"]), z.get("energy_uj"), z.get("max_energy_range_uj")))
    return RaplSample(float(timestamp), tuple(zones), clean(value.get("reason") or ""))


UNKNOWN_SCOPE = {"kind": "node", "label": "unknown (not recorded)"}


def scope_from(value: dict[str, Any] | None) -> JobScope:
    """A row of the scope column (a dict of JobScope's fields) back as a JobScope (a node view
    when it was not recorded), its strings cleaned as the live ones are (collectors/scope.py).
    ValueError, saying why, when it is not a scope gpuscope writes (a crafted file)."""
    try:
        return _scope_from(value if value is not None else UNKNOWN_SCOPE)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a sample's scope is not one gpuscope writes ({clean(exc)})") from None


@functools.lru_cache(maxsize=1024)
def scope_of(text: str | None) -> JobScope:
    """A version 1 row's `scope` JSON text back as a JobScope (a node view when it was not
    recorded), as `scope_from`. ValueError, saying why, when the text is not a scope's JSON.
    Remembered: a scope repeats in every sample (a JobScope is immutable)."""
    if not text:
        return _scope_from(UNKNOWN_SCOPE)
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("a sample's scope is JSON nested too deep to be a scope") from None
    except ValueError as exc:
        raise ValueError(f"a sample's scope is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"a sample's scope is JSON {type(data).__name__}, not an object")
    try:
        return _scope_from(data)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a sample's scope is not one gpuscope writes ({clean(exc)})") from None


_SCOPE_NUMBERS = frozenset({"cpus_allocated", "memory_limit", "memory_used", "memory_peak"})
_SCOPE_FLOATS = frozenset({"time_limit_s"})
_SCOPE_LISTS = {"pids": int, "cpu_ids": int, "evidence": str, "problems": str}


def _is(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _items(value: Any, kind: type, name: str) -> list[Any]:
    """A JSON list whose items are all `kind` (strings cleaned); TypeError otherwise."""
    if not isinstance(value or [], (list, tuple)) or not all(_is(v, kind) for v in value or ()):
        raise TypeError(f"its {name} are not a list of {kind.__name__}")
    return [clean(v) if kind is str else v for v in value or ()]


def _gpu(data: Any) -> AllocatedGpu:
    if not isinstance(data, dict) or not all(v is None or _is(v, int if k == "index" else str) for k, v in data.items()):
        raise TypeError("its gpus are not GPUs")
    uuid = data.get("uuid")
    return AllocatedGpu(data.get("index"), None if uuid is None else clean(uuid), clean(data.get("evidence") or ""))


def _scope_from(data: dict[str, Any]) -> JobScope:
    """A JobScope from its JSON dict, strings cleaned; TypeError when a field is not of its
    type (what reads a scope trusts a number to be a number)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(JobScope):
        value = data.get(f.name)
        if f.name == "gpus":
            out[f.name] = tuple(_gpu(g) for g in _items(value, dict, f.name))
        elif f.name in _SCOPE_LISTS:
            items = _items(value, _SCOPE_LISTS[f.name], f.name)
            out[f.name] = frozenset(items) if f.name == "pids" else tuple(items)
        elif value is None and f.name in ("kind", "label"):
            raise TypeError(f"it has no {f.name}")
        elif value is not None:
            kind = int if f.name in _SCOPE_NUMBERS else ((int, float) if f.name in _SCOPE_FLOATS else str)
            if not _is(value, kind):
                raise TypeError(f"its {f.name} is {type(value).__name__}")
            out[f.name] = clean(value) if isinstance(value, str) else value
    return JobScope(**out)


def _snapshot(row: dict[str, Any]) -> Snapshot:
    """A row of the current layout back as a Snapshot; a column not read (`read(columns=...)`)
    is n/a, as a null in it would be."""
    memory = MemoryUse(**{n: row.get(f"memory_{n}") for n, _t in MEMORY})
    host = HostSample(timestamp=row["timestamp"], hostname=row.get("hostname"), cpu_percent=tuple(row.get("cpu_percent") or ()),
                      load_avg=tuple(row.get("load_avg") or (None, None, None)), memory=memory, cpu_count=row.get("cpu_count"), uptime=row.get("uptime"))
    status = GpuStatus(backend=row.get("gpu_backend") or "none", reason=row.get("gpu_reason") or "", driver_version=row.get("gpu_driver"))
    return Snapshot(host=host, processes=_rows(row.get("processes"), PROCESS), gpus=_rows(row.get("gpus"), GPU), gpu_status=status,
                    scope=scope_from(row.get("scope")), verdicts=_rows(row.get("verdicts"), VERDICT), rapl=rapl_from(row.get("node_rapl")))


def from_json_dict(data: dict[str, Any]) -> Snapshot:
    """A Snapshot from `gpuscope watch --once --format json`'s dict (`snapshot_dict`), as
    `gpuscope collect --stream` prints one per line. ValueError when the dict is not one."""
    try:
        h = data["host"]
        host = HostSample(timestamp=float(h["timestamp"]), hostname=str(h["hostname"]), cpu_percent=tuple(h.get("cpu_percent") or ()),
                          load_avg=tuple(h.get("load_avg") or (None, None, None)), memory=MemoryUse(**{n: h["memory"][n] for n, _t in MEMORY}),
                          cpu_count=int(h["cpu_count"]), uptime=h.get("uptime"))
        st = data.get("gpu_status") or {}
        status = GpuStatus(backend=str(st.get("backend") or "none"), reason=str(st.get("reason") or ""), driver_version=st.get("driver_version"))
        return Snapshot(host=host, processes=_rows(data.get("processes"), PROCESS), gpus=_rows(data.get("gpus"), GPU), gpu_status=status,
                        scope=_scope_from(data.get("scope") or {"kind": "node", "label": "unknown"}), verdicts=_rows(data.get("verdicts"), VERDICT),
                        rapl=rapl_from(data.get("rapl")))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a gpuscope snapshot: {exc!r}") from None


def scope_structs(scopes: Sequence[JobScope]) -> pa.StructArray:
    """JobScopes as rows of the scope column."""
    return _struct(scopes, SCOPE)


Columns = pa.RecordBatch | pa.Table
"""A batch, or a run of a stream's batches as a table (its columns chunked, a chunk a batch)."""


def _each_chunk(column: pa.Array | pa.ChunkedArray, upgrade: Any, kind: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """`upgrade` (an array of the older layout -> one of `kind`) over a batch's column, or over
    each chunk of a table's."""
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([upgrade(chunk) for chunk in column.chunks], kind)
    return upgrade(column)


def _scope_structs_of_json(texts: pa.Array) -> pa.StructArray:
    encoded = pc.dictionary_encode(texts)
    scopes = [scope_of(text) for text in encoded.dictionary.to_pylist()]
    try:
        return scope_structs(scopes).take(encoded.indices)
    except (pa.ArrowException, OverflowError) as exc:  # a number past its column's type
        raise ValueError(f"a sample's scope is not one gpuscope writes ({clean(exc)})") from None


def _scope_from_json(data: Columns) -> Columns:
    """Version 1 -> 2: the scope's JSON text parsed (once per distinct text) into the struct."""
    at = data.schema.get_field_index("scope")
    if at < 0:  # not read
        return data
    return data.set_column(at, pa.field("scope", SCOPE_TYPE), _each_chunk(data.column(at), _scope_structs_of_json, SCOPE_TYPE))


def _with_time_limit(scope: pa.StructArray) -> pa.StructArray:
    have = {scope.type.field(i).name: scope.field(i) for i in range(scope.type.num_fields)}
    children = [have.get(f.name, pa.nulls(len(scope), f.type)) for f in SCOPE_TYPE]
    return pa.StructArray.from_arrays(children, fields=list(SCOPE_TYPE), mask=scope.is_null() if scope.null_count else None)


def _scope_new_fields(data: Columns) -> Columns:
    """Version 2 -> 3: the scope gains the job's time limit and error file, n/a (null) in a
    version 2 file. A version 1 batch's scope is already whole (rebuilt from its JSON by
    `scope_structs`)."""
    at = data.schema.get_field_index("scope")
    if at < 0 or data.schema.field(at).type == SCOPE_TYPE:
        return data
    return data.set_column(at, pa.field("scope", SCOPE_TYPE), _each_chunk(data.column(at), _with_time_limit, SCOPE_TYPE))


def _with_energy(lists: pa.ListArray) -> pa.ListArray:
    gpus = lists.values
    have = {gpus.type.field(i).name: gpus.field(i) for i in range(gpus.type.num_fields)}
    struct_type = GPUS_TYPE.value_type
    children = [have.get(f.name, pa.nulls(len(gpus), f.type)) for f in struct_type]
    values = pa.StructArray.from_arrays(children, fields=list(struct_type), mask=gpus.is_null() if gpus.null_count else None)
    return pa.ListArray.from_arrays(lists.offsets, values, type=GPUS_TYPE, mask=lists.is_null() if lists.null_count else None)


def _energy_columns(data: Columns) -> Columns:
    """Version 3 -> 4: each GPU gains its clock maxima, energy counter and GPM activity, n/a
    (null) in an older file, and the node its RAPL column, null (not read)."""
    at = data.schema.get_field_index("gpus")
    if at >= 0 and data.schema.field(at).type != GPUS_TYPE:
        data = data.set_column(at, pa.field("gpus", GPUS_TYPE), _each_chunk(data.column(at), _with_energy, GPUS_TYPE))
    if "node_rapl" not in data.schema.names:
        data = data.append_column(pa.field("node_rapl", RAPL_TYPE), pa.nulls(data.num_rows, RAPL_TYPE))
    return data


UPGRADES = {1: _scope_from_json, 2: _scope_new_fields, 3: _energy_columns}
"""Per version, what brings its batch to the next version's layout (a new version adds one)."""


def current(data: Columns, version: int) -> Columns:
    """Checked batches of a recording of `version` (one batch, or a run of them as a table) in
    the current layout (the columns read, `processes` perhaps left out). ValueError, saying
    why, when a sample's scope is not one gpuscope writes (JSON that does not parse, a scope
    with no kind...)."""
    for step in range(version, VERSION):
        data = UPGRADES[step](data)
    if "scope" in data.schema.names:
        scope = data.column("scope")
        chunks = scope.chunks if isinstance(scope, pa.ChunkedArray) else [scope]
        for name in ("kind", "label"):  # what every reader of a scope trusts to be there
            if any(chunk.field(name).null_count for chunk in chunks) and pc.struct_field(scope, name).null_count > scope.null_count:  # the latter's nulls include its struct's
                raise ValueError(f"a sample's scope is not one gpuscope writes (it has no {name})")
    return data if version == VERSION else data.replace_schema_metadata(SCHEMA.metadata)


def current_schema(schema: pa.Schema, version: int) -> pa.Schema:
    """The schema `current` gives the batches of a stream in `schema`."""
    return current(schema.empty_table(), version).schema


def version_of(schema: pa.Schema) -> int | None:
    """The recording version a schema declares, or None when it declares none or not a whole
    number (then `schema_problem` says which)."""
    raw = (schema.metadata or {}).get(VERSION_KEY)
    return int(raw) if raw is not None and re.fullmatch(rb"-?[0-9]{1,9}", raw) else None


def schema_problem(schema: pa.Schema) -> tuple[str, str] | None:
    """(finding kind, message) when a stream's schema cannot be read as a recording: no
    version (not a recording), a version that is no version, a newer one, or columns that
    are not that version's. None when it can be read."""
    raw = (schema.metadata or {}).get(VERSION_KEY)
    if raw is None:
        return "not-recording", "an Arrow stream, but not a gpuscope recording (no version in its schema)"
    version = version_of(schema)
    if version is None or version < 1:
        shown = clean(raw[:40].decode("utf-8", "replace"))
        return "version", f"recording version {shown!r} is not one gpuscope writes (a whole number from 1): a damaged or foreign file"
    if version > VERSION:
        return "newer-version", f"written by a newer gpuscope (recording version {version}; this one reads versions 1 to {VERSION}): update gpuscope"
    expected = SCHEMAS[version]
    missing = [n for n in expected.names if n not in schema.names]
    other = [f"{n} is {schema.field(n).type}, not {expected.field(n).type}" for n in expected.names
             if n in schema.names and schema.field(n).type != expected.field(n).type]
    extra = [n for n in schema.names if n not in expected.names]
    if missing or other or extra or len(set(schema.names)) != len(schema.names):
        said = [*([f"no column {', '.join(missing)}"] if missing else []), *other, *([f"unknown column {', '.join(extra)}"] if extra else [])]
        more = f" and {len(said) - 3} more" if len(said) > 3 else ""
        return "damaged", (f"not the columns of a version {version} recording ({clean('; '.join(said[:3]))[:300]}{more}): "
                           "a damaged or foreign file" if said else "a column appears twice: a damaged or foreign file")
    return None


def snapshot_at(table: pa.Table, i: int) -> Snapshot:
    """Sample `i` of a recording's table (in the current layout: `current`) as a Snapshot."""
    return _snapshot(table.slice(i, 1).to_pylist()[0])
