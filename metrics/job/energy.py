"""Provides the report's energy and GPU-activity section: energy per GPU, node and job, energy
per unit of work, what the SMs, tensor cores and DRAM did, and advice that rests on those numbers.

    gpus = [GpuReadings("node-a01", 0, frame)]            # frame: columns named as GpuSample fields
    section = energy_section(usages, gpus, cpu={"node-a01": rapl_energy(samples)}, work=work, slurm=energy)
    section.tables, section.advice

A GPU's readings are a table whose columns are `GpuSample` field names (`timestamp`, `power_w`,
`energy_mj`, `util_gpu`, `sm_active_pct`, ...): a dict of arrays or a pandas DataFrame, one row
per sample. A column the recording does not have (written before gpuscope read it) is all n/a.
The arithmetic of a GPU's energy is metrics/energy.py's (`gpu_energy`: the energy counter's
delta, else integrated power, labelled; both when they disagree); here it is summed per node and
per job, divided by the work the job's log says it did, and read beside Slurm's own figures.

A sum is n/a when one of its parts is (a partial sum is never shown as the total). RAPL is
the node's CPU energy: every process on the node counts, so it is never called the job's.
Advice from activity needs `MIN_BUSY_SAMPLES` samples with utilisation at or above
`verdicts.UTIL_BUSY` that also have the activity reading; each line gives the numbers it rests
on. Few SMs active is judged against `verdicts.SM_ACTIVE_LOW`, as the watch's verdict is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.metrics.energy import EnergyFigure, NodeCpuEnergy, SlurmEnergy, gpu_energy, human_energy
from gpuscope.metrics.job.verdicts import SM_ACTIVE_LOW, UTIL_BUSY
from gpuscope.metrics.table import Column, ResultTable

J_PER_KWH = 3.6e6
GIB = 1024**3
MIN_BUSY_SAMPLES = 10
"""Fewer busy samples with an activity reading than this is no evidence either way."""
TENSOR_IDLE_PCT = 1.0
"""Tensor cores active under this share of the time, while busy: no tensor-core work at all.
Mixed precision (bf16/fp16) or TF32 matmuls keep them active for a few percent at the least."""
DRAM_BOUND_PCT = 80.0
"""DRAM bandwidth used at or above this share of its peak, while busy: kernels are limited by
memory bandwidth (sustained bandwidth tops out near 90 % of the peak)."""
WORK_COVERED = 0.9
"""The recording must cover at least this share of the run's time (as its log gives it) for
energy per unit of work: a shorter recording would give a share of the energy."""
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_bw_pct")
LINKS = ("pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s")
GPU_FIELDS = ("timestamp", "power_w", "energy_mj", "util_gpu", *ACTIVITY, *LINKS)
"""The GpuSample fields this section reads, each a column of a GPU's readings."""
NO_COUNTER = "no energy counter in the recording"
NO_ACTIVITY = "no activity in the recording"
NO_RAPL = "no RAPL readings in the recording"
INTEGRATED = "no energy counter readings: the figure is integrated power"
"""metrics/energy.py's note, said by the `from` column here."""
SIMULATED = "SIMULATED GPUs (--demo): these numbers are not measurements"


@dataclass(frozen=True)
class GpuReadings:
    """One GPU's samples: `frame` has a column per GpuSample field (GPU_FIELDS), a row per sample."""

    node: str
    index: int
    frame: Mapping[str, Any]
    energy_note: str = ""
    """The samples' `energy_note` (why the counter is n/a, or what it covers)."""
    activity_note: str = ""
    """The samples' `activity_note` (why GPM is n/a)."""
    simulated: bool = False


@dataclass(frozen=True)
class Work:
    """What the job's log says it did: epochs and samples trained (None: the log does not say)."""

    epochs: float | None
    samples: float | None
    run_time_s: float | None
    """The run's time as its log gives it (None: not given)."""
    source: str
    """Which log(s) it comes from."""
    notes: tuple[str, ...] = ()


@dataclass
class EnergySection:
    tables: list[ResultTable] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)


def column(frame: Mapping[str, Any], name: str, rows: int | None = None) -> np.ndarray:
    """A float array of one column (NaN for missing values); all NaN when the column is absent
    (`rows` long, else as long as the `timestamp` column)."""
    if name not in frame:
        return np.full(rows if rows is not None else len(frame["timestamp"]) if "timestamp" in frame else 0, np.nan)
    values = frame[name]
    if hasattr(values, "to_numpy"):  # a pandas column: nullable integers give NaN, not an error
        return values.to_numpy(dtype=float, na_value=np.nan)
    return np.asarray(values, dtype=float)  # None becomes NaN


def _mean(values: np.ndarray) -> float | None:
    known = values[np.isfinite(values)]
    return float(known.mean()) if known.size else None


def gpu_figure(gpu: GpuReadings) -> EnergyFigure:
    """The GPU's energy over its samples (metrics/energy.py's `gpu_energy`)."""
    counter = column(gpu.frame, "energy_mj")
    note = gpu.energy_note or ("" if np.isfinite(counter).any() else NO_COUNTER)
    return gpu_energy(column(gpu.frame, "timestamp"), counter, column(gpu.frame, "power_w"), note=note)


def _kwh(joules: float | None) -> float | None:
    return None if joules is None else joules / J_PER_KWH


def _gpu_row(gpu: GpuReadings, fig: EnergyFigure) -> dict:
    notes = [n for n in fig.notes if n != INTEGRATED]
    return {"node": gpu.node, "gpu": gpu.index, "what": "GPU", "energy_kwh": _kwh(fig.joules), "mean_w": fig.mean_w, "seconds": fig.seconds,
            "source": fig.source or None, "counter_kwh": _kwh(fig.counter_j), "integrated_kwh": _kwh(fig.integrated_j), "note": "; ".join(notes)}


def _sum_row(node: str, what: str, gpus: Sequence[GpuReadings], figs: Sequence[EnergyFigure]) -> dict:
    """The GPUs' energy summed, its mean power over the longest span; n/a when one GPU's is."""
    missing = [str(g.index) if node != "job" else f"{g.node}:{g.index}" for g, f in zip(gpus, figs) if f.joules is None]
    spans = [f.seconds for f in figs if f.seconds]
    sources = sorted({f.source for f in figs if f.source})
    row = {"node": node, "gpu": None, "what": what, "energy_kwh": None, "mean_w": None, "seconds": max(spans) if spans else None,
           "source": " + ".join(sources) or None, "counter_kwh": None, "integrated_kwh": None, "note": ""}
    if missing:
        row["note"] = f"n/a: no energy figure for GPU {', '.join(missing)}"
        return row
    joules = sum(f.joules for f in figs if f.joules is not None)
    row.update(energy_kwh=_kwh(joules), mean_w=joules / max(spans) if spans else None)
    return row


def _cpu_rows(node: str, cpu: NodeCpuEnergy | None) -> list[dict]:
    """The node's RAPL figures: labelled a node figure, never the job's."""
    base = {"node": node, "gpu": None, "counter_kwh": None, "integrated_kwh": None}
    if cpu is None:
        return [{**base, "what": "CPU packages (RAPL, node)", "energy_kwh": None, "mean_w": None, "seconds": None, "source": None,
                 "note": NO_RAPL}]
    rows = []
    for what, joules in (("CPU packages (RAPL, node)", cpu.package_j), ("DRAM (RAPL, node)", cpu.dram_j)):
        if joules is None and what.startswith("DRAM") and cpu.package_j is not None:
            continue  # many CPUs have no DRAM zone: not worth an n/a row beside a package figure
        mean = joules / cpu.seconds if joules is not None and cpu.seconds else None
        notes = [n for n in cpu.notes if ("dram" in n) == what.startswith("DRAM")]  # each zone's notes on its row
        rows.append({**base, "what": what, "energy_kwh": _kwh(joules), "mean_w": mean, "seconds": cpu.seconds,
                     "source": "RAPL energy counter" if joules is not None else None, "note": "; ".join(notes)})
    return rows


def _col(key: str, title: str, fmt: str = "", **kw: Any) -> Column:
    return Column(key, title, fmt, missing="n/a", **kw)


def _show_kwh(kwh: float) -> str:
    return human_energy(kwh * J_PER_KWH)


ENERGY_COLUMNS = (
    _col("node", "node"), Column("gpu", "GPU", "d"), _col("what", "what"), _col("energy_kwh", "energy", show=_show_kwh),
    _col("mean_w", "mean W", ".0f"), _col("seconds", "over (s)", ".0f"), _col("source", "from"),
    _col("counter_kwh", "counter", show=_show_kwh, low_value=True), _col("integrated_kwh", "integrated power", show=_show_kwh, low_value=True),
    _col("note", "note"),
)
ACTIVITY_COLUMNS = (
    _col("node", "node"), _col("gpu", "GPU", "d"), _col("util_mean", "util mean %", ".1f"), _col("busy_samples", "busy samples", "d"),
    _col("sm_active_mean", "SM active %", ".1f"), _col("sm_occupancy_mean", "SM occupancy %", ".1f"),
    _col("tensor_active_mean", "tensor active %", ".1f"), _col("dram_bw_mean", "DRAM bandwidth %", ".1f"),
    _col("pcie_tx_gbps", "PCIe TX GB/s", ".2f", low_value=True), _col("pcie_rx_gbps", "PCIe RX GB/s", ".2f", low_value=True),
    _col("nvlink_tx_gbps", "NVLink TX GB/s", ".2f", low_value=True), _col("nvlink_rx_gbps", "NVLink RX GB/s", ".2f", low_value=True),
    _col("note", "note"),
)
WORK_COLUMNS = (
    _col("work", "work"), _col("count", "count", ",.0f"), _col("joules_per_unit", "GPU energy per unit", show=human_energy),
    _col("gpu_energy_kwh", "GPU energy", show=_show_kwh), _col("source", "from"), _col("note", "note"),
)
SLURM_COLUMNS = (
    _col("figure", "figure"), _col("slurm", "Slurm", ".4g"), _col("gpuscope", "gpuscope", ".4g"), _col("unit", "unit"),
    _col("slurm_from", "Slurm's from"), _col("gpuscope_from", "gpuscope's from"),
)


def _activity_row(gpu: GpuReadings, advice: list[str]) -> dict:
    util = column(gpu.frame, "util_gpu")
    busy = util >= UTIL_BUSY  # NaN compares False: a sample without a reading is not busy
    means = {name: _mean(column(gpu.frame, name)) for name in (*ACTIVITY, *LINKS)}
    note = "" if any(means[n] is not None for n in ACTIVITY) else (gpu.activity_note or NO_ACTIVITY)
    row = {"node": gpu.node, "gpu": gpu.index, "util_mean": _mean(util), "busy_samples": int(busy.sum()),
           "sm_active_mean": means["sm_active_pct"], "sm_occupancy_mean": means["sm_occupancy_pct"],
           "tensor_active_mean": means["tensor_active_pct"], "dram_bw_mean": means["dram_bw_pct"],
           **{f"{n.rsplit('_bytes', 1)[0]}_gbps": None if means[n] is None else means[n] / 1e9 for n in LINKS},
           "note": note}
    advice += activity_advice(f"{gpu.node}: GPU {gpu.index}", util, {n: column(gpu.frame, n) for n in ACTIVITY})
    return row


def activity_advice(who: str, util: np.ndarray, activity: Mapping[str, np.ndarray]) -> list[str]:
    """Advice from what a busy GPU's SMs, tensor cores and DRAM did, each line with its numbers;
    none without MIN_BUSY_SAMPLES busy samples that have the reading."""
    out = []
    busy = util >= UTIL_BUSY

    def judged(name: str) -> tuple[float, float, int] | None:
        values = activity.get(name)
        if values is None:
            return None
        both = busy & np.isfinite(values)
        n = int(both.sum())
        return (float(util[both].mean()), float(values[both].mean()), n) if n >= MIN_BUSY_SAMPLES else None

    where = f"samples with utilization >= {UTIL_BUSY:g} %"
    if (found := judged("tensor_active_pct")) is not None and found[1] < TENSOR_IDLE_PCT:
        u, t, n = found
        out.append(f"{who}: tensor cores idle at {u:.0f} % utilization (tensor active {t:.1f} % over {n} {where}): is mixed precision "
                   "(bf16/fp16 autocast) or TF32 on?")
    if (found := judged("sm_active_pct")) is not None and found[1] < SM_ACTIVE_LOW:
        u, s, n = found
        out.append(f"{who}: utilization {u:.0f} % but SM active {s:.0f} % (over {n} {where}): most SMs idle, the kernels are too small "
                   "to fill the GPU (a small batch, a launch-bound loop of short kernels)")
    if (found := judged("dram_bw_pct")) is not None and found[1] >= DRAM_BOUND_PCT:
        u, d, n = found
        out.append(f"{who}: DRAM bandwidth at {d:.0f} % of its peak (over {n} {where}, utilization {u:.0f} %): memory-bound; "
                   "less data moved per step (fused kernels, lower precision) is what speeds it up")
    return out


def work_from_runs(runs: Mapping[str, Any], source: str) -> Work:
    """The work in a runs table (parsers/runlogs' RUN_COLUMNS: `epochs`, `samples`, `time_s`):
    one run's, or several runs' summed (said)."""
    rows = len(runs[next(iter(runs))]) if len(runs.keys()) else 0  # a dict of lists or a DataFrame
    epochs, samples, times = (column(runs, k, rows) for k in ("epochs", "samples", "time_s"))
    n = len(epochs)
    notes = (f"{n} runs in the job's output: their work summed, their times too",) if n > 1 else ()

    return Work(total(epochs.tolist()), total(samples.tolist()), total(times.tolist()), source, notes)


def _work_rows(work: Work | None, job: dict | None, why_no_work: str) -> list[dict]:
    """Energy per epoch and per sample: the job's GPU energy over the work its log gives."""
    energy = job["energy_kwh"] if job else None
    base = {"count": None, "joules_per_unit": None, "gpu_energy_kwh": energy, "source": work.source if work else None}
    if work is None:
        return [{**base, "work": None, "note": why_no_work}]
    why = ""
    if job is None or energy is None:
        why = "n/a: the job's GPU energy is n/a (see the energy table)"
    elif work.run_time_s is not None and job["seconds"] is not None and job["seconds"] < WORK_COVERED * work.run_time_s:
        why = (f"n/a: the recording covers {job['seconds']:.0f} s of the {work.run_time_s:.0f} s run: "
               "its energy is a part of the run's")
    notes = list(work.notes)
    if work.run_time_s is None:
        notes.append("the log gives no run time: the energy is the whole recording's")
    rows = []
    for what, count in (("epoch", work.epochs), ("sample", work.samples)):
        if count is None or count <= 0:
            rows.append({**base, "work": what, "note": f"n/a: the log does not say how many {what}s"})
            continue
        per = None if why or energy is None else energy * J_PER_KWH / count
        rows.append({**base, "work": what, "count": count, "joules_per_unit": per, "note": "; ".join(n for n in (why, *notes) if n)})
    return rows


def _slurm_rows(slurm: SlurmEnergy, job: dict | None, util_sum: float | None, memory_sum: float | None, recorded: bool) -> list[tuple]:
    """Slurm's figures beside gpuscope's, each saying what it counts."""
    none = "no recording given" if not recorded else "n/a in the recording"
    ours = job["energy_kwh"] if job else None
    return [
        ("energy", _kwh(slurm.energy_j), ours, "kWh", slurm.energy_note,
         "the job's GPUs (energy counters or integrated power), not the CPUs" if ours is not None else none),
        ("GPU utilization", slurm.gpu_util_pct, util_sum, "%", "gres/gpuutil" if slurm.gpu_util_pct is not None else slurm.gpu_note,
         "the job's GPUs' mean utilization, summed over them" if util_sum is not None else none),
        ("GPU memory", None if slurm.gpu_memory is None else slurm.gpu_memory / GIB, memory_sum, "GiB",
         "gres/gpumem" if slurm.gpu_memory is not None else slurm.gpu_note,
         "the job's GPUs' peak memory, summed over them" if memory_sum is not None else none),
    ]


def _table(title: str, columns: tuple[Column, ...], rows: Sequence[dict], notes: tuple[str, ...] = ()) -> ResultTable:
    return ResultTable(title, columns, tuple(tuple(r[c.key] for c in columns) for r in rows), notes=notes)


def energy_section(gpus: Sequence[GpuReadings], *, cpu: Mapping[str, NodeCpuEnergy | None] | None = None, work: Work | None = None,
                   why_no_work: str = "no log of the job was read", slurm: SlurmEnergy | None = None, util_sum: float | None = None,
                   memory_sum: float | None = None, node_view: bool = False) -> EnergySection:
    """The energy tables (per GPU, node, job; per unit of work; Slurm's beside) and GPU
    activity, with advice. `gpus`: the job's GPUs (a node view: every GPU of the node);
    `cpu`: each node's RAPL figure (None: no readings), keyed by node."""
    section = EnergySection()
    figs = [gpu_figure(g) for g in gpus]
    rows = []
    nodes = list(dict.fromkeys([g.node for g in gpus] + list(cpu or {})))
    for node in nodes:
        mine = [(g, f) for g, f in zip(gpus, figs) if g.node == node]
        rows += [_gpu_row(g, f) for g, f in mine]
        if len(mine) > 1 and len(nodes) > 1:
            rows.append(_sum_row(node, f"GPUs ({len(mine)})", [g for g, _ in mine], [f for _, f in mine]))
        if cpu is not None:
            rows += _cpu_rows(node, cpu.get(node))
    job = None
    if gpus:
        count = f"{len(gpus)} on {len(nodes)} node{'s' if len(nodes) > 1 else ''}"
        job = _sum_row("all" if node_view else "job", f"all GPUs ({count}; a node view, not a job's)" if node_view else f"the job's GPUs ({count})", gpus, figs)
        rows.append(job)
    if rows:
        notes = ((SIMULATED,) if any(g.simulated for g in gpus) else ()) + (
            "energy: the energy counter's delta over the recording (resets summed), else power integrated over the samples; "
            "both where they differ by more than 5 %; a sum's mean W is over its longest GPU span",
            "RAPL: the CPU energy of the whole node (every job on it), never the job's")
        if any(r["note"] in (NO_COUNTER, NO_RAPL) for r in rows):
            notes += ("no energy counter or RAPL readings in the recording: written before gpuscope read them, or the GPU or node has none",)
        section.tables.append(_table("Energy", ENERGY_COLUMNS, rows, notes))
    if gpus:
        activity = [_activity_row(g, section.advice) for g in gpus]
        section.tables.append(_table("GPU activity", ACTIVITY_COLUMNS, activity, (
            "activity (NVML GPM, Hopper and later): SM active, occupancy, tensor active and DRAM bandwidth, means over the samples with a reading; "
            f"busy samples: utilization >= {UTIL_BUSY:g} %, what the advice judges",
            *((f"{NO_ACTIVITY}: written before gpuscope read GPM, or the GPU has none",) if any(r["note"] == NO_ACTIVITY for r in activity) else ()))))
        section.tables.append(_table("Energy per unit of work", WORK_COLUMNS, _work_rows(work, job, why_no_work), (
            "the job's GPU energy over the recording divided by the epochs and samples its log gives (CPU energy left out)",)))
    if slurm is not None:
        section.tables.append(ResultTable("Slurm beside gpuscope", SLURM_COLUMNS,
                                          tuple(_slurm_rows(slurm, job, util_sum, memory_sum, bool(gpus))),
                                          notes=(f"Slurm's figures from {slurm.source}; its energy counts whole nodes as the site's plugin measures them",)))
    return section


def total(values: Sequence[float | None]) -> float | None:
    """The sum, None when a value is None or there is none (a partial sum is never the total)."""
    known = [v for v in values if v is not None and math.isfinite(v)]
    return float(sum(known)) if values and len(known) == len(values) else None
