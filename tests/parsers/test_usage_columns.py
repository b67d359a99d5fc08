"""The report's per-node reduction (parsers/recording/usage.py) and each GPU's readings
(parsers/recording/gpu_readings.py), computed on whole columns, against the same figures worked
out sample by sample from the Snapshots of real recordings: equal to the last bit, in every
scope (a job's pids, a user, a node view, with and without a cgroup) and with nodes
interleaved in one batch."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from collections import Counter

from gpuscope.metrics.job.energy import GPU_FIELDS
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import JobScope, Snapshot
from gpuscope.parsers.recording.gpu_readings import GpuReadingsReduce
from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.usage import usage_per_node

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = [*sorted((REPO / "tests/data/recordings").glob("*.gsrec")), *sorted((REPO / "examples/recording").glob("*.gsrec"))]


def _members(s: Snapshot) -> list:
    scope = s.scope
    if scope.pids:
        return [p for p in s.processes if p.pid in scope.pids]
    if scope.kind == "user" and scope.user:
        return [p for p in s.processes if p.user == scope.user]
    return list(s.processes)


def _expected(snaps: list[Snapshot]) -> dict:
    """One node's figures, a sample at a time, as the report has always defined them."""
    busy, memory, used, allocated, totals = [], [], set(), set(), {}
    for s in snaps:
        totals |= {g.index: g.memory_total for g in s.gpus if g.memory_total}  # the last one read
        mine = _members(s)
        cpu = np.array([p.cpu_percent for p in mine if p.cpu_percent is not None], float)
        busy.append(cpu.sum() / 100.0 if cpu.size else np.nan)
        if s.scope.cgroup is not None:
            memory.append(np.nan if s.scope.memory_used is None else float(s.scope.memory_used))
        elif s.scope.kind == "node":
            memory.append(float(s.host.memory.used))
        else:
            memory.append(float(np.nansum(np.array([p.rss for p in mine], float))) if mine else np.nan)
        allocated |= {g.index for g in s.scope.gpus if g.index is not None}
        if s.scope.kind != "node":
            pids = {p.pid for p in mine}
            used |= {i for p in mine for i in p.gpu_indices}
            used |= {gp.gpu_index for g in s.gpus for gp in g.processes if gp.pid in pids}
    last = snaps[-1]
    wanted = {g.index for g in last.gpus} if last.scope.kind == "node" else used
    peaks = [s.scope.memory_peak for s in snaps if s.scope.cgroup is not None and s.scope.memory_peak is not None]
    gpus = sorted(allocated | wanted)
    return {"busy": np.array(busy), "memory": np.array(memory), "gpus": gpus, "totals": [totals.get(i) for i in gpus], "peak": max(peaks) if peaks else None}


def _scoped(snaps: list[Snapshot], host: str, scope: JobScope | None) -> list[Snapshot]:
    return [dataclasses.replace(s, host=dataclasses.replace(s.host, hostname=host), scope=scope or s.scope) for s in snaps]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_the_column_reduction_equals_the_sample_by_sample_one(path: Path) -> None:
    rec = recording.read(path)
    snaps = [rec.snapshot(i) for i in range(rec.samples)]
    user = next((p.user for s in snaps for p in s.processes), "nobody")
    pids = frozenset(p.pid for s in snaps[: len(snaps) // 2] for p in s.processes[::2])
    nodes = {  # the recording's own scopes, and each other kind over the same samples
        "own": _scoped(snaps, "own", None),
        "user": _scoped(snaps, "user", JobScope(kind="user", label=f"user {user}", user=user)),
        "node": _scoped(snaps, "node", JobScope(kind="node", label="node")),
        "pids-no-cgroup": _scoped(snaps, "pids-no-cgroup", JobScope(kind="pid", label="pids", pids=pids)),
    }
    interleaved = [s for row in zip(*nodes.values()) for s in row]
    for batches in ([recording_schema.to_batch(interleaved)], [recording_schema.to_batch(interleaved[k:k + 5]) for k in range(0, len(interleaved), 5)]):
        usages = {u.node: u for u in usage_per_node(batches)}
        assert list(usages) == list(nodes)
        for host, node in nodes.items():
            want, got = _expected(node), usages[host]
            np.testing.assert_array_equal(got.busy_cores, want["busy"])  # NaN where NaN, else bit for bit
            np.testing.assert_array_equal(got.memory_used, want["memory"])
            np.testing.assert_array_equal(got.times, [s.host.timestamp for s in node])
            assert [g.index for g in got.gpus] == want["gpus"] and got.memory_peak == want["peak"], host
            assert [g.memory_total for g in got.gpus] == want["totals"], host


def test_pids_at_the_ends_of_their_range_are_told_apart() -> None:
    """A crafted recording's negative and largest pids (int32): no two (sample, pid) pairs meet."""
    rec = recording.read(REPO / "tests/data/recordings/v4.gsrec")
    odd = (-(2**31), -5, 2**31 - 1, 7)
    snaps = []
    for i in range(rec.samples):
        s = rec.snapshot(i)
        procs = tuple(dataclasses.replace(p, pid=odd[k % 4] + (k // 4) * (1 if odd[k % 4] < 0 else -1)) for k, p in enumerate(s.processes))
        snaps.append(dataclasses.replace(s, processes=procs, scope=dataclasses.replace(s.scope, pids=frozenset(odd[i % 2::2]), cgroup=None)))
    [usage] = usage_per_node([recording_schema.to_batch(snaps)])
    want = _expected(snaps)
    np.testing.assert_array_equal(usage.busy_cores, want["busy"])
    np.testing.assert_array_equal(usage.memory_used, want["memory"])
    assert [g.index for g in usage.gpus] == want["gpus"]


def test_a_recording_with_processes_busy_in_every_scope_is_not_all_nan() -> None:
    """The comparison above means something: the real job's figures are numbers."""
    usage = usage_per_node(recording.Stream(REPO / "tests/data/recordings/v4.gsrec").batches())[0]
    assert np.isfinite(usage.busy_cores).any() and np.isfinite(usage.memory_used).any() and usage.gpus


def _gpu_readings(snaps: list[Snapshot]) -> dict:
    """(node, GPU) -> its readings, notes and simulated flag, a sample at a time."""
    out: dict = {}
    for s in snaps:
        for g in s.gpus:
            if g.index is None:
                continue
            one = out.setdefault((s.host.hostname, g.index), {"frame": {n: [] for n in GPU_FIELDS}, "energy_note": Counter(),
                                                               "activity_note": Counter(), "simulated": False})
            for name in GPU_FIELDS:
                value = getattr(g, name)
                one["frame"][name].append(math.nan if value is None else float(value))
            if not math.isfinite(one["frame"]["timestamp"][-1]):
                one["frame"]["timestamp"][-1] = s.host.timestamp
            for name in ("energy_note", "activity_note"):
                one[name].update([getattr(g, name)] if getattr(g, name) else [])
            one["simulated"] |= bool(g.simulated)
    return out


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_each_gpus_readings_on_columns_equal_the_sample_by_sample_ones(path: Path) -> None:
    rec = recording.read(path)
    snaps = [rec.snapshot(i) for i in range(rec.samples)]
    interleaved = [s for row in zip(_scoped(snaps, "a", None), _scoped(snaps, "b", None)) for s in row]
    reduce = GpuReadingsReduce()
    for k in range(0, len(interleaved), 5):
        reduce.add(recording_schema.to_batch(interleaved[k:k + 5]))
    want = _gpu_readings(interleaved)
    got = reduce.gpus()
    assert [(g.node, g.index) for g in got] == list(want)
    for g in got:
        one = want[g.node, g.index]
        for name, values in g.frame.items():
            np.testing.assert_array_equal(values, one["frame"][name], err_msg=name)
        notes = [clean(c.most_common(1)[0][0]) if c else "" for c in (one["energy_note"], one["activity_note"])]
        assert [g.energy_note, g.activity_note, g.simulated] == [*notes, one["simulated"]]
    assert set(reduce.scopes) == {"a", "b"} and reduce.scopes["b"] == snaps[-1].scope
