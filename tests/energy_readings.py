"""Provides snapshots whose GPUs carry every energy and activity field, and the node its RAPL
counters: `FakeSource`'s snapshots with the fields NVML, GPM and RAPL would fill, made up
and deterministic (a function of the sample number), for the recording's tests, its version 4
file (tests/make_recording_v4.py) and bench/record_bench.py.

    snaps = with_energy([source.poll() for _ in range(12)])

Each GPU's energy counter grows by its power over the second between samples (FakeSource's
samples are 1 s apart); GPU 1 has no GPM (an Ampere GPU: its activity is n/a with the reason);
the first sample has no activity yet (GPM measures between two polls). A MIG GPU's counter is
the whole board's, as NVML's is.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from fake_watch import wave
from gpuscope.metrics.energy import RaplSample, RaplZone
from gpuscope.metrics.samples import GpuSample, Snapshot

NO_GPM = "GPM needs a Hopper or later GPU; this one is not (NVML: not supported)"
FIRST_POLL = "no activity yet: GPM measures between two polls"
MIG_ENERGY = "whole GPU: NVML has no energy per MIG instance"
RAPL_RANGE = 262_143_328_850
"""max_energy_range_uj of a real Xeon package zone."""


def gpu_with_energy(gpu: GpuSample, n: int, energy_mj: int) -> GpuSample:
    """`gpu` at sample `n` with every new field set (GPU 1's activity n/a, as before Hopper)."""
    util = gpu.util_gpu if gpu.util_gpu is not None else 50.0
    fields: dict[str, object] = {
        "sm_clock_max_mhz": 1980, "memory_clock_max_mhz": 2619, "energy_mj": energy_mj,
        "energy_note": MIG_ENERGY if gpu.mig else "",
    }
    if gpu.index == 1:
        fields["activity_note"] = NO_GPM
    elif n == 0:
        fields["activity_note"] = FIRST_POLL
    else:
        fields.update(
            sm_active_pct=round(util * (0.3 + 0.5 * wave(n, 9, gpu.index)), 1), sm_occupancy_pct=round(util * 0.4, 1),
            tensor_active_pct=round(util * 0.3 * wave(n, 7), 1), dram_bw_pct=round(20 + util * 0.5 * wave(n, 5), 1),
            pcie_tx_bytes_per_s=1.5e9 * wave(n, 4), pcie_rx_bytes_per_s=3.0e9 * wave(n, 6), nvlink_tx_bytes_per_s=40e9 * wave(n, 8, gpu.index),
            nvlink_rx_bytes_per_s=38e9 * wave(n, 8, gpu.index))
    return dataclasses.replace(gpu, **fields)  # type: ignore[arg-type]


def rapl_at(t: float, n: int) -> RaplSample:
    """The node's RAPL at sample `n`: two packages (one wrapping mid-way) and their DRAM."""
    return RaplSample(t, (
        RaplZone("intel-rapl:0", "package-0", (RAPL_RANGE - 600_000_000 + n * 120_000_000) % RAPL_RANGE, RAPL_RANGE),
        RaplZone("intel-rapl:0:0", "dram", 9_000_000 + n * 15_000_000, 65_712_999_613),
        RaplZone("intel-rapl:1", "package-1", 5_000_000 + n * 110_000_000, RAPL_RANGE),
    ))


def with_energy(snapshots: Sequence[Snapshot]) -> list[Snapshot]:
    """The snapshots (in time order, a GPU's samples 1 s apart) with energy, activity and RAPL."""
    counters: dict[int, float] = {}
    out = []
    for n, snap in enumerate(snapshots):
        gpus = []
        for gpu in snap.gpus:
            counters[gpu.index] = counters.get(gpu.index, 3.6e9 * (gpu.index + 1)) + (gpu.power_w or 0.0) * 1000.0
            gpus.append(gpu_with_energy(gpu, n, int(counters[gpu.index])))
        out.append(dataclasses.replace(snap, gpus=tuple(gpus), rapl=rapl_at(snap.host.timestamp, n)))
    return out
