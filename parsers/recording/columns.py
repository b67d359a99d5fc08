"""Provides readings of a recording's Arrow columns for many samples at once, without a
Snapshot per sample: what the replay (tui/model/replay.py) and the job report's reduction
(parsers/recording/usage.py) both read from a recording (parsers/recording/schema.py's layout).

    times = floats(table.column("timestamp"))       # NaN where null
    gpus = gpu_columns(table.column("gpus"), rows)   # GPU index -> its readings per sample
    index, scopes = scope_runs(table.column("scope")) # each sample's JobScope, made once per run
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.samples import JobScope
from gpuscope.parsers.recording.schema import scope_from

BENIGN_THROTTLE = frozenset({"gpu_idle", "applications_clocks_setting", "sync_boost", "display_clock_setting"})
"""NVML clock-event reasons that are not throttling: an idle GPU, clocks the admin set, the
sync-boost group, display clocks. The rest (power cap, thermal, hardware slowdown...) are."""


def floats(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """float64 numpy values, NaN for nulls (n/a stays n/a)."""
    return pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False)


def _lengths(lists: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False)  # a null list is empty


def parents(lists: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For each flattened item of a list column, the row it came from."""
    lengths = _lengths(lists)
    return np.repeat(np.arange(len(lengths)), lengths)


def starts(lists: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Where each row's items start among the flattened items, and their end: row `r`'s are
    `starts[r]:starts[r + 1]`."""
    return np.concatenate([[0], np.cumsum(_lengths(lists))])


READINGS = ("power_w", "power_limit_w", "energy_mj", "sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_bw_pct",
            "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s")
"""GpuSample's power, energy and activity fields, kept per GPU under their own names."""
NOTES = ("energy_note", "activity_note")


@dataclass
class GpuColumns:
    """One GPU's readings over the samples (NaN where it was not read), and its throttling."""

    util: np.ndarray
    mem_bytes: np.ndarray
    mem_total: np.ndarray
    throttled: np.ndarray
    """bool: a reason other than BENIGN_THROTTLE was active."""
    reasons_at: dict[int, list[str]] = field(default_factory=dict)
    """sample -> the reasons, where a throttle spell starts."""
    simulated: bool = False
    """Any of its readings came from a simulated GPU (--demo)."""
    readings: dict[str, np.ndarray] = field(default_factory=dict)
    """READINGS by GpuSample field name, float64 over the samples (NaN: n/a, and in a recording
    older than version 4, which had none of them)."""
    notes: dict[str, str] = field(default_factory=dict)
    """NOTES by name: the last one that said something ('' when none did), which says why the
    energy or activity readings are n/a (or what they cover: the whole GPU under MIG)."""


def gpu_columns(gpus: pa.ChunkedArray | pa.Array, rows: int, readings: bool = True) -> dict[int, GpuColumns]:
    """Per GPU index, its columns over `rows` samples, from the recording's `gpus` list column;
    without `readings`, its READINGS and NOTES are left empty (the job report's reduction reads
    only the utilisation and memory: each reading is a GPU x sample grid it would not use)."""
    parent = parents(gpus)
    if len(parent) == 0:
        return {}
    fields = pa.Table.from_struct_array(pc.list_flatten(gpus))  # every GPU field at once: one pass over the chunks, not one per field
    index = pc.fill_null(fields.column("index"), -1).to_numpy(zero_copy_only=False)
    util = floats(fields.column("util_gpu"))
    used = floats(fields.column("memory_used"))
    total = floats(fields.column("memory_total"))
    simulated = pc.fill_null(fields.column("simulated"), False).to_numpy(zero_copy_only=False)
    reasons = fields.column("throttle_reasons")
    names = pc.list_flatten(reasons)
    real = ~pc.fill_null(pc.is_in(names, value_set=pa.array(sorted(BENIGN_THROTTLE))), False).to_numpy(zero_copy_only=False)
    throttled_item = np.bincount(parents(reasons)[real], minlength=len(parent)) > 0
    wanted = READINGS if readings else ()
    values = {name: floats(fields.column(name)) for name in wanted}
    notes = {name: fields.column(name) for name in NOTES if readings}
    said = {name: pc.fill_null(pc.not_equal(note, ""), False).to_numpy(zero_copy_only=False) for name, note in notes.items()}
    # each reading laid out GPU x sample at once (one scatter per reading, not one per GPU):
    # row k of a grid is GPU ids[k] over the samples, cell `k * rows + sample` of it flat;
    # a GPU listed twice in a sample keeps its last reading, as one assignment in order does
    known = np.flatnonzero(index != -1)
    ids = np.unique(index[known])
    slot = np.searchsorted(ids, index[known])
    cell = slot * rows + parent[known]

    def grid(values: np.ndarray, empty: float | bool = np.nan) -> np.ndarray:
        out = np.full(len(ids) * rows, empty)
        out[cell] = values[known]
        return out.reshape(len(ids), rows)

    utils, useds, totals, throttled = grid(util), grid(used), grid(total), grid(throttled_item, False)
    grids = {name: grid(column) for name, column in values.items()}
    first_item = np.full(len(ids) * rows, -1)
    first_item[cell[::-1].copy()] = known[::-1]  # assigned last to first: a GPU listed twice in a sample gives its first item's reasons
    first_item = first_item.reshape(len(ids), rows)
    simulated_any = np.bincount(slot, weights=simulated[known], minlength=len(ids)) > 0
    out: dict[int, GpuColumns] = {}
    for k, g in enumerate(ids.tolist()):
        columns = GpuColumns(utils[k], useds[k], totals[k], throttled[k], simulated=bool(simulated_any[k]))
        columns.readings = {name: values[k] for name, values in grids.items()}
        for name, note in notes.items():
            last = known[(slot == k) & said[name][known]]
            columns.notes[name] = note[int(last[-1])].as_py() if last.size else ""
        starts = np.flatnonzero(columns.throttled[1:] & ~columns.throttled[:-1]) + 1
        if starts.size:
            items = first_item[k][starts]
            listed = pc.take(reasons, pa.array(items)).to_pylist()
            columns.reasons_at = {int(s): [r for r in (lst or []) if r not in BENIGN_THROTTLE] for s, lst in zip(starts, listed)}
        out[int(g)] = columns
    return out


def _differs(array: pa.Array, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair of rows (a[i], b[i]) of `array`, whether they differ: a null against a
    value, or any value, nested in lists and structs too (compared item by item, in C)."""
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    out = valid[a] != valid[b]
    kind = array.type
    if pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            out |= _differs(pc.struct_field(array, [i]), a, b)
    elif pa.types.is_list(kind):
        offsets = array.offsets.to_numpy(zero_copy_only=False)  # into array.values, this slice's
        lengths = np.where(valid, np.diff(offsets), 0)
        out |= lengths[a] != lengths[b]
        pairs = np.flatnonzero((lengths[a] == lengths[b]) & (lengths[a] > 0))
        if pairs.size:
            count = lengths[a][pairs]
            pair = np.repeat(pairs, count)
            k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)  # item k of its row
            items = _differs(array.values, offsets[a][pair] + k, offsets[b][pair] + k)
            out[pair[items]] = True
    else:
        unequal = pc.not_equal(_rows(array, a), _rows(array, b))
        out |= pc.fill_null(unequal, False).to_numpy(zero_copy_only=False)  # both null: equal
    return out


def _rows(array: pa.Array, at: np.ndarray) -> pa.Array:
    """array[at]; a slice (no copy) where `at` is a run of consecutive rows, as it is when each
    row is compared with the one before and every list of the column has the same length."""
    if len(at) and at[-1] - at[0] == len(at) - 1 and (len(at) < 2 or (np.diff(at) == 1).all()):
        return array.slice(int(at[0]), len(at))
    return array.take(pa.array(at))


def changed(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """bool per row: it differs from the row before (the first row: True)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n = len(array)
    out = np.ones(n, bool)
    if n > 1:
        out[1:] = _differs(array, np.arange(n - 1), np.arange(1, n))
    return out


def scope_runs(scopes: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, list[JobScope]]:
    """Each row's scope as an index into a list of JobScopes, one per run of equal rows (a
    scope rarely changes: it is made once per run, not per sample)."""
    if isinstance(scopes, pa.ChunkedArray):
        scopes = scopes.combine_chunks()
    new = changed(scopes)
    firsts = np.flatnonzero(new)
    return np.cumsum(new) - 1, [scope_from(value) for value in scopes.take(pa.array(firsts, pa.int64())).to_pylist()]
