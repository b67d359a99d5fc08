"""Verdicts in plain words, on the thresholds the screen uses."""

from __future__ import annotations

from gpuscope.metrics.job import verdicts
from gpuscope.metrics.samples import AllocatedGpu, JobScope, Verdict

MB = 1024 * 1024


def test_cores() -> None:
    assert verdicts.cores(8, 1.0).text == "asked for 8 cores, using 1.0"
    assert verdicts.cores(2, 1.0).severity == "ok" and verdicts.cores(2, 1.0).text == "using 1.0 of 2 cores"
    assert verdicts.cores(2, 0.9).severity == "warning"  # the "1 of 2 cores busy" case
    assert "oversubscribed" in verdicts.cores(2, 3.2).text
    assert verdicts.cores(None, 1.5).text == "using 1.5 cores (no allocation known)"
    assert verdicts.cores(4, None) is None


def test_memory() -> None:
    assert verdicts.memory(500 * MB, 300 * MB).text == "peak 300.0 MiB of 500.0 MiB requested (60%)"
    assert verdicts.memory(500 * MB, 480 * MB).severity == "problem"
    low = verdicts.memory(32 * 1024 * MB, 2 * 1024 * MB)
    assert low.severity == "warning" and "request less" in low.text
    assert verdicts.memory(None, 10 * MB).text.startswith("peak memory 10.0 MiB")


def test_gpus() -> None:
    given = (AllocatedGpu(2, "GPU-aaa", "SLURM_JOB_GPUS"), AllocatedGpu(3, None, "SLURM_JOB_GPUS"))
    found = verdicts.gpus(given, {2: 0.0, 3: 87.0, 5: 50.0}, used_by_scope={3, 5})
    texts = [v.text for v in found]
    assert texts == ["GPU 2 allocated, idle", "GPU 3 busy 87%", "GPU 5 used by the job but not allocated"]
    assert verdicts.gpus((AllocatedGpu(0, None, "x"),), {}, ())[0].text == "GPU 0 allocated, no utilisation reading"
    assert verdicts.gpus((), {}, {1, 0})[0].text == "uses GPU 0, 1"


def test_judge_orders_problems_first() -> None:
    scope = JobScope("job", "job 42", cpus_allocated=8, memory_limit=500 * MB, memory_peak=490 * MB,
                     gpus=(AllocatedGpu(0, None, "env"),))
    found = verdicts.judge(scope, 1.0, {0: 50.0}, {0})
    assert [v.severity for v in found] == ["problem", "warning", "ok"]


def test_activity_busy_utilisation_with_idle_sms() -> None:
    found = verdicts.activity(2, 100.0, 12.0)
    assert found is not None and found.severity == "warning"
    assert found.text == "GPU 2: utilization 100 %, SM active 12 %: most SMs idle (kernels too small to fill the GPU)"
    assert verdicts.activity(2, 80.0, 49.9) is not None  # both thresholds: util >= 80 %, SM active < 50 %
    assert verdicts.activity(2, 79.9, 10.0) is None  # not busy: "idle" verdicts are the GPU verdicts' business
    assert verdicts.activity(2, 100.0, 50.0) is None  # half the SMs or more: no disagreement worth saying
    assert verdicts.activity(2, 100.0, None) is None and verdicts.activity(2, None, 5.0) is None  # only when both exist


def test_ranked_keeps_order_within_a_severity() -> None:
    found = verdicts.ranked([Verdict("ok", "a"), Verdict("warning", "b"), Verdict("problem", "c"), Verdict("warning", "d")])
    assert [v.text for v in found] == ["c", "b", "d", "a"]
