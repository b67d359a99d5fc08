"""Provides each GPU's readings in a recording as columns named after GpuSample fields, for the
report's energy and activity section (metrics/job/energy.py), and where the job wrote its output.

    readings = GpuReadingsReduce()
    usages = usage_per_node(readings.tap(stream.batches()))   # one pass over the file for both
    readings.gpus()          # [GpuReadings(node, index, {"timestamp": ..., "power_w": ..., ...})]
    readings.scopes          # node -> the last sample's JobScope (its StdOut, StdErr, WorkDir)

A field the recording does not hold (a recording written before gpuscope read it) is left out
of the columns, so the section reads it as n/a. Each node's RAPL readings (`node_rapl`, from
version 4) give its CPU energy (`cpu`), a node figure. The notes kept per GPU are the most frequent
non-empty `energy_note` and `activity_note` (a first-poll note is outnumbered by the reason a
GPU has no reading at all).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.energy import NodeCpuEnergy, RaplSample, RaplZone, rapl_energy
from gpuscope.metrics.job.energy import GPU_FIELDS, GpuReadings
from gpuscope.metrics.samples import JobScope
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.recording.columns import floats, parents, scope_runs, starts


class _Gpu:
    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {}
        self.notes: dict[str, Counter[str]] = {"energy_note": Counter(), "activity_note": Counter()}
        self.simulated = False


class GpuReadingsReduce:
    """Each GPU's readings over a recording's batches, by node (host name) and GPU index."""

    def __init__(self) -> None:
        self._gpus: dict[tuple[str, int], _Gpu] = {}
        self.scopes: dict[str, JobScope] = {}
        """Node -> the scope of its last sample."""
        self._rapl: dict[str, list[RaplSample]] = {}

    def tap(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The batches, unchanged, each added here on its way."""
        for batch in batches:
            self.add(batch)
            yield batch

    def add(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        hosts = pc.fill_null(batch.column("hostname"), "n/a")
        coded = hosts.dictionary_encode()  # its dictionary in the order first seen, as pc.unique's
        names_of, host_code = coded.dictionary.to_pylist(), coded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        last = len(host_code) - 1 - np.unique(host_code[::-1], return_index=True)[1]  # each host's last row
        run, scopes = scope_runs(pc.take(batch.column("scope"), pa.array(last)))
        for host, r in zip(names_of, run):
            self.scopes[host] = scopes[r]
        if "node_rapl" in batch.schema.names:
            self._add_rapl(hosts, batch.column("node_rapl"))
        gpus = batch.column("gpus")
        flat = pc.list_flatten(gpus)
        if not len(flat):
            return
        parent = parents(gpus)
        index = pc.fill_null(pc.struct_field(flat, "index"), -1).to_numpy(zero_copy_only=False)
        kind = flat.type
        names = {kind.field(i).name for i in range(kind.num_fields)}
        host_time = floats(batch.column("timestamp"))[parent]
        # unsafe: a counter past 2**53 mJ (never met: 2.5 GWh) is rounded rather than refused
        values = {name: pc.cast(pc.struct_field(flat, name), pa.float64(), safe=False).to_numpy(zero_copy_only=False)
                  for name in GPU_FIELDS if name in names}
        if "timestamp" in values:  # the GPU's own reading time, else its sample's
            values["timestamp"] = np.where(np.isfinite(values["timestamp"]), values["timestamp"], host_time)
        else:
            values["timestamp"] = host_time
        notes = {name: _codes(pc.struct_field(flat, name)) for name in ("energy_note", "activity_note") if name in names}
        simulated = pc.fill_null(pc.struct_field(flat, "simulated"), False).to_numpy(zero_copy_only=False)
        read = np.flatnonzero(index >= 0)
        key = host_code[parent[read]] * (int(index.max()) + 1) + index[read]  # one per (host, GPU)
        _, first, group = np.unique(key, return_index=True, return_inverse=True)
        items = read[np.argsort(group, kind="stable")]  # grouped, each group's in sample order
        sizes = np.bincount(group)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        values = {name: array[items] for name, array in values.items()}  # grouped once: a GPU's are one slice of each
        simulated = simulated[items]
        gpus: dict[int, _Gpu] = {}
        for g in np.argsort(first).tolist():  # in the order first seen
            a, b = bounds[g], bounds[g + 1]
            gpu = gpus[g] = self._gpus.setdefault((names_of[host_code[parent[items[a]]]], int(index[items[a]])), _Gpu())
            for name, array in values.items():
                gpu.parts.setdefault(name, []).append(array[a:b])
            gpu.simulated |= bool(simulated[a:b].any())
        owner = np.repeat(np.arange(len(sizes)), sizes)  # each grouped item's GPU
        for name, (codes, texts) in notes.items():  # each GPU's notes counted, all GPUs at once
            codes = codes[items]
            said = codes >= 0
            pair, seen, counts = np.unique(owner[said] * len(texts) + codes[said], return_index=True, return_counts=True)
            for k in np.argsort(seen).tolist():  # grouped by GPU, each in the order first seen: Counter's order, most_common's tie-break
                g, code = divmod(int(pair[k]), len(texts))
                gpus[g].notes[name][texts[code]] += int(counts[k])

    def _add_rapl(self, hosts: pa.Array, rapl: pa.Array) -> None:
        """RaplSamples from the column's arrays (a zone without its id or name left out, as
        schema.rapl_from does for a row): one Python object per zone, no dict per row."""
        times = floats(pc.struct_field(rapl, "timestamp"))
        read = np.flatnonzero(rapl.is_valid().to_numpy(zero_copy_only=False) & np.isfinite(times))
        if not read.size:
            return
        at = pa.array(read)
        zones = pc.take(pc.struct_field(rapl, "zones"), at)
        first = starts(zones)
        flat = pc.list_flatten(zones)
        ids, names, energy, wrap = (pc.struct_field(flat, n).to_pylist() for n in ("zone", "name", "energy_uj", "max_energy_range_uj"))
        text = _Cleaned()
        made = [RaplZone(text(z), text(n), e, w) if z is not None and n is not None else None for z, n, e, w in zip(ids, names, energy, wrap)]
        reasons = pc.take(pc.struct_field(rapl, "reason"), at).to_pylist()
        for k, (host, t, reason) in enumerate(zip(pc.take(hosts, at).to_pylist(), times[read].tolist(), reasons)):
            sample = RaplSample(t, tuple(z for z in made[first[k]:first[k + 1]] if z is not None), text(reason or ""))
            self._rapl.setdefault(host, []).append(sample)

    def cpu(self) -> dict[str, NodeCpuEnergy | None]:
        """Each node's CPU energy from RAPL (a node figure); None where the recording has no reading."""
        return {host: rapl_energy(self._rapl[host]) if self._rapl.get(host) else None for host in self.scopes}

    def gpus(self) -> list[GpuReadings]:
        """Each GPU's readings, in the order first seen."""
        out = []
        for (host, index), gpu in self._gpus.items():
            frame = {name: parts[0] if len(parts) == 1 else np.concatenate(parts) for name, parts in gpu.parts.items()}  # one batch's: no copy
            energy, activity = (gpu.notes[n].most_common(1) for n in ("energy_note", "activity_note"))
            out.append(GpuReadings(host, index, frame, clean(energy[0][0]) if energy else "", clean(activity[0][0]) if activity else "", gpu.simulated))
        return out


class _Cleaned(dict):
    """`clean` of each distinct text, once: a zone's name repeats in every sample."""

    def __call__(self, text: str) -> str:
        if text not in self:
            self[text] = clean(text)
        return self[text]


def _codes(texts: pa.Array) -> tuple[np.ndarray, list[str]]:
    """Each text's number in a list of the distinct texts; -1 for a null or empty one."""
    coded = texts.dictionary_encode()
    words = coded.dictionary.to_pylist()
    said = np.array([bool(w) for w in words] + [False])
    codes = pc.fill_null(coded.indices, len(words)).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.where(said[codes], codes, -1), words
