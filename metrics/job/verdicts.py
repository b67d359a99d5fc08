"""Provides plain-words verdicts on a job: is it using what it asked for?

"asked for 8 cores, using 1.0"; "GPU 2 allocated, idle"; "peak 480 MiB of 500 MiB requested
(96%): close to the limit"; "GPU 2: utilization 100 %, SM active 12 %: most SMs idle while
kernels run". Thresholds are module constants so tests and the screen agree.
Inputs are plain numbers (window means from `metrics.history`), so the rules are testable
without a job.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from gpuscope.metrics.samples import AllocatedGpu, JobScope, Verdict
from gpuscope.metrics.units import human_bytes

UNDERUSED_CORES = 0.5
"""Using less than half the allocated cores is worth saying."""
OVERSUBSCRIBED = 1.05
MEMORY_LOW = 0.25
MEMORY_HIGH = 0.90
GPU_IDLE_PERCENT = 5.0
UTIL_BUSY = 80.0
"""NVML utilisation at or above this: a kernel ran nearly all the time."""
SM_ACTIVE_LOW = 50.0
"""SM activity (GPM, as DCGM's SM_ACTIVE) below this, while busy, is worth saying: DCGM's own
guide calls 80 % necessary, not sufficient, for effective use, and under 50 % likely ineffective."""
WINDOW_S = 60.0
"""Verdicts judge means over the last minute, not one noisy sample (the screen says "avg 1 min")."""


def cores(allocated: int | None, busy: float | None) -> Verdict | None:
    """Busy cores (sum of CPU% / 100 over the scope's processes) against the allocation."""
    if busy is None:
        return None
    if not allocated:
        return Verdict("ok", f"using {busy:.1f} cores (no allocation known)")
    share = busy / allocated
    if share < UNDERUSED_CORES:
        return Verdict("warning", f"asked for {allocated} cores, using {busy:.1f}")
    if share > OVERSUBSCRIBED:
        return Verdict("warning", f"using {busy:.1f} cores of {allocated} allocated: oversubscribed")
    return Verdict("ok", f"using {busy:.1f} of {allocated} cores")


def memory(limit: int | None, peak: int | None) -> Verdict | None:
    """Peak memory against the requested limit."""
    if peak is None:
        return None
    if not limit:
        return Verdict("ok", f"peak memory {human_bytes(peak)} (no limit known)")
    share = peak / limit
    text = f"peak {human_bytes(peak)} of {human_bytes(limit)} requested ({share:.0%})"
    if share > MEMORY_HIGH:
        return Verdict("problem", f"{text}: close to the limit, the job may be OOM-killed")
    if share < MEMORY_LOW:
        return Verdict("warning", f"asked for {human_bytes(limit)}, peak {human_bytes(peak)} ({share:.0%}): request less")
    return Verdict("ok", text)


def gpus(allocated: Iterable[AllocatedGpu], utilisation: Mapping[int, float | None], used_by_scope: Iterable[int]) -> list[Verdict]:
    """Allocated GPUs that sit idle, and GPUs the job uses without having been given them."""
    out: list[Verdict] = []
    given = {g.index for g in allocated if g.index is not None}
    used = set(used_by_scope)
    for index in sorted(given):
        util = utilisation.get(index)
        if util is None:
            out.append(Verdict("warning", f"GPU {index} allocated, no utilisation reading"))
        elif util < GPU_IDLE_PERCENT:
            out.append(Verdict("problem", f"GPU {index} allocated, idle"))
        else:
            out.append(Verdict("ok", f"GPU {index} busy {util:.0f}%"))
    if given:
        for index in sorted(used - given):
            out.append(Verdict("problem", f"GPU {index} used by the job but not allocated"))
    elif used:
        out.append(Verdict("ok", "uses GPU " + ", ".join(map(str, sorted(used)))))
    return out


def activity(index: int, util: float | None, sm_active: float | None) -> Verdict | None:
    """A GPU whose utilisation says busy (at least UTIL_BUSY %) while under SM_ACTIVE_LOW % of its
    SMs are active: a kernel runs nearly all the time, but it keeps few SMs busy.

    Utilisation is the share of time any kernel ran, however small; SM activity the share of SMs
    with a warp resident, averaged over time. An SM whose warps wait on memory still counts as
    active, so low activity is not memory-bound work: it is kernels too small to fill the GPU (a
    small batch, a launch-bound loop, one stream of tiny kernels). None unless both numbers exist.
    """
    if util is None or sm_active is None or util < UTIL_BUSY or sm_active >= SM_ACTIVE_LOW:
        return None
    return Verdict("warning", f"GPU {index}: utilization {util:.0f} %, SM active {sm_active:.0f} %: "
                              "most SMs idle (kernels too small to fill the GPU)")


def judge(scope: JobScope, busy_cores: float | None, gpu_utilisation: Mapping[int, float | None], gpus_used: Iterable[int]) -> tuple[Verdict, ...]:
    """All verdicts for a scope, most serious first."""
    found = [v for v in (cores(scope.cpus_allocated, busy_cores), memory(scope.memory_limit, scope.memory_peak)) if v]
    found += gpus(scope.gpus, gpu_utilisation, gpus_used)
    return ranked(found)


def ranked(found: Iterable[Verdict]) -> tuple[Verdict, ...]:
    """Most serious first (problems, warnings, then what is fine), else in the order given."""
    order = {"problem": 0, "warning": 1, "ok": 2}
    return tuple(sorted(found, key=lambda v: order.get(v.severity, 3)))
