"""`scontrol` replies a watch view must survive: non-UTF-8 bytes, host lists that are not
ranges (`cn[a-b]`), a 500 MB reply, a reply whose child keeps stdout open, a reply cut by the
timeout. The command's read is bounded in time and bytes, decoded with replacement, keeps what
arrived, and every parse problem becomes a problem line while host, GPUs and processes work."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuscope.collectors import scope, slurm

RECORD = (
    "JobId=5 JobName=train\n"
    "   UserId=alice(1000) GroupId=alice(1000)\n"
    "   JobState=RUNNING Reason=None\n"
    "   NumNodes=1 NumCPUs=2\n"
    "   NodeList=cn[a-b]\n"
    "     Nodes=cn[a-b] CPU_IDs=0-1 Mem=1024 GRES=gpu:1(IDX:0)\n"
)


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport os, subprocess, sys, time\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_huge_reply_is_bounded_in_time_and_memory(tmp_path: Path) -> None:
    cmd = script(tmp_path, "scontrol", """
        chunk = b"JobId=5 " + b"x" * (1 << 20)
        for _ in range(500):
            sys.stdout.buffer.write(chunk)
    """)
    before = max_rss()
    result = slurm.SubprocessRunner(timeout=5)([str(cmd)])
    assert result.truncated and len(result.stdout) <= slurm.MAX_OUTPUT
    assert max_rss() - before < 64 << 20
    _, problem = slurm.run(lambda argv: result, ["scontrol", "show", "job", "-d", "5"])
    assert problem and "more than" in problem


def test_non_utf8_reply_is_decoded_with_replacement(tmp_path: Path) -> None:
    reply = RECORD.encode().replace(b"train", b"tr\xff\xfein")
    cmd = script(tmp_path, "scontrol", f"""
        sys.stdout.buffer.write({reply!r})
        sys.stderr.buffer.write(b"warn \\xc3\\x28\\n")
    """)
    result = slurm.SubprocessRunner(timeout=5)([str(cmd)])
    assert result.returncode == 0 and "\ufffd" in result.stdout and "\ufffd" in result.stderr
    info, problem = slurm.show_job(lambda argv: result, "5")
    assert problem is None and info is not None and info.user == "alice" and info.fields["JobName"].startswith("tr")


def test_reply_kept_when_a_child_holds_stdout_open(tmp_path: Path) -> None:
    cmd = script(tmp_path, "scontrol", f"""
        sys.stdout.write({RECORD!r})
        sys.stdout.flush()
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # inherits stdout
    """)
    result = slurm.SubprocessRunner(timeout=5)([str(cmd)])  # waiting for the 30 s child would time out
    assert result.returncode == 0 and not result.timed_out and "JobId=5" in result.stdout
    info, problem = slurm.show_job(lambda argv: result, "5")
    assert problem is None and info is not None and info.num_cpus == 2


def test_partial_reply_kept_at_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    script(tmp_path, "scontrol", f"""
        sys.stdout.write({RECORD!r})
        sys.stdout.flush()
        time.sleep(30)
    """)
    info, problem = slurm.show_job(slurm.SubprocessRunner(timeout=1), "5")
    assert problem and "did not answer within 1 s" in problem and "wrote before is used" in problem
    assert info is not None and info.num_cpus == 2


def test_silent_hang_times_out(tmp_path: Path) -> None:
    cmd = script(tmp_path, "scontrol", "time.sleep(30)\n")
    result, problem = slurm.run(slurm.SubprocessRunner(timeout=1), [str(cmd), "show", "job"])
    assert result is not None and result.timed_out and problem and "did not answer within 1 s" in problem


def test_command_that_closes_its_output_and_runs_on_is_waited_for(tmp_path: Path) -> None:
    cmd = script(tmp_path, "scontrol", """
        sys.stdout.write("early\\n"); sys.stdout.flush()
        os.close(1); os.close(2)
        time.sleep(0.5)
        sys.exit(3)
    """)
    result = slurm.SubprocessRunner(timeout=5)([str(cmd)])
    assert (result.returncode, result.stdout, result.timed_out) == (3, "early\n", False)


@pytest.mark.parametrize("text", ["cn[a-b]", "cn[3-1]", "cn[", "cn]", "cn[1-2", "[]", "cn[²]", "cn[" + "9" * 5000 + "]", ",,,", ""])
def test_hostlists_that_are_not_ranges_never_raise(text: str) -> None:
    slurm.expand_hostlist(text)
    assert slurm.hostlist_contains(text, "cn1") is False


def test_huge_ranges_are_not_expanded() -> None:
    assert slurm.hostlist_contains("cn[0-99999999999]", "cn123456789")
    assert len(slurm.expand_hostlist("cn[0-99999999999]")) == slurm.MAX_IDS
    assert len(slurm.id_list("0-99999999999")) == slurm.MAX_IDS
    assert slurm.mem_bytes("9" * 400) is None


def test_scope_from_hostile_reply_is_problem_lines(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    reply = RECORD.replace("NumCPUs=2", "NumCPUs=²") + "   TRES=cpu=2,mem=" + "9" * 400 + "\n"
    job = scope.resolve_scope(job="5", root=tmp_path, env={}, runner=lambda argv: slurm.CommandResult(0, reply, "") if "show" in argv else slurm.CommandResult(0, "", ""))
    assert job.kind == "job" and job.cpus_allocated == 2  # from CPU_IDs
    assert any("runs on cn[a-b], not on this node" in p for p in job.problems)


def test_scope_survives_a_runner_that_raises(tmp_path: Path) -> None:
    def broken(argv: object) -> slurm.CommandResult:
        raise RuntimeError("unexpected")

    job = scope.resolve_scope(job="5", root=tmp_path, env={}, runner=broken)
    assert job.kind == "job" and job.job_id == "5"
    assert any("could not work out the job scope" in p and "unexpected" in p for p in job.problems)


def fake_path(tmp_path: Path, body: str) -> dict[str, str]:
    for name in ("scontrol", "sacct"):
        script(tmp_path / "bin", name, body)
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("reply", [
    RECORD.encode(),  # cn[a-b]
    RECORD.encode().replace(b"alice", b"al\xff\xfece"),  # not UTF-8
    RECORD.encode() + b"\x00\x01\x02" * 1000,  # binary tail
])
def test_watch_once_on_hostile_replies_prints_everything_else(tmp_path: Path, reply: bytes) -> None:
    env = fake_path(tmp_path, f"""
        if "show" in sys.argv:
            sys.stdout.buffer.write({reply!r})
    """)
    proc = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "watch", "--once", "--job", "5", "--format", "text", "--demo"],
                          capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0
    assert "job 5" in proc.stdout and "Host" in proc.stdout and "GPU" in proc.stdout
    assert "runs on cn[a-b], not on this node" in proc.stderr


async def test_watch_screen_on_a_hostile_reply_shows_host_and_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuscope.collectors.snapshot import SnapshotSource
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.watch.screen import WatchScreen
    from gpuscope.tui.screens.watch.job_panel import JobPanel

    reply = RECORD.encode().replace(b"alice", b"al\xff\xfece")
    monkeypatch.setenv("PATH", fake_path(tmp_path, f"""
        if "show" in sys.argv:
            sys.stdout.buffer.write({reply!r})
    """)["PATH"])
    source = SnapshotSource(job="5", demo="")
    app = GpuscopeApp(first_screen=lambda: WatchScreen(source, interval=None))
    try:
        async with app.run_test(size=(200, 50)) as pilot:
            screen = app.screen
            assert isinstance(screen, WatchScreen)
            done = screen.poll_now()
            assert done is not None
            await done.wait()
            await pilot.pause()
            text = "\n".join(s.text for s in app.screen._compositor.render_strips())
            assert "runs on cn[a-b]" in text  # the job panel's problem line
            assert "GPU" in text and "CPU" in text
            assert screen.query_one(JobPanel).display
    finally:
        source.close()
