"""Outside text (file and folder names, scontrol's messages) never reaches the terminal raw.

Every place that shows or prints it is fed names holding OSC (retitles the terminal), CSI
(clears it) and 8-bit C1 sequences: the real CLI in a subprocess, whose stdout and stderr
bytes are checked, and the screens under Textual's Pilot, whose rendered output (the very
string the driver would write) is checked. The program's own SGR/cursor sequences are the
only escapes allowed on screen; none at all in text or JSON written to a pipe.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from textual.app import App, ComposeResult

from gpuscope.collectors import scope, slurm
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import AllocatedGpu, JobScope
from gpuscope.collectors.snapshot import SnapshotSource
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.screens.studies.magma import MagmaScreen
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.screens.watch.job_panel import JobPanel
from clean_asserts import RAW, assert_clean_bytes, assert_clean_screen
from loading_helpers import open_screen, polled

HOSTILE = ["\x1b]0;PWNED\x07", "\x1b[2J", "\x9b31m", "\x9d0;x\x9c"]
NAME = "bad" + "".join(HOSTILE) + "name"
RunCli = Callable[..., subprocess.CompletedProcess[bytes]]




@pytest.fixture
def run_cli(gpuscope_cli_bytes: RunCli, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """gpuscope in this process, its output as bytes, with `env` set for the call."""
    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        return gpuscope_cli_bytes(*args)

    return run


def check(proc: subprocess.CompletedProcess[bytes], what: str) -> None:
    assert_clean_bytes(proc.stdout, f"{what} stdout", payload="json" in what)
    assert_clean_bytes(proc.stderr, f"{what} stderr")


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """A folder and a file with hostile names; the file holds no results (so it is reported)."""
    folder = tmp_path / NAME / "size16"
    folder.mkdir(parents=True)
    (folder / f"{NAME}.txt").write_text("nothing here\n")
    (folder / f"{NAME}.nsys.json").write_text("{}\n")
    return tmp_path


# --- the CLI, its bytes -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_magma_print_path_names_are_clean(hostile_tree: Path, fmt: str, run_cli: RunCli) -> None:
    proc = run_cli("magma", hostile_tree, "--format", fmt)
    check(proc, f"magma --format {fmt}")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_kernels_print_path_names_are_clean(hostile_tree: Path, fmt: str, run_cli: RunCli) -> None:
    proc = run_cli("kernels", hostile_tree / NAME, "--format", fmt)
    assert proc.returncode == 1
    check(proc, f"kernels --format {fmt}")


@pytest.mark.parametrize("command", ["magma", "kernels"])
def test_missing_path_message_is_clean(tmp_path: Path, command: str, run_cli: RunCli) -> None:
    proc = run_cli(command, tmp_path / NAME)
    assert proc.returncode == 2 and b"no such file or folder" in proc.stderr
    check(proc, command)


def test_missing_markers_message_is_clean(hostile_tree: Path, run_cli: RunCli) -> None:
    proc = run_cli("kernels", hostile_tree, "--markers", hostile_tree / "nope" / NAME)
    assert proc.returncode == 2
    check(proc, "kernels --markers")


def test_output_file_messages_are_clean(hostile_tree: Path, run_cli: RunCli) -> None:
    failed = run_cli("magma", hostile_tree, "--format", "text", "-o", hostile_tree / "missing" / NAME / "out.txt")
    assert failed.returncode == 1 and b"cannot write" in failed.stderr
    check(failed, "-o into a missing folder")
    wrote = run_cli("magma", hostile_tree, "--format", "text", "-o", hostile_tree / f"{NAME}.txt")
    assert b"wrote" in wrote.stderr
    check(wrote, "-o")


def fake_scontrol(folder: Path, stdout: str = "", stderr: str = "", code: int = 1) -> dict[str, str]:
    """A `scontrol` (and `sacct`) first on PATH that prints the given text; the env to use."""
    folder.mkdir(exist_ok=True)
    for name in ("scontrol", "sacct"):
        script = folder / name
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_watch_once_scontrol_errors_are_clean(tmp_path: Path, fmt: str, run_cli: RunCli) -> None:
    env = fake_scontrol(tmp_path / "bin", stderr=f"scontrol: error: {NAME} went wrong\n")
    proc = run_cli("watch", "--once", "--job", "12345", "--format", fmt, env=env)
    assert b"went wrong" in proc.stderr + proc.stdout
    check(proc, f"watch --once --format {fmt}")


def test_watch_once_hostile_job_record_is_clean(tmp_path: Path, run_cli: RunCli) -> None:
    record = f"JobId=12345 JobName={NAME}\n   UserId={NAME}(1000) GroupId=g(1000)\n   JobState={NAME} Reason=None\n   NodeList=cn{NAME}\n"
    env = fake_scontrol(tmp_path / "bin", stdout=record, code=0)
    proc = run_cli("watch", "--once", "--job", "12345", "--format", "text", env=env)
    check(proc, "watch --once hostile record")


def test_watch_once_unknown_user_message_is_clean(run_cli: RunCli) -> None:
    proc = run_cli("watch", "--once", "--user", NAME)
    assert proc.returncode == 2
    check(proc, "watch --once --user")


# --- the screens, what they render --------------------------------------------------------





async def test_magma_screen_empty_folder_name_is_clean(tmp_path: Path) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    (folder / f"{NAME}.txt").write_text("nothing\n")
    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen([folder])), MagmaScreen, (200, 40)) as (app, pilot, screen):
        text = assert_clean_screen(app, "magma empty")
        assert "No MAGMA results found in" in text and "badname" in text.replace("?", "")
        assert "PWNED" not in (screen.sub_title or "") and "\x1b" not in (screen.sub_title or "")


async def test_magma_screen_load_failure_is_clean(tmp_path: Path) -> None:
    def fail() -> Any:
        raise ValueError(f"cannot read {NAME}")

    async with open_screen(GpuscopeApp(first_screen=lambda: MagmaScreen([tmp_path / NAME], loader=fail)), MagmaScreen, (200, 40)) as (app, pilot, _):
        text = assert_clean_screen(app, "magma failed")
        assert "Could not read" in text


async def test_kernels_screen_empty_is_clean(hostile_tree: Path) -> None:
    folder = hostile_tree / NAME
    async with open_screen(GpuscopeApp(first_screen=lambda: KernelsScreen([folder])), KernelsScreen, (200, 40)) as (app, pilot, screen):
        text = assert_clean_screen(app, "kernels empty")
        assert "No kernel launches found" in text
        assert "\x1b" not in (screen.sub_title or "")


async def test_kernels_screen_load_failure_is_clean(tmp_path: Path) -> None:
    def fail() -> Any:
        raise OSError(f"cannot read {NAME}")

    async with open_screen(GpuscopeApp(first_screen=lambda: KernelsScreen([tmp_path / NAME], loader=fail)), KernelsScreen, (200, 40)) as (app, pilot, _):
        assert "Could not read" in assert_clean_screen(app, "kernels failed")


HOSTILE_SCOPE = JobScope(
    kind="job", label=f"job 1 ({NAME})", job_id="1", user=NAME, cpus_allocated=2, memory_limit=1 << 30,
    gpus=(AllocatedGpu(0, None, NAME),), cgroup=f"/sys/fs/cgroup/{NAME}",
    evidence=(f"evidence {NAME}",), problems=(f"problem {NAME}",),
)


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield JobPanel()


def demo_source(job_scope: JobScope) -> SnapshotSource:
    """Simulated GPUs, this machine's host and processes, and `job_scope` as the scope."""
    source = SnapshotSource(demo="")
    source._scope = job_scope  # refreshed from files only from now on
    return source


async def poll(pilot: Any) -> WatchScreen:
    screen = pilot.app.screen
    assert isinstance(screen, WatchScreen)
    done = screen.poll_now()
    assert done is not None
    await done.wait()
    await pilot.pause()
    return screen


async def test_job_panel_shows_scope_texts_clean() -> None:
    source = demo_source(HOSTILE_SCOPE)
    snap = source.poll()
    source.close()
    app = PanelApp()
    async with app.run_test(size=(200, 20)) as pilot:
        app.query_one(JobPanel).show(snap, History(), ())
        await pilot.pause()
        text = assert_clean_screen(app, "job panel")
        assert "problem bad" in text and "evidence bad" in text


def _runner(out: str, err: str, code: int):
    return lambda argv: slurm.CommandResult(code, out, err)


@pytest.mark.parametrize(
    ("out", "err", "code"),
    [
        ("", f"scontrol: error: {NAME}\n", 1),
        (f"JobId=77 JobName=x\n   UserId={NAME}(1000) GroupId=g(1)\n   JobState={NAME}\n   NodeList=n{NAME}\n", "", 0),
    ],
)
async def test_watch_screen_scope_from_hostile_scontrol_is_clean(tmp_path: Path, out: str, err: str, code: int) -> None:
    (tmp_path / "proc").mkdir()
    job_scope = scope.resolve_scope(job="77", root=tmp_path, env={}, runner=_runner(out, err, code))
    for line in (job_scope.label, *job_scope.evidence, *job_scope.problems):
        assert not RAW.search(line) and "PWNED" not in line, line
    source = demo_source(job_scope)
    async with open_screen(GpuscopeApp(first_screen=lambda: WatchScreen(source, interval=None)), WatchScreen, (200, 50), ready=polled()) as (app, pilot, screen):
        assert_clean_screen(app, "watch")
        assert "\x1b" not in (screen.sub_title or "")
    source.close()
