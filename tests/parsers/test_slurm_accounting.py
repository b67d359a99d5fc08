"""Slurm's accounting of a job (sacct, or sstat + scontrol while it runs) into the job report.

The real cluster test is in test_fanout.py (`report --job` of a running job through sstat);
these cover sacct's text, which the test cluster cannot produce (it has no slurmdbd)."""

from __future__ import annotations

from typing import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.collectors.slurm import CommandResult
from gpuscope.metrics.job.report import report
from gpuscope.metrics.units import slurm_size
from gpuscope.parsers.slurm_accounting import from_sacct, from_sstat
from gpuscope.tui.cli.live import slurm_use

GIB = 1024**3
HEADER = "JobID|State|NodeList|AllocCPUS|TotalCPU|Elapsed|Timelimit|ReqMem|MaxRSS|TRESUsageInTot|AllocTRES"
SACCT = "\n".join([  # the shape of `sacct -j 4242 -P --format=...` from Slurm 23.02 (formats-scaling.md 2.1)
    HEADER,
    "4242|COMPLETED|cn[01-02]|32|1-01:00:00|02:00:00|08:00:00|64G|||billing=32,cpu=32,mem=64G,node=2",
    "4242.batch|COMPLETED|cn01|16|00:01.500|02:00:00|||5120K|cpu=00:00:01,mem=5120K|cpu=16,mem=32G,node=1",
    "4242.extern|COMPLETED|cn[01-02]|32|00:00:00|02:00:00|||0|cpu=00:00:00,mem=0|billing=32,cpu=32,mem=64G,node=2",
    "4242.0|COMPLETED|cn[01-02]|32|1-00:59:58|01:59:50|||9G|cpu=1-00:59:58,mem=14G|cpu=32,mem=64G,node=2",
])


def test_sacct_numbers_and_advice() -> None:
    use, findings = from_sacct(SACCT, "4242")
    assert use is not None and not findings
    assert (use.cpus, use.state, use.nodes) == (32, "COMPLETED", "cn[01-02]")
    assert use.cpu_time_s == 25 * 3600 and use.elapsed_s == 7200 and use.time_limit_s == 8 * 3600
    assert use.memory_requested == 64 * GIB and use.memory_peak == 14 * GIB and "TRESUsageInTot" in use.memory_peak_is
    rep = report([], slurm=use)
    row = rep.tables[0].records()[0]
    assert row["busy_cores_mean"] == pytest.approx(12.5) and row["cpu_efficiency"] == pytest.approx(12.5 / 32)
    assert row["memory_efficiency"] == pytest.approx(14 / 64) and row["time_limit_use"] == pytest.approx(0.25)
    text = "\n".join(rep.advice)
    assert "job 4242 (sacct): asked for 32 cores, used 12.5 on average: request `-c 13`" in text
    assert "peak memory 14.0 GiB" in text and "`--mem=20G`" in text
    assert "time limit" not in text  # 25 % used: not under the 25 % mark
    assert len(rep.tables) == 1  # no recording: no per-node or GPU table


def test_old_per_cpu_and_per_node_memory_requests() -> None:
    per_cpu = SACCT.replace("|64G|", "|2000Mc|", 1)
    use, _ = from_sacct(per_cpu, "4242")
    assert use is not None and use.memory_requested == 32 * 2000 * 1024**2
    per_node = SACCT.replace("|64G|", "|32Gn|", 1)
    use, _ = from_sacct(per_node, "4242")
    assert use is not None and use.memory_requested == 64 * GIB


def test_maxrss_when_no_tres_usage_and_unknowns_are_none() -> None:
    text = "\n".join([HEADER, "7|RUNNING|cn01|4|00:00:00|00:10:00|UNLIMITED|||", "7.0|RUNNING|cn01|4||00:09:00|||3G||"])
    use, _ = from_sacct(text, "7")
    assert use is not None and use.memory_peak == 3 * GIB and "MaxRSS" in use.memory_peak_is
    assert use.time_limit_s is None and use.memory_requested is None
    row = report([], slurm=use).tables[0].records()[0]
    assert row["time_limit_use"] is None and row["memory_efficiency"] is None  # n/a, never 0


def test_no_record_is_a_finding() -> None:
    use, findings = from_sacct(HEADER + "\n", "99")
    assert use is None and findings[0].message == "sacct has no record of job 99"


def test_sstat_with_scontrol_fields() -> None:
    text = "JobID|NTasks|MaxRSS|TRESUsageInTot\n12.batch|1|10748K|cpu=00:00:00,mem=10748K\n12.0|1|163M|cpu=00:00:03,energy=0,mem=163M,pages=0"
    fields = {"JobState": "RUNNING", "NodeList": "vm", "NumCPUs": "2", "RunTime": "00:00:05", "TimeLimit": "UNLIMITED", "TRES": "cpu=2,mem=400M,node=1"}
    use, findings = from_sstat(text, "12", fields)
    assert use is not None and use.cpu_time_s == 3 and use.elapsed_s == 5 and use.cpus == 2
    assert use.memory_peak == 163 * 1024**2 and use.memory_requested == 400 * 1024**2 and use.time_limit_s is None
    assert "running" in findings[0].message
    assert from_sstat("JobID|NTasks\n", "12", fields)[0] is None


class FakeRunner:
    def __init__(self, replies: dict[str, CommandResult]) -> None:
        self.replies, self.calls = replies, []

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        self.calls.append(list(argv))
        return self.replies.get(argv[0], CommandResult(1, "", f"{argv[0]}: error: unexpected"))


def test_slurm_use_prefers_sacct_then_falls_back_to_sstat() -> None:
    runner = FakeRunner({"sacct": CommandResult(0, SACCT, "")})
    use, said = slurm_use("4242", runner)
    assert use is not None and use.source == "sacct" and said == [] and len(runner.calls) == 1
    disabled = CommandResult(1, "", "Slurm accounting storage is disabled")
    show = "JobId=12 JobName=x\n   JobState=RUNNING NumCPUs=2 RunTime=00:00:05 TimeLimit=01:00:00\n   TRES=cpu=2,mem=400M,node=1\n"
    sstat = "JobID|NTasks|MaxRSS|TRESUsageInTot\n12.0|1|163M|cpu=00:00:03,mem=163M"
    runner = FakeRunner({"sacct": disabled, "scontrol": CommandResult(0, show, ""), "sstat": CommandResult(0, sstat, "")})
    use, said = slurm_use("12", runner)
    assert use is not None and use.source.startswith("sstat") and use.time_limit_s == 3600
    assert "accounting storage is disabled" in said[0] and "running" in said[-1]
    runner = FakeRunner({"sacct": disabled, "scontrol": CommandResult(0, show, ""), "sstat": CommandResult(1, "", "sstat: error: No steps running for job 12")})
    use, said = slurm_use("12", runner)
    assert use is None and "No steps running" in said[-1] and "JobAcctGatherType" in said[-1]
    use, said = slurm_use("12; rm -rf /", runner)
    assert use is None and "not a Slurm job id" in said[0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("0123456789|:-.KMGcn,=abcdJOBID \n")), max_size=60), max_size=8))
def test_any_text_reads_without_raising(lines: list[str]) -> None:
    text = "\n".join([HEADER, *lines])
    use, _ = from_sacct(text, "4242")
    if use is not None:
        report([], slurm=use)  # whatever was read, the report is made
    from_sstat("JobID|NTasks|MaxRSS|TRESUsageInTot\n" + "\n".join(lines), "4242", {"NumCPUs": "x", "RunTime": lines[0] if lines else ""})


@given(st.text(max_size=30))
def test_slurm_size_never_raises(text: str) -> None:
    size, per = slurm_size(text)
    assert size is None or size >= 0
    assert per in ("", "n", "c")


def test_slurm_size_units() -> None:
    assert slurm_size("3000") == (3000 * 1024**2, "")
    assert slurm_size("0", bare="") == (0, "")
    assert slurm_size("10748K", bare="") == (10748 * 1024, "")
    assert slurm_size("9" * 400) == (None, "")
    assert slurm_size("4000Mc") == (4000 * 1024**2, "c")
