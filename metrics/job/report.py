"""Provides a job's efficiency report from its samples, with advice in `seff` / jobstats words.

    usages = usage_per_node(stream.batches())        # parsers/recording/usage.py: a recording's nodes
    rep = report(usages, time_limit_s=8 * 3600)      # one or more nodes
    rep.tables, rep.advice

The report takes each node's samples reduced to plain arrays (`Usage`, `GpuUsage`); reading
a recording into them is parsers/recording/usage.py's work, the math and the advice are here.

The report starts with what it is about (`Job`: the job id, user, nodes, wall time, time
limit and where the memory figures come from), then, per node: CPU efficiency (mean busy
cores, the sum of CPU% / 100 over the job's processes, against the cores allocated), memory
(the cgroup's own peak when the kernel kept one, else the highest sampled use, and the report
says which), each GPU's mean utilisation, idle share (samples under
`verdicts.GPU_IDLE_PERCENT`) and peak memory, and the share of the time limit used. A value the
samples cannot give is None (n/a), never 0; advice is only given when the evidence for it is
there, and it says the evidence: a memory request near or far from the peak gets a concrete
`--mem=` (`mem_request`), none when the request is not known. The energy and GPU-activity
tables and their advice (energy per GPU, node and job, per unit of work, Slurm's beside) are
metrics/job/energy.py's, over the GPUs the GPU table reports on.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from gpuscope.metrics.energy import NodeCpuEnergy, SlurmEnergy
from gpuscope.metrics.job.energy import GpuReadings, Work, energy_section, total
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.metrics.units import human_bytes
from gpuscope.metrics.job.verdicts import GPU_IDLE_PERCENT, MEMORY_HIGH, MEMORY_LOW, UNDERUSED_CORES

GIB = 1024**3
MIB = 1024**2
GPU_IDLE_SHARE = 0.5
"""A GPU idle in at least this share of the samples is worth saying."""
TIME_LIMIT_LOW = 0.25
"""A job that used less than this share of its time limit could ask for less (it starts sooner)."""
MEMORY_HEADROOM = 1.25
"""Suggested memory request: the peak plus a quarter, rounded up (`mem_request`)."""
MEMORY_SOURCES = {
    "cgroup memory": "the job's cgroup (memory.current; its peak: memory.peak)",
    "summed RSS": "no job cgroup: the sum of the job's processes' RSS",
    "node memory in use": "a node view: the node's memory in use",
}
"""What each `Usage.memory_what` counts, as the report's `Job` table says it."""


@dataclass(frozen=True)
class GpuUsage:
    index: int
    allocated: bool
    util: np.ndarray
    """Utilisation percent per sample; NaN where there was no reading."""
    memory_used: np.ndarray
    memory_total: int | None
    simulated: bool = False


@dataclass(frozen=True)
class Usage:
    """One node's samples, reduced to what a report needs."""

    node: str
    times: np.ndarray
    busy_cores: np.ndarray
    cpus_allocated: int | None
    memory_used: np.ndarray
    memory_peak: int | None
    """The cgroup's own peak (memory.peak / max_usage_in_bytes) at the last sample, if known."""
    memory_limit: int | None
    memory_what: str
    """What memory_used counts: 'cgroup memory' or 'summed RSS'."""
    gpus: tuple[GpuUsage, ...] = ()
    scope_kind: str = "job"
    """'job', 'user', 'pid' or 'node': a node view has no allocation to compare with."""
    job_id: str | None = None
    user: str | None = None
    time_limit_s: float | None = None
    """The job's time limit as its scope recorded it (scontrol show job), if known."""


@dataclass(frozen=True)
class SlurmUse:
    """What Slurm's own accounting says of a whole job (parsers/slurm_accounting.py): sacct,
    or sstat + scontrol while it runs. None where it does not say (n/a)."""

    job_id: str
    source: str
    """'sacct', or 'sstat + scontrol (running)'."""
    state: str | None
    nodes: str | None
    cpus: int | None
    cpu_time_s: float | None
    """User + system CPU seconds of every step (sacct TotalCPU, or the running steps' sum)."""
    elapsed_s: float | None
    time_limit_s: float | None
    memory_requested: int | None
    memory_peak: int | None
    memory_peak_is: str = ""
    """Which memory `memory_peak` is ("largest task RSS peak (sacct MaxRSS)"...)."""
    energy: SlurmEnergy | None = None
    """Slurm's energy and GPU use of the job (ConsumedEnergyRaw, gres/gpuutil, gres/gpumem)."""


@dataclass
class Report:
    """`job`, what the report is about (printed first); the tables: Slurm's, per node and per
    GPU; and the advice lines (most useful first)."""

    tables: list[ResultTable]
    advice: list[str] = field(default_factory=list)
    job: ResultTable | None = None


def _mean(values: np.ndarray) -> float | None:
    known = values[np.isfinite(values)]
    return float(known.mean()) if known.size else None


def _max(values: np.ndarray) -> float | None:
    known = values[np.isfinite(values)]
    return float(known.max()) if known.size else None


def _share(part: float | None, whole: float | None) -> float | None:
    return part / whole if part is not None and whole else None


def _duration(seconds: float) -> str:
    """A `-t` value: whole minutes, rounded up."""
    seconds = max(0, int(math.ceil(seconds / 60.0) * 60))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:00"


def _clock(seconds: float) -> str:
    """A time as it was, to the second (h:mm:ss)."""
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def mem_request(peak: float) -> str:
    """The `--mem=` value for a job whose peak was `peak` bytes: the peak plus a quarter
    (MEMORY_HEADROOM), rounded up to a multiple of 4 GiB, or of 64 MiB under 4 GiB."""
    want = peak * MEMORY_HEADROOM
    return f"{math.ceil(want / GIB / 4) * 4}G" if want > 4 * GIB else f"{max(64, math.ceil(want / MIB / 64) * 64)}M"


HEADROOM_TEXT = f"peak + {MEMORY_HEADROOM - 1:.0%}, rounded up"


def _advise(who: str, busy_mean: float | None, cpus: int | None, peak: float | None, peak_what: str, requested: int | None,
            elapsed: float | None, time_limit_s: float | None, advice: list[str]) -> tuple[float | None, float | None, float | None]:
    """CPU, memory and time-limit efficiency, with advice where the evidence holds; the same
    wording for a node's samples and for Slurm's accounting of the whole job."""
    cpu_eff = _share(busy_mean, cpus)
    if cpu_eff is not None and busy_mean is not None and cpu_eff < UNDERUSED_CORES:
        advice.append(f"{who}: asked for {cpus} cores, used {busy_mean:.1f} on average: request `-c {max(1, math.ceil(busy_mean))}`")
    mem_eff = _share(peak, requested)
    if mem_eff is not None and peak is not None and mem_eff < MEMORY_LOW:
        advice.append(f"{who}: peak memory {human_bytes(peak)} ({peak_what}) of {human_bytes(requested)} requested: "
                      f"`--mem={mem_request(peak)}` ({HEADROOM_TEXT})")
    elif mem_eff is not None and peak is not None and mem_eff > MEMORY_HIGH:
        advice.append(f"{who}: peak memory {human_bytes(peak)} ({peak_what}) is {mem_eff:.0%} of the {human_bytes(requested)} requested, "
                      f"close to the limit (OOM kill): `--mem={mem_request(peak)}` ({HEADROOM_TEXT})")
    limit_use = _share(elapsed, time_limit_s)
    if limit_use is not None and elapsed is not None and limit_use > 1:
        advice.append(f"{who}: ran {elapsed:,.0f} s, longer than the {time_limit_s or 0:,.0f} s time limit given: is the limit right?")
    elif limit_use is not None and elapsed is not None and limit_use < TIME_LIMIT_LOW:
        advice.append(f"{who}: ran {_clock(elapsed)} of a {_clock(time_limit_s or 0)} time limit ({limit_use:.0%}): "
                      f"a shorter limit (`-t {_duration(elapsed * 1.5)}`) starts sooner")
    return cpu_eff, mem_eff, limit_use


def _node_rows(u: Usage, time_limit_s: float | None, elapsed_s: float | None, advice: list[str]) -> dict:
    busy_mean = _mean(u.busy_cores)
    sampled_peak = _max(u.memory_used)
    peak, peak_what = (u.memory_peak, "cgroup peak") if u.memory_peak is not None else (sampled_peak, f"highest sampled {u.memory_what}")
    span = _span(u)
    elapsed = elapsed_s if elapsed_s is not None else span
    cpu_eff, mem_eff, limit_use = _advise(u.node, busy_mean, u.cpus_allocated, peak, peak_what, u.memory_limit, elapsed, time_limit_s, advice)
    return {"node": u.node, "samples": int(u.times.size), "span_s": span, "cpus": u.cpus_allocated, "busy_cores_mean": busy_mean,
            "busy_cores_peak": _max(u.busy_cores), "cpu_efficiency": cpu_eff, "memory_peak_gib": _gib(peak), "memory_peak_is": peak_what if peak is not None else None,
            "memory_requested_gib": _gib(u.memory_limit), "memory_efficiency": mem_eff, "time_limit_use": limit_use}


def _slurm_row(use: SlurmUse, advice: list[str]) -> dict:
    busy_mean = use.cpu_time_s / use.elapsed_s if use.cpu_time_s is not None and use.elapsed_s else None
    who = f"job {use.job_id} ({use.source})"
    cpu_eff, mem_eff, limit_use = _advise(who, busy_mean, use.cpus, use.memory_peak, use.memory_peak_is, use.memory_requested,
                                          use.elapsed_s, use.time_limit_s, advice)
    return {"job": use.job_id, "source": use.source, "state": use.state, "nodes": use.nodes, "cpus": use.cpus, "cpu_time_s": use.cpu_time_s,
            "elapsed_s": use.elapsed_s, "busy_cores_mean": busy_mean, "cpu_efficiency": cpu_eff, "memory_peak_gib": _gib(use.memory_peak),
            "memory_peak_is": use.memory_peak_is or None, "memory_requested_gib": _gib(use.memory_requested), "memory_efficiency": mem_eff,
            "time_limit_use": limit_use}


def _gpu_rows(u: Usage, advice: list[str]) -> list[dict]:
    rows = []
    for g in u.gpus:
        known = g.util[np.isfinite(g.util)]
        idle = float((known < GPU_IDLE_PERCENT).mean()) if known.size else None
        if g.allocated and idle is not None and idle >= GPU_IDLE_SHARE:
            advice.append(f"{u.node}: GPU {g.index} allocated, idle for {idle:.0%} of the job ({known.size} samples under {GPU_IDLE_PERCENT:g} %)")
        elif g.allocated and not known.size:
            advice.append(f"{u.node}: GPU {g.index} allocated, no utilisation reading: whether it was used is unknown")
        elif u.scope_kind == "node" and idle is not None and idle >= GPU_IDLE_SHARE:
            advice.append(f"{u.node}: GPU {g.index} idle for {idle:.0%} of the recording ({known.size} samples under {GPU_IDLE_PERCENT:g} %; "
                          "a node view: whether a job was given it is not known)")
        peak = _max(g.memory_used)
        given = "n/a (node view)" if u.scope_kind == "node" else ("yes" if g.allocated else "no (used, not allocated)")
        rows.append({"node": u.node, "gpu": g.index, "allocated": given, "simulated": "yes" if g.simulated else None,
                     "util_mean": _mean(g.util), "util_peak": _max(g.util), "idle_share": idle, "memory_peak_gib": _gib(peak),
                     "memory_total_gib": _gib(g.memory_total), "memory_peak_share": _share(peak, g.memory_total)})
    return rows


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _span(u: Usage) -> float | None:
    """Time covered: the sum of forward steps, so a clock set back mid-recording does not
    shorten it (or make it negative)."""
    return float(np.clip(np.diff(u.times), 0, None).sum()) if u.times.size > 1 else None


def _time_limit(usages: list[Usage], given: float | None, slurm: SlurmUse | None) -> tuple[float | None, str]:
    """The time limit to judge the run against and where it came from: given (--time-limit),
    else the job's scope in the recording, else Slurm's accounting."""
    if given is not None:
        return given, "given"
    recorded = [u.time_limit_s for u in usages if u.time_limit_s is not None]
    if recorded:
        return max(recorded), "the recording: scontrol's TimeLimit for the job"
    if slurm is not None and slurm.time_limit_s is not None:
        return slurm.time_limit_s, slurm.source
    return None, ""


def _job_rows(usages: list[Usage], slurm: SlurmUse | None, time_limit: tuple[float | None, str]) -> list[tuple[str, str]]:
    """What the report is about, first: the job, its user, nodes, wall time and time limit,
    and what its memory figures count."""
    ids = list(dict.fromkeys([u.job_id for u in usages if u.job_id] + ([slurm.job_id] if slurm is not None else [])))
    kinds = sorted({u.scope_kind for u in usages if u.scope_kind != "job"})
    job = ", ".join(ids) if ids else "n/a" + (f" (a {' / '.join(kinds)} scope, not a job)" if kinds else "")
    users = list(dict.fromkeys(u.user for u in usages if u.user))
    names = [u.node for u in usages]
    if names:
        nodes = f"{len(names)}: {', '.join(names)}"
    else:
        nodes = slurm.nodes if slurm is not None and slurm.nodes else "n/a"
    spans = [s for s in map(_span, usages) if s is not None]
    if slurm is not None and slurm.elapsed_s is not None:
        wall = f"{_clock(slurm.elapsed_s)} (Slurm's elapsed time)"
    elif spans:
        wall = f"{_clock(max(spans))} (recorded: first to last sample, {max(u.times.size for u in usages):,} samples)"
    else:
        wall = "n/a"
    limit, source = time_limit
    rows = [("job", job), ("user", ", ".join(users) or "n/a"), ("nodes", nodes), ("wall time", wall),
            ("time limit", f"{_clock(limit)} (from {source})" if limit is not None else "n/a (not known: --time-limit S gives it)")]
    sources = list(dict.fromkeys(u.memory_what for u in usages if u.memory_what in MEMORY_SOURCES))
    for what in sources:
        rows.append(("memory from", MEMORY_SOURCES[what] + ("" if len(sources) == 1 else f" ({', '.join(u.node for u in usages if u.memory_what == what)})")))
    if slurm is not None and slurm.memory_peak_is:
        rows.append(("memory from (Slurm)", slurm.memory_peak_is))
    requested = {u.memory_limit for u in usages} | ({slurm.memory_requested} if slurm is not None else set())
    if requested == {None}:
        rows.append(("memory request", "n/a (not known: no --mem advice)"))
    return [(key, clean(value)) for key, value in rows]


def _gib(n: float | None) -> float | None:
    return None if n is None else n / GIB


def _col(key: str, title: str, fmt: str = "") -> Column:
    return Column(key, title, fmt, missing="n/a")


NODE_COLUMNS = (
    _col("node", "node"), _col("samples", "samples", "d"), _col("span_s", "span (s)", ".0f"), _col("cpus", "cores", "d"),
    _col("busy_cores_mean", "busy cores mean", ".2f"), _col("busy_cores_peak", "peak", ".2f"), _col("cpu_efficiency", "CPU eff", ".0%"),
    _col("memory_peak_gib", "memory peak (GiB)", ".2f"), _col("memory_peak_is", "which"), _col("memory_requested_gib", "requested (GiB)", ".2f"),
    _col("memory_efficiency", "mem eff", ".0%"), _col("time_limit_use", "time limit used", ".0%"),
)
SLURM_COLUMNS = (
    _col("job", "job"), _col("source", "from"), _col("state", "state"), _col("nodes", "nodes"), _col("cpus", "cores", "d"),
    _col("cpu_time_s", "CPU time (s)", ".0f"), _col("elapsed_s", "elapsed (s)", ".0f"), _col("busy_cores_mean", "busy cores mean", ".2f"),
    _col("cpu_efficiency", "CPU eff", ".0%"), _col("memory_peak_gib", "memory peak (GiB)", ".2f"), _col("memory_peak_is", "which"),
    _col("memory_requested_gib", "requested (GiB)", ".2f"), _col("memory_efficiency", "mem eff", ".0%"), _col("time_limit_use", "time limit used", ".0%"),
)
GPU_COLUMNS = (
    _col("node", "node"), _col("gpu", "GPU", "d"), _col("allocated", "allocated"), _col("simulated", "simulated"), _col("util_mean", "util mean %", ".1f"),
    _col("util_peak", "peak %", ".0f"), _col("idle_share", "idle", ".0%"), _col("memory_peak_gib", "memory peak (GiB)", ".2f"),
    _col("memory_total_gib", "of (GiB)", ".1f"), _col("memory_peak_share", "share", ".0%"),
)


def report(usages: Iterable[Usage], *, time_limit_s: float | None = None, elapsed_s: float | None = None, slurm: SlurmUse | None = None,
           gpu_readings: Sequence[GpuReadings] = (), cpu: Mapping[str, NodeCpuEnergy | None] | None = None, work: Work | None = None,
           why_no_work: str = "no log of the job was read") -> Report:
    """The report over every node's samples (a recording) and/or Slurm's accounting of the
    job; advice only where the evidence holds. With both, CPU, memory and time-limit advice
    comes from Slurm (the whole job), GPU advice from the samples (Slurm has no GPU use).

    Energy and activity (metrics/job/energy.py) come from `gpu_readings` (each GPU's samples;
    only the GPUs the GPU table reports on count), `cpu` (each node's RAPL figure), `work` (what
    the job's log says it did; `why_no_work` when there is none) and Slurm's energy."""
    advice: list[str] = []
    nodes, gpus = [], []
    usages = list(usages)
    limit = _time_limit(usages, time_limit_s, slurm)
    job = ResultTable("Job", (_col("what", "what"), _col("value", "value")), tuple(_job_rows(usages, slurm, limit)))
    tables = []
    time_limit_s = limit[0]
    if slurm is not None:
        row = _slurm_row(dataclasses.replace(slurm, time_limit_s=time_limit_s), advice)
        tables.append(ResultTable("Slurm accounting", SLURM_COLUMNS, (tuple(row[c.key] for c in SLURM_COLUMNS),),
                                  notes=("CPU eff: CPU time / (elapsed x cores); mem eff: peak / requested; n/a: Slurm did not say",)))
    for u in usages:
        nodes.append(_node_rows(u, time_limit_s, elapsed_s, [] if slurm is not None else advice))
        gpus += _gpu_rows(u, advice)
    if nodes:
        tables.append(ResultTable("Job efficiency per node", NODE_COLUMNS, tuple(tuple(r[c.key] for c in NODE_COLUMNS) for r in nodes),
                                  notes=("CPU eff: mean busy cores / cores allocated; mem eff: peak / requested; n/a: not in the samples",)))
    if gpus:
        simulated = ("SIMULATED GPUs (--demo): these numbers are not measurements",) if any(r["simulated"] for r in gpus) else ()  # and a column, for JSON
        tables.append(ResultTable("GPUs", GPU_COLUMNS, tuple(tuple(r[c.key] for c in GPU_COLUMNS) for r in gpus),
                                  notes=(*simulated, f"idle: share of samples under {GPU_IDLE_PERCENT:g} % utilisation")))
    reported = {(r["node"], r["gpu"]) for r in gpus}
    section = energy_section([g for g in gpu_readings if (g.node, g.index) in reported], cpu=cpu, work=work, why_no_work=why_no_work,
                             slurm=slurm.energy if slurm is not None else None, util_sum=total([r["util_mean"] for r in gpus]),
                             memory_sum=total([r["memory_peak_gib"] for r in gpus]),
                             node_view=bool(usages) and all(u.scope_kind == "node" for u in usages))
    tables += section.tables
    return Report(tables, advice + section.advice, job)
