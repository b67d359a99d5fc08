"""QuietLinuxDriver in a real pseudo-terminal: asleep while idle, Escape and quit as before."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pty and termios")

APP = r'''
import sys
from textual.app import App
from textual.widgets import Static
from gpuscope.tui.quiet_driver import QuietLinuxDriver

LOG = open(sys.argv[1], "a", buffering=1)

class Probe(App):
    def compose(self):
        yield Static("probe")
    def on_mount(self):
        self.set_timer(0.3, lambda: LOG.write(f"ready {self._driver.wakeups}\n"))
    def on_key(self, event):
        LOG.write(f"{event.key} {self._driver.wakeups}\n")
        if event.key == "q":
            self.exit()

Probe(driver_class=QuietLinuxDriver).run()
LOG.write("exited\n")
'''


def wait_for(path: Path, text: str, timeout: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if any(line.startswith(text) for line in lines):
            return lines
        time.sleep(0.02)
    raise AssertionError(f"no {text!r} in {path.read_text() if path.exists() else '(no file)'}")


def test_idle_input_thread_sleeps_and_keys_escape_and_quit_still_work(tmp_path: Path) -> None:
    import pty
    import subprocess

    log = tmp_path / "log"
    script = tmp_path / "probe.py"
    script.write_text(APP)
    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, str(script), str(log)], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    # Drain the screen output, or the child blocks once the pty buffer is full.
    drain = threading.Thread(target=lambda: _drain(master), daemon=True)
    drain.start()
    try:
        wait_for(log, "ready")
        woke = int(wait_for(log, "ready")[-1].split()[1])
        time.sleep(1.0)  # idle: Textual's own driver wakes ten times in this second
        os.write(master, b"x")
        line = wait_for(log, "x")[-1]
        assert int(line.split()[1]) - woke <= 3, line
        os.write(master, b"\x1b")  # a lone Escape: only the parser's timeout tick delivers it
        wait_for(log, "escape", timeout=3)
        start = time.monotonic()
        os.write(master, b"q")
        wait_for(log, "exited", timeout=5)
        child.wait(timeout=5)
        assert time.monotonic() - start < 1.5  # the wake pipe ends the input thread at once
        assert child.returncode == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
