"""A job's working directory and output file (`WorkDir`, `StdOut` of `scontrol show job`):
parsed from real outputs of several Slurm versions, carried into the job scope, and where the
watch's `b` opens the browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.collectors import scope, slurm
from gpuscope.metrics.samples import JobScope
from gpuscope.tui.model.watch import browse_target
from fake_scope import Fake, write

DATA = Path(__file__).parent.parent / "data" / "slurm"

PATHS = {
    "show_job_d_18.08.txt": ("/home/carol", None),  # 18.08 prints no StdOut for this job
    "show_job_d_22.05_debian12.txt": ("/tmp/st", "/tmp/st/slurm-1.out"),
    "show_job_d_23.02.txt": ("/home/alice/train", "/home/alice/train/slurm-4242.out"),
    "show_job_d_24.11.txt": ("/data/jobs/GPU-job", "/data/jobs/GPU-job/job_output_13.txt"),
    "show_job_d_26.05.txt": ("/home/bob", "/home/bob/slurm-77.out"),
}


@pytest.mark.parametrize("name", PATHS)
def test_work_dir_and_stdout_parsed(name: str) -> None:
    info = slurm.parse_show_job((DATA / name).read_text())
    assert info is not None and (info.work_dir, info.stdout) == PATHS[name]


def test_null_and_spaces() -> None:
    text = "JobId=5 JobName=x\n   WorkDir=/scratch/my runs/a\n   StdErr=(null)\n   StdOut=(null)\n"
    info = slurm.parse_show_job(text)
    assert info is not None and info.work_dir == "/scratch/my runs/a" and info.stdout is None


def test_job_scope_carries_them(tmp_path: Path) -> None:
    write(tmp_path, "proc/sys/kernel/hostname", "login01\n")
    s = scope.resolve_scope(job="4242", root=tmp_path, env={}, runner=Fake(show=(DATA / "show_job_d_23.02.txt").read_text()))
    assert (s.work_dir, s.stdout) == ("/home/alice/train", "/home/alice/train/slurm-4242.out")
    missing = scope.resolve_scope(job="42", root=tmp_path, env={}, runner=Fake(show_rc=1, show_err="slurm_load_jobs error: Invalid job id specified"))
    assert missing.work_dir is None and missing.stdout is None


def test_browse_target() -> None:
    job = JobScope(kind="job", label="job 1", job_id="1", work_dir="/w", stdout="/w/slurm-1.out")
    assert browse_target(job, "/here", lambda p: True) == ("/w", "/w/slurm-1.out", None)
    root, select, note = browse_target(job, "/here", lambda p: False)  # WorkDir on another node's disk
    assert (root, select) == ("/here", None) and note is not None and "/w" in note
    assert browse_target(JobScope(kind="node", label="node"), "/here", lambda p: True) == ("/here", None, None)
    assert browse_target(None, "/here", lambda p: True) == ("/here", None, None)
