"""The watched job's output: its files found from scontrol's patterns, their last lines read by
new bytes only, the watch's output pane (a tab at 80x24), Enter following StdOut in the log
view, and the merged view of all the job's files; one real Slurm job at the end."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest

from fake_watch import FakeSource, poll, watch_app
from gpuscope.collectors import scope as job_scope
from gpuscope.collectors import slurm
from gpuscope.metrics.samples import Snapshot
from gpuscope.tui.model import job_outputs
from gpuscope.tui.model.job_outputs import JobFiles, OutputTails, Tail, TailView, all_outputs, output_files
from gpuscope.tui.screens.views.log import LogViewScreen
from gpuscope.tui.screens.views.merged_log import MergedLines, MergedLogScreen
from gpuscope.tui.screens.watch.output_pane import OutputPane, body_lines
from gpuscope.tui.screens.watch.process_table import ProcessTable
from gpuscope.tui.screens.watch.status import StatusLine
from loading_helpers import until
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture


def test_tail_reads_only_new_bytes_and_cleans_them(tmp_path: Path) -> None:
    out = tmp_path / "slurm-7.out"
    out.write_bytes(b"step 1\n\x1b]0;retitled\x07\x1b[31mERROR: boom\x1b[0m\nWARNING: slow\n")
    tail = Tail("out", str(out))
    tail.read()
    view = tail.view()
    assert view.lines == ("step 1", "ERROR: boom", "WARNING: slow")
    assert (view.errors, view.warnings, view.partial, view.problem) == (1, 1, False, None)
    read = tail.bytes_read
    tail.read()  # nothing written: a stat, no read
    assert tail.bytes_read == read
    with out.open("ab") as f:
        f.write(b"step 2\npartial line")
    tail.read()
    assert tail.bytes_read == read + len(b"step 2\npartial line")
    assert tail.view().lines[-2:] == ("step 2", "partial line")  # the line being written shows too
    with out.open("ab") as f:
        f.write(b" ends\n")
    tail.read()
    assert tail.view().lines[-2:] == ("step 2", "partial line ends")
    out.write_bytes(b"rewritten\n")  # truncated and written again: start over
    tail.read()
    assert tail.view().lines == ("rewritten",) and tail.view().errors == 0


def test_a_large_file_is_read_from_its_end_and_its_counts_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_outputs, "COUNT_BYTES", 4096)
    big = tmp_path / "big.out"
    big.write_text("".join(f"ERROR line {k}\n" for k in range(5000)))
    tail = Tail("out", str(big))
    tail.read()
    view = tail.view()
    assert tail.bytes_read <= 4096 and view.partial
    assert view.lines[-1] == "ERROR line 4999" and all(line.startswith("ERROR line ") for line in view.lines)
    assert 0 < view.errors < 5000


def test_a_missing_file_says_it_waits(tmp_path: Path) -> None:
    views = OutputTails().read(JobFiles(str(tmp_path / "slurm-9.out"), None, "9"))
    assert [(v.label, v.problem) for v in views] == [("slurm-9.out", "not written yet")]


def test_patterns_scontrol_leaves_are_matched_against_the_files(tmp_path: Path) -> None:
    """Slurm 22.05 prints StdOut with %j, %u, %x filled in and %N, %t as typed."""
    for name in ("o-1-cn01-0.out", "o-1-cn01-1.out", "o-1-cn02-0.out", "o-10-cn01-0.out", "e-1.err", "rank-0.log", "rank-10.log",
                 "rank-2.log", "notes.txt"):
        (tmp_path / name).write_text(f"{name}\n")
    job = JobFiles(f"{tmp_path}/o-%j-%N-%t.out", f"{tmp_path}/e-1.err", "1", "alice", str(tmp_path), host="cn01")
    assert output_files(job) == [("out", f"{tmp_path}/o-1-cn01-0.out"), ("err", f"{tmp_path}/e-1.err")]
    names = [os.path.basename(p) for p in all_outputs(job)]
    assert names == ["o-1-cn01-0.out", "o-1-cn01-1.out", "o-1-cn02-0.out", "e-1.err", "rank-0.log", "rank-2.log", "rank-10.log"]
    same = JobFiles(f"{tmp_path}/e-1.err", f"{tmp_path}/e-1.err", "1")
    assert output_files(same) == [("out", f"{tmp_path}/e-1.err")]  # StdErr into StdOut: one file


def test_scontrol_record_gives_stdout_and_stderr() -> None:
    text = ("JobId=5 JobName=x\n   UserId=a(1) GroupId=a(1)\n   JobState=RUNNING Reason=None\n"
            "   WorkDir=/w\n   StdErr=/w/e-5.err\n   StdIn=/dev/null\n   StdOut=/w/o-x-5-%N-%t-a.out\n")
    info = slurm.parse_show_job(text, "5")
    assert info is not None and info.stdout == "/w/o-x-5-%N-%t-a.out" and info.stderr == "/w/e-5.err"


def test_the_pane_shares_its_rows_and_a_short_file_leaves_its_rest() -> None:
    out = TailView("out", "/j/o", "o", tuple(f"step {k}" for k in range(20)), 0, 0, False, None)
    err = TailView("err", "/j/e", "e", ("ERROR: a", "WARNING: b"), 1, 1, False, None)
    lines = [t.plain for t in body_lines((out, err), 10)]
    assert lines == [f"out step {k}" for k in range(12, 20)] + ["err ERROR: a", "err WARNING: b"]
    assert [t.plain for t in body_lines((out,), 3)] == ["step 17", "step 18", "step 19"]  # one file: no role column
    assert body_lines((), 5)[0].plain == "no output file known"


# --- the watch screen ---------------------------------------------------------------------


class JobWithOutput(FakeSource):
    """The fake training job, with the StdOut scontrol would name."""

    def __init__(self, stdout: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stdout = stdout

    def poll(self) -> Snapshot:
        snap = super().poll()
        return dataclasses.replace(snap, scope=dataclasses.replace(snap.scope, stdout=str(self.stdout), work_dir=str(self.stdout.parent)))


def _job_output(tmp_path: Path) -> Path:
    out = tmp_path / "slurm-4242.out"
    out.write_text("".join(f"2024-05-01T12:00:{k:02d} step {k} loss 0.{k}\n" for k in range(20)) + "2024-05-01T12:00:30 ERROR: NaN loss\n")
    (tmp_path / "rank-1.log").write_text("2024-05-01T12:00:05 rank 1 ready\n2024-05-01T12:00:31 rank 1 WARNING: slow\n")
    return out


async def test_the_pane_shows_the_last_lines_and_counts_and_enter_follows(tmp_path: Path) -> None:
    out = _job_output(tmp_path)
    async with watch_app(JobWithOutput(out)).run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot)
        pane = screen.query_one(OutputPane)
        assert pane.display and pane.region.height > 1
        shown = pane.render().plain.splitlines()
        assert shown[-1] == "2024-05-01T12:00:30 ERROR: NaN loss" and len(shown) == 6
        assert "1 error" in str(pane.border_title)
        with out.open("a") as f:
            f.write("2024-05-01T12:00:40 \x1b[2Jstep 40\n")
        await poll(pilot)
        assert pane.render().plain.splitlines()[-1] == "2024-05-01T12:00:40 step 40"
        assert "output ✖ 1" in screen.query_one(StatusLine).text.plain
        pane.focus()
        await pilot.press("enter")
        viewer = await until(pilot, lambda: pilot.app.screen if isinstance(pilot.app.screen, LogViewScreen) else None)
        assert viewer.path == out and viewer.follow is True


async def test_at_80x24_the_output_is_a_tab_and_m_merges_the_jobs_files(tmp_path: Path) -> None:
    out = _job_output(tmp_path)
    async with watch_app(JobWithOutput(out)).run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot)
        pane, table = screen.query_one(OutputPane), screen.query_one(ProcessTable)
        assert not pane.display and table.display  # no room beside the table
        await pilot.press("o")
        await pilot.pause()
        assert pane.display and not table.display and pane.has_focus
        shown = pane.render().plain.splitlines()
        assert pane.content_region.height >= 12 and len(shown) == pane.content_region.height  # the tab's whole height
        assert shown[-1] == "2024-05-01T12:00:30 ERROR: NaN loss"
        await pilot.press("m")
        merged = await until(pilot, lambda: pilot.app.screen if isinstance(pilot.app.screen, MergedLogScreen) else None)
        lines = await until(pilot, lambda: merged.query_one(MergedLines).merged)
        texts = [(lines.labels[m.source], m.text) for m in lines.lines]
        assert texts[:8] == [("slurm-4242.out", f"2024-05-01T12:00:0{k} step {k} loss 0.{k}") for k in range(6)] + [
            ("rank-1.log", "2024-05-01T12:00:05 rank 1 ready"), ("slurm-4242.out", "2024-05-01T12:00:06 step 6 loss 0.6")]  # a tie: StdOut first
        assert texts[-1] == ("rank-1.log", "2024-05-01T12:00:31 rank 1 WARNING: slow")
        assert merged.query_one(MergedLines).render_line(0).text.startswith("slurm-4242.out │ ")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert table.display and not pane.display


async def test_no_pane_without_a_job_output() -> None:
    async with watch_app(FakeSource(scope="node")).run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot)
        assert not screen.query_one(OutputPane).display
        await pilot.press("o")
        await pilot.pause()
        assert screen.query_one(ProcessTable).display


# --- a real job ---------------------------------------------------------------------------

WRITER = "for i in 1 2 3 4 5 6; do date -Is; echo \"step $i\"; echo \"WARNING: slow step $i\" >&2; sleep 0.5; done; sleep 60"


@pytest.mark.slow
def test_a_real_jobs_output_is_found_and_followed(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:  # noqa: F811 - fixture
    folder = slurm_cluster.folder
    job_id = slurm_cluster.run("sbatch", "--parsable", "-c", "1", "--mem=100M", f"--chdir={folder}", "-J", "writer",
                               "-o", f"{folder}/w-%x-%j-%N-%t.out", "-e", f"{folder}/w-%j.err", "--wrap", WRITER).stdout.strip()
    slurm_cluster.submitted.append(job_id)
    try:
        slurm_cluster.wait_running(job_id)
        info, problem = slurm.show_job(slurm.SubprocessRunner(), job_id)
        scope = job_scope.resolve_scope(job=job_id, env={})
        assert info is not None and problem is None and scope.stdout == info.stdout
        assert scope.stdout.startswith(f"{folder}/w-writer-{job_id}-")  # %N and %t as typed (22.05), or filled in
        err = f"{folder}/w-{job_id}.err"
        assert info.stderr == err
        files = JobFiles(scope.stdout, err, scope.job_id, scope.user, scope.work_dir, slurm_cluster.host)
        tails = OutputTails()
        deadline = time.monotonic() + 20
        while True:
            views = tails.read(files)
            if (len(views) == 2 and "step 6" in views[0].lines and views[1].warnings >= 6) or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        out, error = views
        assert out.path == f"{folder}/w-writer-{job_id}-{slurm_cluster.host}-0.out" and out.problem is None
        assert [line for line in out.lines if line.startswith("step")] == [f"step {k}" for k in range(1, 7)]
        assert error.warnings == 6 and error.lines[-1] == "WARNING: slow step 6"
        assert all_outputs(files)[:2] == [out.path, err]
    finally:
        slurm_cluster.cancel(job_id)
