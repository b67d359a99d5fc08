"""collectors/signals.py's renice (the watch's F7/F8): your own processes only, even as root;
never PID 1, kernel threads, simulated or other users' processes; /proc checked again right
before `os.setpriority`; the kernel's refusal to raise a priority said with its reason. The
targets are children the tests start (`sleep 60`, killed by pid in a `finally`), and a forked
copy of the test process that renices itself; the nice value is read back from /proc/PID/stat.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time


from proc_nice import nice_in_stat

from gpuscope.collectors import signals
from gpuscope.collectors.signals import Caller, renice, renice_refusal
from gpuscope.collectors.simulated import SimulatedBackend
from gpuscope.metrics.samples import JobScope, ProcessRow

NODE = JobScope(kind="node", label="node-a01")
ME = Caller(os.getuid(), os.getuid() == 0)
NOBODY = 65534


def row_of(pid: int, uid: int | None = None, command: str = "sleep 60 (test child)") -> ProcessRow:
    stat = signals.read_stat(pid)
    assert stat is not None
    return ProcessRow(pid, stat.ppid, "tester", os.getuid() if uid is None else uid, "S", 0.0, 1024, 1, stat.started, command)


def test_f8_lowers_the_priority_of_your_own_process_one_step(child: subprocess.Popen[bytes]) -> None:
    assert nice_in_stat(child.pid) == 0
    outcome = renice(row_of(child.pid), 1, NODE, who=ME)
    assert outcome.sent and "nice 0 → 1" in outcome.message and "lower priority" in outcome.message
    assert nice_in_stat(child.pid) == 1
    assert renice(row_of(child.pid), 1, NODE, who=ME).sent
    assert nice_in_stat(child.pid) == 2


def test_the_lowest_priority_is_said_not_passed() -> None:
    process = subprocess.Popen(["nice", "-n", "19", "sleep", "60"])  # nice execs sleep: same pid
    try:
        for _ in range(3000):  # until the exec is done (the stat's comm says sleep); a hang guard, not a timing
            with open(f"/proc/{process.pid}/stat", "rb") as handle:
                if b"(sleep)" in handle.read():
                    break
            time.sleep(0.01)
        assert nice_in_stat(process.pid) == 19
        outcome = renice(row_of(process.pid), 1, NODE, who=ME)
        assert not outcome.sent and "already at the lowest priority (nice 19)" in outcome.message
        assert nice_in_stat(process.pid) == 19
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def test_raising_a_priority_as_a_plain_user_gives_the_kernels_reason() -> None:
    """A forked copy of this test process, as nobody when the tests run as root, renices
    itself one step up; the kernel refuses (no CAP_SYS_NICE, its RLIMIT_NICE set to 0) and
    gpuscope says why."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave, whatever happens
        try:
            os.close(read)
            if os.getuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            resource.setrlimit(resource.RLIMIT_NICE, (0, resource.getrlimit(resource.RLIMIT_NICE)[1]))
            own = row_of(os.getpid(), command="the forked test")
            outcome = signals.renice(own, -1, NODE)  # who: the real caller, a plain user now
            result = {"message": outcome.message, "sent": outcome.sent, "nice": nice_in_stat(os.getpid())}
        except BaseException as error:  # noqa: BLE001 - said to the parent, which fails
            result = {"error": repr(error)}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        result = json.loads(pipe.read() or b"{}")
    os.waitpid(pid, 0)
    assert "error" not in result, result
    assert not result["sent"] and result["nice"] == 0
    assert "kernel refused to raise" in result["message"] and "needs root or CAP_SYS_NICE" in result["message"]


def test_only_your_own_processes_even_as_root(child: subprocess.Popen[bytes]) -> None:
    theirs = row_of(child.pid, uid=os.getuid() + 1)
    for who in (Caller(os.getuid(), False), Caller(0, True) if os.getuid() != 0 else ME):
        reason = renice_refusal(theirs, NODE, who)
        assert reason is not None and "not your process" in reason and "renices your own" in reason
        outcome = renice(theirs, 1, NODE, who=who)
        assert not outcome.sent and outcome.message.endswith("Nothing changed.")
    assert nice_in_stat(child.pid) == 0


def test_init_kernel_threads_outside_the_scope_and_simulated_rows_are_refused(child: subprocess.Popen[bytes]) -> None:
    init = ProcessRow(1, 0, "root", ME.uid, "S", 0.0, 1024, 1, 0.0, "/sbin/init")
    kthread = ProcessRow(57, 2, "root", ME.uid, "S", 0.0, 0, 1, 0.0, "[kworker/u64:2]")
    backend = SimulatedBackend("a100x8-training", clock=lambda: 0.0)
    simulated = backend.process_rows(backend.sample())[0]
    job = JobScope(kind="job", label="job 4242", pids=frozenset({4242}), job_id="4242")
    cases = ((init, NODE, "PID 1 is init"), (kthread, NODE, "kernel thread"), (simulated, NODE, "simulated process (--demo)"),
             (row_of(child.pid), job, "outside the watched job 4242"))
    for row, scope, said in cases:
        reason = renice_refusal(row, scope, ME)
        assert reason is not None and said in reason, (row.pid, reason)
        assert not renice(row, 1, scope, who=ME).sent
    assert nice_in_stat(child.pid) == 0


def test_a_pid_that_became_another_process_or_exited_is_left_alone(child: subprocess.Popen[bytes]) -> None:
    listed = row_of(child.pid)
    reused = ProcessRow(*(getattr(listed, f) for f in ("pid", "ppid", "user", "uid", "state", "cpu_percent", "rss", "threads")),
                        listed.started - 3600.0, listed.command)
    outcome = renice(reused, 1, NODE, who=ME)
    assert not outcome.sent and "now another process" in outcome.message
    assert nice_in_stat(child.pid) == 0
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    outcome = renice(listed, 1, NODE, who=ME)
    assert not outcome.sent and "already exited" in outcome.message


def test_only_one_step_either_way(child: subprocess.Popen[bytes]) -> None:
    outcome = renice(row_of(child.pid), 5, NODE, who=ME)
    assert not outcome.sent and nice_in_stat(child.pid) == 0
