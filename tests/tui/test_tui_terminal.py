"""The screens and their terminal: without one they do not start (stdin) or print text instead
(stdout), and when it goes away without SIGHUP they exit instead of spinning. Real `gpuscope`
processes, in pseudo-terminals where a terminal is needed; each is killed in a `finally`."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pty and termios")

ROOT = Path(__file__).resolve().parents[2]
GPUSCOPE = [sys.executable, "-m", "gpuscope.tui.cli.main"]
MAGMA = str(ROOT / "examples" / "magma")
KERNELS = str(ROOT / "tests" / "data" / "kernels")
ENV = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}


def _drain(fd: int, into: list[bytes], stop: threading.Event | None = None) -> None:
    """Read the pty master until EOF, or until `stop` is set. A thread blocked in read() keeps
    the master open after os.close() until data arrives, so a quiet screen would never see its
    terminal go away: the test stops this thread before it closes the master."""
    try:
        while stop is None or not stop.is_set():
            if select.select([fd], [], [], 0.05)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                into.append(chunk)
    except OSError:
        pass


def _wait(pid: int, timeout: float) -> tuple[int | None, float]:
    """(exit status or None on timeout, CPU seconds the child used). `timeout` only stops a hang:
    with every core busy a start-up can take tens of seconds; how quick it is, is its CPU time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime
        time.sleep(0.05)
    return None, 0.0


def _run_with_pty_stdout(args: list[str], stdin: int | None) -> tuple[int | None, float, str]:
    """Run gpuscope with stdout on a pty (a terminal) and stdin as given; (status, CPU s, stderr)."""
    import pty

    master, slave = pty.openpty()
    out: list[bytes] = []
    drain = threading.Thread(target=_drain, args=(master, out), daemon=True)
    child = subprocess.Popen([*GPUSCOPE, *args], stdin=stdin, stdout=slave, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
    os.close(slave)
    drain.start()
    try:
        code, cpu = _wait(child.pid, 120)
        err = child.stderr.read().decode() if code is not None and child.stderr else ""
        return code, cpu, err
    finally:
        if code is None:
            child.kill()
            os.waitpid(child.pid, 0)
        child.returncode = code if code is not None else -9  # reaped by os.wait4 above
        if child.stderr:
            child.stderr.close()
        os.close(master)


@pytest.mark.parametrize("args", [["watch", "--demo"], ["magma", MAGMA], ["kernels", KERNELS]])
def test_stdin_at_eof_refuses_quickly_with_a_message(args: list[str]) -> None:
    with open(os.devnull, "rb") as null:
        code, cpu, err = _run_with_pty_stdout(args, null.fileno())
    assert code == 2, (code, err)
    assert "needs a terminal" in err and "stdin" in err and ("--once" in err if args[0] == "watch" else "--format" in err)
    assert cpu < 5.0  # startup only, no spinning


def test_watch_with_stdout_not_a_terminal_prints_one_snapshot(tmp_path: Path) -> None:
    target = tmp_path / "snapshot.txt"
    with open(target, "wb") as out, open(os.devnull, "rb") as null:
        child = subprocess.Popen([*GPUSCOPE, "watch", "--demo"], stdin=null, stdout=out, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
        try:
            _, err = child.communicate(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert child.returncode == 0, err
    text = target.read_text()
    assert "\x1b" not in text  # no escape codes in the file
    assert "Scope" in text and "simulated" in text.lower()


@pytest.mark.parametrize(("args", "expect"), [(["magma", MAGMA], "dgemm"), (["kernels", KERNELS], "Kernels")])
def test_files_screens_with_stdout_not_a_terminal_print_text(args: list[str], expect: str) -> None:
    with open(os.devnull, "rb") as null:
        done = subprocess.run([*GPUSCOPE, *args], stdin=null, capture_output=True, env=ENV, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and expect.encode() in done.stdout


@pytest.mark.parametrize("args", [["watch", "--demo"], ["magma", MAGMA]])
def test_screen_exits_when_its_terminal_goes_away(args: list[str], tmp_path: Path) -> None:
    """The terminal closes without SIGHUP (the pty is not the child's controlling terminal):
    stdin hangs up, and the screen must exit within a few seconds, not spin."""
    import pty

    master, slave = pty.openpty()
    out: list[bytes] = []
    child = subprocess.Popen([*GPUSCOPE, *args], stdin=slave, stdout=slave, stderr=slave, env=ENV, cwd=ROOT)
    os.close(slave)
    stop = threading.Event()
    drain = threading.Thread(target=_drain, args=(master, out, stop), daemon=True)
    drain.start()
    code: int | None = None
    try:
        deadline = time.monotonic() + 120  # a hang guard: a busy machine starts it slowly
        while time.monotonic() < deadline and b"\x1b[?1049h" not in b"".join(out):  # the screen is up
            time.sleep(0.05)
        time.sleep(1.0)
        assert child.poll() is None, b"".join(out)[-2000:]
        stop.set()
        drain.join(5)
        os.close(master)
        master = -1
        code, cpu = _wait(child.pid, 60)  # a liveness bound: it must notice the terminal went away
        assert code is not None, "still running 60 s after its terminal went away"
    finally:
        if code is None and child.poll() is None:
            child.kill()
            child.wait()
        else:
            child.returncode = code
        if master >= 0:
            os.close(master)
