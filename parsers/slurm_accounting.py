"""Reads what Slurm's accounting says of one job: `sacct -P` (any job, when the cluster keeps
accounting) or `sstat -P` with the job's `scontrol show job` fields (a running job, even on a
cluster without slurmdbd).

    use = from_sacct(text, "123")                       # -> metrics.job_report.SlurmUse
    use = from_sstat(text, "123", scontrol_fields)       # while it runs
    energy = energy_from_sacct(text, "123")              # -> metrics.energy.SlurmEnergy (same text)

Both read the header line, so column order does not matter (the commands are run with
`SACCT_FORMAT` / `SSTAT_FORMAT`). The job line gives the allocation and times (sacct); the
steps give the memory. CPU time is sacct's `TotalCPU` (user + system of every step) or the sum
of each running step's `TRESUsageInTot` cpu. Memory is the largest step total of resident
memory (`TRESUsageInTot` mem: its tasks' peaks summed), else the largest `MaxRSS` (one task):
the result says which. Durations and sizes are read by the one Slurm-format helper each
(`runlog_formats.slurm_seconds`, `metrics.units.slurm_size`); what cannot be read is None (n/a), never 0.

Energy and GPU use, where the site records them: the job's `ConsumedEnergyRaw` (joules, from the
acct_gather_energy plugin: rapl, ipmi, pm_counters, gpu), else the largest step's `energy` in
`TRESUsageInTot` (steps overlap: the batch step spans the others); `gres/gpuutil` and
`gres/gpumem` of the largest step where AccountingStorageTRES tracks them. Slurm writes 0 (or
NO_VAL) where it gathered nothing: that is n/a, with the reason.
"""

from __future__ import annotations

import math

from gpuscope.metrics.energy import SlurmEnergy
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.job.report import SlurmUse
from gpuscope.metrics.units import slurm_size
from gpuscope.parsers.runlogs.formats import slurm_seconds

SACCT_FORMAT = "JobID,State,NodeList,AllocCPUS,TotalCPU,Elapsed,Timelimit,ReqMem,MaxRSS,TRESUsageInTot,AllocTRES,ConsumedEnergyRaw"
SSTAT_FORMAT = "JobID,NTasks,MaxRSS,TRESUsageInTot"
def _tres(text: str, key: str) -> str | None:
    """`mem=163M` from `cpu=00:00:03,energy=0,mem=163M,...`."""
    for item in (text or "").split(","):
        name, _, value = item.partition("=")
        if name.strip() == key:
            return value.strip()
    return None


def _rows(text: str) -> list[dict[str, str]]:
    """`-P` output with its header line -> one dict per line (short or long lines padded/cut)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = [h.strip() for h in lines[0].split("|")]
    return [dict(zip(header, (v.strip() for v in line.split("|")))) for line in lines[1:]]


def _seconds(text: str | None) -> float | None:
    value = slurm_seconds(text or "")
    return None if math.isnan(value) else value


def _count(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def _memory_peak(steps: list[dict[str, str]], tool: str) -> tuple[int | None, str]:
    totals = [slurm_size(_tres(s.get("TRESUsageInTot", ""), "mem"), bare="")[0] for s in steps]
    totals = [t for t in totals if t is not None]
    if totals:
        return max(totals), f"largest step's summed task RSS peaks ({tool} TRESUsageInTot)"
    rss = [slurm_size(s.get("MaxRSS"), bare="")[0] for s in steps]
    rss = [r for r in rss if r is not None]
    return (max(rss), f"largest task RSS peak ({tool} MaxRSS)") if rss else (None, "")


def from_sacct(text: str, job_id: str) -> tuple[SlurmUse | None, list[Finding]]:
    """`sacct -j ID -P --format=SACCT_FORMAT` (header included) -> the job's use."""
    rows = _rows(text)
    job = next((r for r in rows if r.get("JobID") == job_id), None)
    if job is None:
        return None, [Finding("error", "sacct-no-job", f"sacct has no record of job {job_id}")]
    steps = [r for r in rows if r.get("JobID", "").startswith(job_id + ".")]
    cpus = _count(job.get("AllocCPUS"))
    requested, per = slurm_size(job.get("ReqMem"))
    if requested is not None and per == "c":
        requested = requested * cpus if cpus else None
    nodes = _count(_tres(job.get("AllocTRES", ""), "node"))
    if requested is not None and per == "n" and nodes:
        requested *= nodes
    peak, peak_is = _memory_peak(steps, "sacct")
    use = SlurmUse(job_id=job_id, source="sacct", state=job.get("State") or None, nodes=job.get("NodeList") or None, cpus=cpus,
                   cpu_time_s=_seconds(job.get("TotalCPU")), elapsed_s=_seconds(job.get("Elapsed")),
                   time_limit_s=_seconds(job.get("Timelimit")), memory_requested=requested or None, memory_peak=peak, memory_peak_is=peak_is)
    return use, []


def from_sstat(text: str, job_id: str, scontrol: dict[str, str]) -> tuple[SlurmUse | None, list[Finding]]:
    """`sstat -j ID -a -P --format=SSTAT_FORMAT` of a running job, with the `Key=Value`
    fields of its `scontrol show job` for what sstat does not say (allocation, run time)."""
    steps = [r for r in _rows(text) if r.get("JobID", "").startswith(job_id + ".")]
    if not steps:
        return None, [Finding("error", "sstat-no-steps", f"sstat has no running step of job {job_id}")]
    cpu = [_seconds(_tres(s.get("TRESUsageInTot", ""), "cpu")) for s in steps]
    known = [c for c in cpu if c is not None]
    tres = scontrol.get("AllocTRES") or scontrol.get("TRES") or ""
    requested, _ = slurm_size(_tres(tres, "mem"))
    peak, peak_is = _memory_peak(steps, "sstat")
    use = SlurmUse(job_id=job_id, source="sstat + scontrol (running)", state=scontrol.get("JobState"), nodes=scontrol.get("NodeList"),
                   cpus=_count(scontrol.get("NumCPUs")), cpu_time_s=sum(known) if known else None,
                   elapsed_s=_seconds(scontrol.get("RunTime")), time_limit_s=_seconds(scontrol.get("TimeLimit")),
                   memory_requested=requested, memory_peak=peak, memory_peak_is=peak_is)
    return use, [Finding("info", "sstat-running", f"job {job_id} is running: CPU time and memory so far (sstat), not the whole job")]


def energy_from_sacct(text: str, job_id: str) -> SlurmEnergy | None:
    """The same `sacct` text as `from_sacct` -> the job's energy and GPU use; None without the job."""
    rows = _rows(text)
    job = next((r for r in rows if r.get("JobID") == job_id), None)
    if job is None:
        return None
    return _energy(job_id, "sacct", job, [r for r in rows if r.get("JobID", "").startswith(job_id + ".")])


def energy_from_sstat(text: str, job_id: str) -> SlurmEnergy | None:
    """The same `sstat` text as `from_sstat` -> the running steps' energy and GPU use so far."""
    steps = [r for r in _rows(text) if r.get("JobID", "").startswith(job_id + ".")]
    return _energy(job_id, "sstat (running)", None, steps) if steps else None


def _joules(text: str | None) -> float | None:
    """A Slurm energy count; 0 (nothing gathered) and NO_VAL (2^64 - 2 and the like) are None."""
    text = (text or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        return None
    value = int(text)
    return float(value) if 0 < value < 2**63 else None


def _energy(job_id: str, source: str, job: dict[str, str] | None, steps: list[dict[str, str]]) -> SlurmEnergy:
    tool = source.split()[0]
    energy, energy_note = _joules(job.get("ConsumedEnergyRaw")) if job else None, ""
    if energy is not None:
        energy_note = "sacct ConsumedEnergyRaw: the job's nodes, as the site's energy plugin measures them"
    else:
        step_energy = [e for e in (_joules(_tres(s.get("TRESUsageInTot", ""), "energy")) for s in steps) if e is not None]
        if step_energy:
            energy = max(step_energy)
            energy_note = f"largest step's energy ({tool} TRESUsageInTot): the step's nodes, as the site's plugin measures them"
        else:
            energy_note = "Slurm recorded no energy for this job (0 or empty: the site gathers none, AcctGatherEnergyType)"
    usage = [s.get("TRESUsageInTot", "") for s in steps]
    util = [u for u in (_percent(_tres(t, "gres/gpuutil")) for t in usage) if u is not None]
    memory = [m for m in (slurm_size(_tres(t, "gres/gpumem"), bare="")[0] for t in usage) if m is not None]
    gpu_note = "" if util or memory else "Slurm tracks no GPU use for this job (gres/gpuutil, gres/gpumem: AccountingStorageTRES)"
    return SlurmEnergy(job_id=job_id, source=source, energy_j=energy, energy_note=energy_note, gpu_util_pct=max(util) if util else None,
                       gpu_memory=max(memory) if memory else None, gpu_note=gpu_note)


def _percent(text: str | None) -> float | None:
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if 0 <= value < 1e6 else None  # NaN and NO_VAL-like counts are not percents
