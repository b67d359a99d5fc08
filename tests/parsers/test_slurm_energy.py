"""Slurm's own energy and GPU figures of a job: sacct ConsumedEnergyRaw and TRESUsageInTot's
`energy`, `gres/gpuutil`, `gres/gpumem`, read from the same text as the rest of the accounting;
0 and NO_VAL are n/a with the reason, never 0 J."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.parsers.slurm_accounting import SACCT_FORMAT, energy_from_sacct, energy_from_sstat, from_sacct

MIB = 1024**2
HEADER = SACCT_FORMAT.replace(",", "|")
# A 2-node GPU job on a site with acct_gather_energy/pm_counters and gres/gpumem, gres/gpuutil in
# AccountingStorageTRES (the shape of sacct 23.02 output; ConsumedEnergyRaw is joules, the job line
# and its steps overlap in time, so they repeat nearly the same figure, as on ARCHER2).
SACCT = "\n".join([
    HEADER,
    "4242|COMPLETED|gpu[01-02]|64|2-00:00:00|02:19:48|08:00:00|256G|||billing=64,cpu=64,gres/gpu=8,mem=256G,node=2|4580112",
    "4242.batch|COMPLETED|gpu01|32|00:01.500|02:19:48|||5120K|cpu=00:00:01,energy=2290051,fs/disk=1024,gres/gpumem=0,"
    "gres/gpuutil=0,mem=5120K,pages=0,vmem=10240K|cpu=32,mem=128G,node=1|4580112",
    "4242.extern|COMPLETED|gpu[01-02]|64|00:00:00|02:19:48|||0|cpu=00:00:00,energy=4580112,mem=0|billing=64,cpu=64,mem=256G,node=2|4580112",
    "4242.0|COMPLETED|gpu[01-02]|64|1-23:59:58|02:19:09|||9G|cpu=1-23:59:58,energy=4570000,fs/disk=40397700700,"
    "gres/gpumem=21794M,gres/gpuutil=734,mem=14G,pages=3,vmem=20G|cpu=64,gres/gpu=8,mem=256G,node=2|4570000",
])


def test_consumed_energy_of_the_job_and_gpu_use_of_the_largest_step() -> None:
    e = energy_from_sacct(SACCT, "4242")
    assert e is not None and e.source == "sacct" and e.scope == "node"
    assert e.energy_j == 4_580_112 and "ConsumedEnergyRaw" in e.energy_note and "nodes" in e.energy_note
    assert e.gpu_util_pct == 734 and e.gpu_memory == 21794 * MIB and e.gpu_note == ""
    use, findings = from_sacct(SACCT, "4242")  # the accounting reads the same text as before
    assert use is not None and not findings and use.cpus == 64 and use.memory_peak == 14 * 1024**3


def test_job_line_empty_takes_the_largest_step_energy() -> None:
    text = SACCT.replace("node=2|4580112\n4242.batch", "node=2|\n4242.batch", 1)
    e = energy_from_sacct(text, "4242")
    assert e is not None and e.energy_j == 4_580_112 and "largest step's energy (sacct TRESUsageInTot)" in e.energy_note


@pytest.mark.parametrize("raw", ["0", "", "18446744073709551614", "18446744073709551615", "n/a", "-5"])
def test_no_energy_gathered_is_none_with_the_reason(raw: str) -> None:
    lines = [HEADER, f"7|COMPLETED|cn01|4|00:00:10|00:10:00|01:00:00|4G|||cpu=4,mem=4G,node=1|{raw}",
             f"7.0|COMPLETED|cn01|4|00:00:10|00:09:00|||3G|cpu=00:00:10,energy={raw},mem=3G|cpu=4,mem=4G,node=1|{raw}"]
    e = energy_from_sacct("\n".join(lines), "7")
    assert e is not None and e.energy_j is None and "recorded no energy" in e.energy_note and "AcctGatherEnergyType" in e.energy_note
    assert e.gpu_util_pct is None and e.gpu_memory is None and "gres/gpuutil" in e.gpu_note


def test_job_absent_is_none() -> None:
    assert energy_from_sacct(SACCT, "999") is None and energy_from_sacct("", "1") is None


def test_running_job_through_sstat() -> None:
    text = "\n".join(["JobID|NTasks|MaxRSS|TRESUsageInTot",
                      "12.batch|1|5M|cpu=00:00:01,energy=1200,gres/gpumem=0,gres/gpuutil=0,mem=5M",
                      "12.0|4|2G|cpu=00:04:00,energy=86000,gres/gpumem=18570M,gres/gpuutil=99,mem=2G"])
    e = energy_from_sstat(text, "12")
    assert e is not None and e.source == "sstat (running)" and e.energy_j == 86_000 and "sstat TRESUsageInTot" in e.energy_note
    assert e.gpu_util_pct == 99 and e.gpu_memory == 18570 * MIB
    assert energy_from_sstat("JobID|NTasks|MaxRSS|TRESUsageInTot\n", "12") is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("0123456789|:-.KMGenrgy/pustil,=abcJOB \n")), max_size=80), max_size=8),
       st.sampled_from(["4242", "7"]))
def test_any_text_reads_without_raising(lines: list[str], job: str) -> None:
    for e in (energy_from_sacct("\n".join([HEADER, *lines]), job),
              energy_from_sstat("\n".join(["JobID|NTasks|MaxRSS|TRESUsageInTot", *lines]), job)):
        if e is not None:
            assert e.energy_j is None or e.energy_j > 0
            assert e.gpu_util_pct is None or e.gpu_util_pct >= 0
            assert e.gpu_memory is None or e.gpu_memory >= 0
            assert (e.energy_j is None) == ("no energy" in e.energy_note)


@given(st.text(max_size=40))
def test_energy_field_of_any_text(raw: str) -> None:
    text = "\n".join([HEADER, "5|COMPLETED|cn01|1||||||cpu=00:00:01,energy=" + raw.replace("\n", " ") + "||" + raw.replace("|", "")])
    e = energy_from_sacct(text, "5")
    assert e is None or e.energy_j is None or (e.energy_j > 0 and e.energy_j < 2**63)
