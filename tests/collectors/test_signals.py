"""collectors/signals.py: which processes gpuscope may signal, as a user and as root, and
the checks against /proc right before `os.kill`. Real children (`sleep 60`) are the targets
that must receive a signal; each is killed by pid in a `finally`. Everything that must be
refused uses made-up rows, or a fake /proc tree, so nothing real is ever at risk."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from gpuscope.collectors import signals
from gpuscope.collectors.signals import Caller, refusal, send, typed_confirmation
from gpuscope.metrics.samples import JobScope, ProcessRow

ME = Caller(uid=os.getuid() + 1000, root=False)
"""A plain user, never root, whoever runs the tests."""
ROOT = Caller(uid=0, root=True)
NODE = JobScope(kind="node", label="node-a01")


def row(pid: int, *, ppid: int = 1000, uid: int = ME.uid, user: str = "alice", started: float = 100.0, command: str = "x") -> ProcessRow:
    return ProcessRow(pid, ppid, user, uid, "S", 0.0, 1024, 1, started, command)


def job(*pids: int) -> JobScope:
    return JobScope(kind="job", label="job 4242 (alice)", pids=frozenset(pids), job_id="4242", user="alice")


def test_pid_1_is_refused_even_to_root() -> None:
    for who in (ME, ROOT):
        for scope in (NODE, job(1)):
            reason = refusal(row(1, ppid=0, uid=who.uid), scope, who)
            assert reason is not None and "PID 1" in reason
    assert typed_confirmation(NODE, ROOT)


def test_kernel_threads_are_refused_by_parent_or_by_flag(tmp_path: Path) -> None:
    for pid, ppid in ((2, 0), (57, 2)):
        reason = refusal(row(pid, ppid=ppid, uid=0, user="root", command="kworker/u64:2"), NODE, ROOT)
        assert reason is not None and "kernel thread" in reason
    # A kernel thread whose parent the table got wrong: PF_KTHREAD in /proc/PID/stat says so.
    proc = tmp_path / "proc" / "4321"
    proc.mkdir(parents=True)
    (proc / "stat").write_text(f"4321 (odd thread) S 9 0 0 0 -1 {0x00208040} 0 0 0 0 0 0 0 0 20 0 1 0 {100 * os.sysconf('SC_CLK_TCK')} 0 0\n")
    outcome = send(row(4321, ppid=9, uid=os.stat(proc).st_uid, started=100.0), signal.SIGTERM, NODE, root=str(tmp_path), who=ROOT)
    assert not outcome.sent and "kernel thread" in outcome.message


def test_outside_the_watched_scope_is_refused_even_to_root() -> None:
    scope = job(1000, 1001)
    assert refusal(row(1001), scope, ME) is None
    for who in (ME, ROOT):
        reason = refusal(row(2000, uid=who.uid), scope, who)
        assert reason is not None and "outside the watched job 4242" in reason
    user_scope = JobScope(kind="user", label="user alice", pids=frozenset({1000}))
    assert "outside" in (refusal(row(1001), user_scope, ROOT) or "")


def test_other_users_refused_unless_root_and_root_types_the_pid_in_node_scope() -> None:
    bob = row(2000, uid=ME.uid + 1, user="bob")
    assert "not your process" in (refusal(bob, NODE, ME) or "")
    assert refusal(bob, NODE, ROOT) is None
    assert typed_confirmation(NODE, ROOT) and not typed_confirmation(NODE, ME)
    assert not typed_confirmation(job(2000), ROOT)  # the scope already narrows it


def test_a_gpu_process_from_another_pid_namespace_is_refused_even_to_root() -> None:
    unseen = row(4242, ppid=0, uid=-1, user="?", started=0.0, command="(not in /proc)")
    reason = refusal(unseen, NODE, ROOT)
    assert reason is not None and "another PID namespace" in reason


def test_never_process_groups_or_gpuscope_itself() -> None:
    for pid in (0, -1):
        outcome = send(row(pid), signal.SIGTERM, NODE, who=ROOT)
        assert not outcome.sent and "cannot be signalled" in outcome.message
    assert "gpuscope itself" in (refusal(row(os.getpid(), uid=ROOT.uid), NODE, ROOT) or "")


def test_only_the_offered_signals() -> None:
    outcome = send(row(12345), int(signal.SIGHUP), NODE, who=ME)
    assert not outcome.sent and "not one gpuscope sends" in outcome.message


def _child_row(child: subprocess.Popen[bytes]) -> ProcessRow:
    stat = signals.read_stat(child.pid)
    assert stat is not None
    return ProcessRow(child.pid, os.getpid(), "me", os.stat(f"/proc/{child.pid}").st_uid, "S", 0.0, 1024, 1, stat.started, "sleep 60")


def test_reused_pid_gone_pid_and_a_real_send() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        target = _child_row(child)
        me = Caller(target.uid, root=target.uid == 0)
        outcome = send(dataclasses.replace(target, started=target.started - 3600.0), signal.SIGTERM, NODE, who=me)
        assert not outcome.sent and "now another process" in outcome.message
        outcome = send(dataclasses.replace(target, uid=target.uid + 1), signal.SIGTERM, NODE, who=Caller(target.uid + 1, False))
        assert not outcome.sent and "owner changed" in outcome.message
        time.sleep(0.1)
        assert child.poll() is None
        outcome = send(target, signal.SIGTERM, job(target.pid), who=me)
        assert outcome.sent and outcome.message.startswith("Sent TERM") and child.wait(timeout=5) == -signal.SIGTERM
        outcome = send(target, signal.SIGTERM, NODE, who=me)
        assert not outcome.sent and "already exited" in outcome.message
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()


def test_the_dialog_module_sends_nothing_itself() -> None:
    """Signal delivery lives in collectors: the widgets never call os.kill."""
    source = (Path(__file__).resolve().parents[2] / "tui" / "screens" / "watch" / "dialogs.py").read_text()
    assert "os.kill" not in source


@pytest.mark.parametrize("pid", [1, 2])
def test_real_pid_1_and_kthreadd_never_reach_kill(pid: int, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(signals.os, "kill", lambda p, s: sent.append((p, s)))
    outcome = send(row(pid, ppid=0, uid=0, user="root"), signal.SIGTERM, NODE, who=ROOT)
    assert not outcome.sent and sent == []
