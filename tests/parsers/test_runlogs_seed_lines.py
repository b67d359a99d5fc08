"""Hypothesis tests of how the seed reader walks a log's lines: each distinct line is classified
once and a line that only fills what is still empty is handled at its first copy, so another
rank's copies of it change nothing, and line numbers count lines as `str.splitlines` does
whatever the line breaks."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.runlogs import seed

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ONCE_LINES = [  # lines that fill a value still empty: resources, Slurm echoes, settings, the job id
    "Number of nodes: 2", "Number of GPUs: 4", "Total GPUs: 8", "Number of tasks: 8", "  SLURM_NNODES: 2",
    "SLURM_CPUS_PER_TASK=4", "  SLURM_JOB_ID: 4260805", "  SLURM_JOB_NAME: spiral_mlp_8gpus_2node", "Job ID: 4260805",
    "Max epochs: 50", "Batch size (per GPU): 32", "Effective batch size (batch_size × num_gpus): 256",
    "Learning rate: 0.001", "PyTorch version: 2.5.1", "TRAINING COMPLETE",
]
EVERY_LINES = [  # lines whose every copy counts: a time per rank, the per-epoch values
    "Total training time: 104.00 seconds (1.73 minutes)", "Total training time: 98.5 seconds", "Time per epoch: 2.08 seconds",
    "Best validation loss: 0.1203", "Train Epoch: 1 [24/24 (100%)]\tLoss: 0.283805", "Test set: Average loss: 0.2838, Accuracy: 23/24 (96%)",
    "Total Training Time: 75.1 s", "Number of epochs: 5", "Total epochs/s: 0.066", "Total duration: 120 s",
]
OTHER_LINES = ["", "======================================================================", "ENVIRONMENT INFORMATION", "  GPU 0: NVIDIA A100-SXM4-40GB",
               "Training started at: Mon Jan 12 17:00:01 CET 2026", "x" * 2100 + "Total GPUs: 3"]
lines = st.lists(st.sampled_from(ONCE_LINES + EVERY_LINES + OTHER_LINES), max_size=40)


def _read(text: str) -> tuple[list[dict[str, object]] | None, list[object]]:
    findings: list[object] = []
    runs = seed.parse(text, "slurm-1.out", None, findings)  # type: ignore[arg-type]
    return (None if runs is None else [dataclasses.asdict(run) for run in runs]), findings


@SETTINGS
@given(log=lines, copies=st.lists(st.sampled_from(ONCE_LINES), max_size=10))
def test_copies_of_once_lines_change_nothing(log: list[str], copies: list[str]) -> None:
    """Another rank's copy of a line already seen adds nothing: same runs, same findings."""
    seen = [line for line in copies if line in log]
    assert _read("\n".join(log + seen) + "\n") == _read("\n".join(log) + "\n")


@SETTINGS
@given(log=lines, breaks=st.lists(st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\u2028"]), min_size=1))
def test_line_numbers_follow_any_line_break(log: list[str], breaks: list[str]) -> None:
    """The same lines ended by other line breaks read the same, line numbers included."""
    ends = [breaks[i % len(breaks)] for i in range(len(log))]
    ends = [end if not (end == "\r" and following == "") else "\n" for end, following in zip(ends, [*log[1:], "x"])]  # \r + an empty line's \n is one break
    mixed = "".join(line + end for line, end in zip(log, ends))
    assert _read(mixed) == _read("\n".join(log) + "\n")
