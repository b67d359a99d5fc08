"""Provides the table of a job read back from Prometheus (collectors/prometheus/to_recording.py):
its series put on the step's grid per node, as a recording's Arrow table (parsers/recording/
schema.py's current layout), the very one `replay` and `report` read from a file.

Kept apart from to_recording's asking, which needs neither numpy nor pyarrow, so that they
load while Prometheus answers the first queries.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from gpuscope.collectors.prometheus.maps import node_of
from gpuscope.collectors.prometheus.window import Window, _Section
from gpuscope.metrics.samples import AllocatedGpu, JobScope
from gpuscope.parsers.recording import schema as recording_schema

if TYPE_CHECKING:
    from gpuscope.collectors.prometheus.maps import MetricMap
    from gpuscope.collectors.prometheus.query import Series

INT_TYPES = (pa.int16(), pa.int32(), pa.int64())


class _Node:
    """One node's readings on the step grid (P points): arrays of NaN where nothing was said."""

    def __init__(self, points: int) -> None:
        self.points = points
        self.gpu: dict[int, dict[str, np.ndarray]] = {}
        self.gpu_labels: dict[int, tuple[str, str]] = {}
        self.host: dict[str, np.ndarray] = {}
        self.cores: dict[int, np.ndarray] = {}
        self.job: dict[str, np.ndarray] = {}

    def row(self, table: dict, key: object) -> np.ndarray:
        if key not in table:
            table[key] = np.full(self.points, np.nan)
        return table[key]

    def present(self) -> np.ndarray:
        arrays = [a for d in (self.host, self.cores, self.job) for a in d.values()] + [a for g in self.gpu.values() for a in g.values()]
        mask = np.zeros(self.points, bool)
        for a in arrays:
            mask |= ~np.isnan(a)
        return mask


def _put(into: np.ndarray, at: np.ndarray, values: np.ndarray, add: bool) -> None:
    """Values at grid points: summed with what is there (`add`: a job's series per step or
    cgroup), else filling the points still empty (the same GPU under two label sets)."""
    ok = ~np.isnan(values)
    at, values = at[ok], values[ok]
    here = into[at]
    into[at] = np.where(np.isnan(here), values, here + values if add else here)


class Grid:
    """The window's readings on the step's grid, node by node: `put` each family's series (in the
    sections' and families' order: a point already filled keeps its first value), as they come
    (import_job puts one while Prometheus answers the next), then `table`."""

    def __init__(self, window: Window, step: float) -> None:
        self.window, self.step = window, step
        self.points = int(math.floor((window.end - window.start) / step + 1e-9)) + 1
        self.nodes: dict[str, _Node] = {n: _Node(self.points) for n in window.nodes}

    def put(self, name: str, m: MetricMap, field_name: str, found: list[Series]) -> None:
        """Section `name`'s family `field_name`, as `m` labels its series."""
        window, points = self.window, self.points
        for s in found:
            node = node_of(s.labels.get(m.node_label, ""), window.nodes) if window.nodes else _bare(s.labels.get(m.node_label, ""))
            if node is None:
                continue
            at = np.rint((s.times - window.start) / self.step).astype(np.int64)
            keep = (at >= 0) & (at < points)
            at, values = at[keep], s.values[keep]
            n = self.nodes.setdefault(node, _Node(points))
            if name == "gpu":
                index = _int(s.labels.get(m.gpu_label))
                if index is None:
                    continue
                _put(n.row(n.gpu.setdefault(index, {}), field_name), at, values, add=False)
                if index not in n.gpu_labels or not n.gpu_labels[index][0]:
                    n.gpu_labels[index] = (s.labels.get(m.uuid_label or "", ""), s.labels.get(m.model_label or "", ""))
            elif name == "node" and field_name == "cpu_percent":
                core = _int(s.labels.get(m.cpu_label))
                if core is not None:
                    _put(n.row(n.cores, core), at, values, add=False)
            else:
                _put(n.row(n.host if name == "node" else n.job, field_name), at, values, add=name == "job")

    def table(self, sections: dict[str, _Section]) -> pa.Table | None:
        """The readings put as a recording's table: one row per node and grid point with any
        reading; None when there is none. `sections`: the maps that gave them."""
        window, nodes = self.window, self.nodes
        grid = window.start + self.step * np.arange(self.points)
        keeps = {name: np.flatnonzero(node.present()) for name, node in nodes.items()}
        same = _Same(max((len(keeps[name]) * max(1, len(node.gpu)) for name, node in nodes.items()), default=0))
        parts = [_node_batch(name, node, keeps[name], grid, window, sections, same) for name, node in nodes.items()]
        parts = [p for p in parts if p is not None]
        if not parts:
            return None
        return pa.Table.from_batches(parts, schema=recording_schema.SCHEMA)


def _bare(value: str) -> str | None:
    host, sep, port = value.rpartition(":")
    return (host if sep and port.isdigit() else value) or None


def _int(text: str | None) -> int | None:
    try:
        number = int(text) if text is not None else None
    except ValueError:
        return None
    return number if number is not None and 0 <= number < 1 << 15 else None


def _array(values: np.ndarray, kind: pa.DataType) -> pa.Array:
    """Floats as an Arrow array of `kind`, null where NaN (whole numbers rounded)."""
    if kind in INT_TYPES:
        mask = ~(np.abs(values) <= float(np.iinfo(kind.to_pandas_dtype()).max))  # NaN, or past the type
        return pa.array(np.rint(np.where(mask, 0, values)).astype(kind.to_pandas_dtype()), kind, mask=mask)
    return pa.array(values, kind, mask=np.isnan(values))


class _Same:
    """`value` (None: null) in each of n rows, without a Python object per row; made once at the
    longest length any node needs, and sliced: a slice shares its memory (a day of 16 nodes x
    8 GPUs repeated ~200 MB of the same notes, nulls, empty lists and scope texts, node after
    node)."""

    def __init__(self, longest: int) -> None:
        self.longest = longest
        self._made: dict[tuple[object, pa.DataType], pa.Array] = {}

    def __call__(self, value: object, rows: int, kind: pa.DataType) -> pa.Array:
        key = (repr(value), kind)  # a text, number, None or a list of them
        if key not in self._made:
            if isinstance(value, list):  # a one-row array taken: pa.repeat of a list took 60-360 ms for 46,000 rows
                self._made[key] = pa.array([value], kind).take(pa.array(np.zeros(self.longest, np.int64)))
            else:
                self._made[key] = pa.repeat(pa.scalar(value, kind), self.longest)
        return self._made[key].slice(0, rows)


def _lists(counts: np.ndarray, values: pa.Array, kind: pa.DataType) -> pa.ListArray:
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=kind)


def table(window: Window, sections: dict[str, _Section], step: float) -> pa.Table | None:
    """The readings of `sections` as a recording's table (a Grid, each family put in turn)."""
    grid = Grid(window, step)
    for name, section in sections.items():
        for field_name, found in section.series.items():
            grid.put(name, section.map, field_name, found)
    return grid.table(sections)


def _node_batch(name: str, node: _Node, keep: np.ndarray, grid: np.ndarray, window: Window, sections: dict[str, _Section],
                same: _Same) -> pa.RecordBatch | None:
    rows = len(keep)
    if not rows:
        return None
    host = {k: v[keep] for k, v in node.host.items()}
    nan = np.full(rows, np.nan)
    schema = recording_schema.SCHEMA
    columns: dict[str, pa.Array] = {"timestamp": pa.array(grid[keep]), "hostname": pa.repeat(pa.scalar(name, pa.string()), rows)}
    cores = np.stack([node.cores[c][keep] for c in sorted(node.cores)], axis=1) if node.cores else None  # a row's cores together
    count = host.get("cpu_count", np.full(rows, float(len(node.cores)) if node.cores else np.nan))
    columns["cpu_count"] = _array(count, pa.int32())
    columns["uptime"] = same(None, rows, pa.float64())
    loads = np.stack([host.get(k, nan) for k in ("load1", "load5", "load15")], axis=1).ravel()
    # NaN, not null, where unknown: the panes format a load as a number (a null crashed the CPU pane)
    columns["load_avg"] = _lists(np.full(rows, 3), pa.array(loads, pa.float64()), schema.field("load_avg").type)
    for f, _type in recording_schema.MEMORY:
        columns[f"memory_{f}"] = _array(np.nan_to_num(host.get(f"memory_{f}", nan), nan=0.0), pa.int64())  # 0: unknown, as the readers take it
    if cores is not None:  # per core, as recorded live; without per-core series none (the panes say so), never a made-up core
        columns["cpu_percent"] = _lists(np.full(rows, cores.shape[1]), _array(cores.ravel(), pa.float64()), schema.field("cpu_percent").type)
    else:
        columns["cpu_percent"] = same([], rows, schema.field("cpu_percent").type)
    simulated = bool(np.nanmax(host["simulated"], initial=0) > 0.5) if "simulated" in host else False
    gpu_map = sections["gpu"].map.name if "gpu" in sections else None
    backend = "none" if not node.gpu else ("simulated" if simulated else f"prometheus ({gpu_map})")
    columns["gpu_backend"] = same(backend, rows, pa.string())
    columns["gpu_reason"] = same("" if node.gpu else "no GPU series for this node in Prometheus", rows, pa.string())
    columns["gpu_driver"] = same(None, rows, pa.string())
    columns["gpus"] = _gpus(node, keep, grid, simulated, gpu_map, schema.field("gpus").type, same)
    job = {k: v[keep] for k, v in node.job.items()}
    columns["processes"] = _summary_process(job, rows, window, sections, schema.field("processes").type, same)
    columns["verdicts"] = same([], rows, schema.field("verdicts").type)
    columns["scope"] = _scope(name, node, job, rows, window, sections, same)
    columns["node_rapl"] = same(None, rows, schema.field("node_rapl").type)
    return pa.RecordBatch.from_arrays([columns[n] for n in schema.names], schema=schema)


def _gpus(node: _Node, keep: np.ndarray, grid: np.ndarray, simulated: bool, map_name: str | None, kind: pa.DataType, same: _Same) -> pa.ListArray:
    rows, indices = len(keep), sorted(node.gpu)
    g = len(indices)
    struct = kind.value_type
    flat = rows * g

    def per_gpu(field_name: str) -> np.ndarray:  # row-major: each row's GPUs in turn
        return np.stack([node.gpu[i].get(field_name, np.full(node.points, np.nan))[keep] for i in indices], axis=1).ravel() if g else np.zeros(0)

    known = {f for i in indices for f in node.gpu[i]}
    children = []
    for f in struct:
        if f.name == "index":
            children.append(pa.array(np.tile(np.asarray(indices, np.int16), rows), f.type))
        elif f.name in ("uuid", "name"):
            labels = [node.gpu_labels.get(i, ("", ""))[0 if f.name == "uuid" else 1] for i in indices]
            one = len(set(labels)) == 1  # a model's name: the same on every GPU (and node), shared
            children.append(same(labels[0], flat, f.type) if one else pa.array(labels, f.type).take(np.tile(np.arange(g), rows)))
        elif f.name == "bus_id":
            children.append(same("", flat, f.type))
        elif f.name == "timestamp":
            children.append(pa.array(np.repeat(grid[keep], g), f.type))
        elif f.name == "simulated":
            children.append(same(simulated, flat, f.type))
        elif f.name == "energy_note":
            note = "" if "energy_mj" in known else f"no energy counter series in Prometheus ({map_name})"
            children.append(same(note, flat, f.type))
        elif f.name == "activity_note":
            note = "" if known & {"sm_active_pct", "tensor_active_pct", "dram_bw_pct"} else f"no SM activity series in Prometheus ({map_name})"
            children.append(same(note, flat, f.type))
        elif pa.types.is_list(f.type):
            children.append(same([], flat, f.type))
        elif f.name in known:
            children.append(_array(per_gpu(f.name), f.type))
        else:
            children.append(same(None, flat, f.type))
    values = pa.StructArray.from_arrays(children, fields=list(struct))
    return _lists(np.full(rows, g), values, kind)


def _summary_process(job: dict[str, np.ndarray], rows: int, window: Window, sections: dict[str, _Section], kind: pa.DataType,
                     same: _Same) -> pa.ListArray:
    """Where the job's busy cores are known, one row standing for all of its processes on the
    node (Prometheus keeps no process list): what the report's CPU efficiency and the process
    pane read. Its RSS is the job's memory where known, else 0 (a row's RSS is a number); the
    scope's memory, which the report and the panes read first, stays n/a."""
    busy = job.get("busy_cores")
    if busy is None:
        return same([], rows, kind)
    ok = ~np.isnan(busy)
    n = int(ok.sum())
    source = sections["job"].map.name
    values: dict[str, pa.Array] = {
        "pid": pa.array(np.zeros(n, np.int32)), "ppid": pa.array(np.zeros(n, np.int32)), "user": same("", n, pa.string()),
        "uid": pa.array(np.full(n, -1, np.int64)), "state": same("R", n, pa.string()),
        "cpu_percent": pa.array(busy[ok] * 100.0), "rss": _array(np.nan_to_num(job.get("memory_used", np.full(rows, np.nan))[ok]), pa.int64()),
        "threads": pa.array(np.zeros(n, np.int32)), "started": pa.array(np.zeros(n)),
        "command": same(f"all of job {window.job}'s processes on this node (summed by {source}: Prometheus keeps no process list)", n, pa.string()),
    }
    struct = kind.value_type
    children = [values[f.name] if f.name in values else same([] if pa.types.is_list(f.type) else None, n, f.type) for f in struct]
    return _lists(ok.astype(np.int32), pa.StructArray.from_arrays(children, fields=list(struct)), kind)


def _scope(name: str, node: _Node, job: dict[str, np.ndarray], rows: int, window: Window, sections: dict[str, _Section], same: _Same) -> pa.StructArray:
    """The job's scope on this node, its allocation and memory per sample from the job series."""
    source = sections["job"].map.name if "job" in sections else None
    gpu = sections.get("gpu")
    evidence = [f"read from Prometheus: {', '.join(f'{s} from {v.map.name}' for s, v in sections.items())}"]
    allocated: tuple[AllocatedGpu, ...] = ()
    none_allocated = "gpus_allocated" in job and np.nanmax(job["gpus_allocated"], initial=-1) == 0
    if none_allocated:  # the job's own series say it has no GPU here: the node's are not its
        evidence.append(f"gpus: none ({source}: the job was allocated no GPU on this node)")
    elif gpu is not None and node.gpu:
        how = f"series labelled {gpu.map.job_label}" if gpu.by_job else "every GPU of the node over the job's time"
        allocated = tuple(AllocatedGpu(i, node.gpu_labels.get(i, ("", ""))[0] or None, f"{gpu.map.name}: {how}") for i in sorted(node.gpu))
        evidence.append(f"gpus: {how} ({gpu.map.name})")
    if window.job is None:
        template = JobScope(kind="node", label=f"{name} (from Prometheus)", gpus=allocated, evidence=tuple(evidence))
    else:
        template = JobScope(kind="job", label=f"job {window.job} on {name} (from Prometheus)", job_id=window.job, gpus=allocated,
                            cgroup=f"memory: {source} job series" if source else "memory: not in Prometheus", evidence=tuple(evidence),
                            problems=() if source else ("no job series in Prometheus: the job's CPU and memory are n/a",))
    one = recording_schema.scope_structs([template])
    per_row = {"cpus_allocated": pa.int32(), "memory_limit": pa.int64(), "memory_used": pa.int64(), "memory_peak": pa.int64()}
    children = []
    for i, f in enumerate(one.type):
        if f.name in per_row and f.name in job:
            children.append(_array(job[f.name], per_row[f.name]))
        elif f.name == "label":
            children.append(pa.repeat(one.field(i)[0], rows))
        elif f.name == "gpus":  # this node's
            children.append(_each_row(one.field(i), rows, same))
        else:  # the same on every node
            children.append(same(one.field(i)[0].as_py(), rows, f.type))
    return pa.StructArray.from_arrays(children, fields=list(one.type))


def _each_row(one: pa.ListArray, rows: int, same: _Same) -> pa.ListArray:
    """A one-row list of structs as the list of each of `rows` rows; a field with one value in
    every item (the evidence of each GPU) is `same`'s, shared with the other nodes."""
    items = one.values
    at = pa.array(np.tile(np.arange(len(items)), rows))
    children = [same(items.field(i)[0].as_py(), len(at), f.type) if len(items) and len(items.field(i).unique()) == 1 else items.field(i).take(at)
                for i, f in enumerate(items.type)]
    return _lists(np.full(rows, len(items)), pa.StructArray.from_arrays(children, fields=list(items.type)), one.type)
