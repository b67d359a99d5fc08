"""`gpuscope record` and `gpuscope report` as a user runs them (recordings in subprocesses, real collectors)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from gpuscope.parsers.recording import read as recording

GPUSCOPE = [sys.executable, "-m", "gpuscope.tui.cli.main"]
Cli = Callable[..., subprocess.CompletedProcess[str]]  # the gpuscope_cli fixture: reports and refusals need no process of their own


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*GPUSCOPE, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_record_demo_for_a_duration_then_report(tmp_path: Path, gpuscope_cli: Cli) -> None:
    out = tmp_path / "demo.gsrec"
    done = run("record", "--demo", "--duration", "2", "--interval", "0.5", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "recording to" in done.stderr and "every 0.5 s for 2 s" in done.stderr  # said at the start
    assert "--duration reached" in done.stderr and "samples in 1 batch written" in done.stderr
    rec = recording.read(out)
    assert 4 <= rec.samples <= 6 and rec.complete and rec.snapshot(0).gpus[0].simulated
    text = gpuscope_cli("report", "--recording", str(out), "--width", "160")
    assert text.returncode == 0 and "SIMULATED GPUs" in text.stdout and "Job efficiency per node" in text.stdout
    as_json = json.loads(gpuscope_cli("report", "--recording", str(out), "--format", "json").stdout)
    node = as_json["job_efficiency_per_node"][0]
    assert node["samples"] == rec.samples and node["cpu_efficiency"] is None  # a node view has no allocation: null, not 0
    assert "### Advice" in gpuscope_cli("report", "--recording", str(out), "--format", "markdown").stdout


def test_record_a_process_tree_until_it_ends(tmp_path: Path) -> None:
    out = tmp_path / "pid.gsrec"
    child = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"])
    try:
        # The child is not reaped meanwhile: on a busy machine it may be a zombie from the first sample on.
        done = run("record", "--pid", str(child.pid), "--interval", "0.5", "-o", str(out))
    finally:
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0
    assert done.returncode == 0, done.stderr
    assert "processes are gone" in done.stderr
    rec = recording.read(out)
    snaps = [rec.snapshot(i) for i in range(rec.samples)]
    rows = [next((p for p in s.processes if p.pid == child.pid), None) for s in snaps]
    assert any(r is not None for r in rows)
    # What the samples say the child used, against what the kernel recorded for its whole life
    # (never a share of a core: a busy machine gives it less).
    used = sum((r.cpu_percent or 0) / 100 * (s.host.timestamp - before.host.timestamp)
               for before, s, r in zip(snaps, snaps[1:], rows[1:]) if r is not None)
    kernel = usage.ru_utime + usage.ru_stime
    assert 0 <= used <= kernel * 1.1 + 0.05, (used, kernel)


def test_sigterm_closes_the_recording_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "term.gsrec"
    proc = subprocess.Popen([*GPUSCOPE, "record", "--demo", "--interval", "0.5", "-o", str(out)], stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while (not out.exists() or out.stat().st_size == 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped by SIGTERM" in err
    rec = recording.read(out)
    assert rec.complete and rec.samples >= 2  # the open batch was written on the way out


def test_bad_arguments_and_existing_files(tmp_path: Path, gpuscope_cli: Cli) -> None:
    out = tmp_path / "exists.gsrec"
    out.write_text("keep me")
    done = gpuscope_cli("record", "--demo", "--duration", "1", "-o", str(out))
    assert done.returncode == 2 and "never overwrites" in done.stderr and out.read_text() == "keep me"
    assert gpuscope_cli("record", "--interval", "0.1", "-o", str(tmp_path / "x")).returncode == 2
    assert gpuscope_cli("record", "--pid", "99999999", "-o", str(tmp_path / "y")).returncode == 2
    bad = gpuscope_cli("report", "--recording", str(out))
    assert bad.returncode == 1 and "not a gpuscope recording" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    done = run("record", "--demo", "--duration", "1", "-o", str(folder / "r.gsrec"))
    assert done.returncode == 2 and "cannot write here" in done.stderr


@pytest.mark.parametrize("scenario", ["nosuch", "missing.json", "bad.json", "empty.json"])
def test_a_bad_demo_scenario_is_one_message_and_no_file(tmp_path: Path, scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuscope.tui.cli.main import main

    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "empty.json").write_text("{}")
    demo = scenario if scenario == "nosuch" else str(tmp_path / scenario)
    out = tmp_path / "x.gsrec"
    assert main(["record", "--demo", demo, "--duration", "1", "-o", str(out)]) == 2
    assert main(["watch", "--demo", demo, "--once"]) == 2
    err = capsys.readouterr().err
    assert err.count("gpuscope: ") == 2 and "Traceback" not in err and not out.exists()
