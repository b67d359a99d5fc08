"""A `--job`, `--pid` or `--user` that does not exist is a usage error (exit 2, as
`htop -u nosuchuser`), before any reading is printed or the screen opens: not a green
"peak memory 0 B" tick on an empty scope."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from gpuscope.collectors import scope, slurm
from gpuscope.tui.cli import main as cli

NO_JOB = "slurm_load_jobs error: Invalid job id specified\n"


def fake_scontrol(folder: Path, stderr: str = NO_JOB, code: int = 1) -> dict[str, str]:
    folder.mkdir(exist_ok=True)
    script = folder / "scontrol"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write({stderr!r})\nsys.exit({code})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def unused_pid() -> int:
    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


Cli = Callable[..., subprocess.CompletedProcess[str]]  # the gpuscope_cli fixture: gpuscope run in this process


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_once_unknown_job_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpuscope_cli: Cli, fmt: str) -> None:
    monkeypatch.setenv("PATH", fake_scontrol(tmp_path)["PATH"])
    proc = gpuscope_cli("watch", "--once", "--job", "424242", "--format", fmt)
    assert proc.returncode == 2, proc.stderr
    assert "424242 does not exist" in proc.stderr and proc.stdout == ""


def test_once_unknown_pid_is_exit_2(gpuscope_cli: Cli) -> None:
    proc = gpuscope_cli("watch", "--once", "--pid", str(unused_pid()))
    assert proc.returncode == 2 and "no such process" in proc.stderr and proc.stdout == ""


def test_once_unknown_user_is_exit_2(gpuscope_cli: Cli) -> None:
    proc = gpuscope_cli("watch", "--once", "--user", "nosuchuser-gpuscope")
    assert proc.returncode == 2 and "no such user: nosuchuser-gpuscope" in proc.stderr and proc.stdout == ""


def test_once_existing_scopes_still_print(gpuscope_cli: Cli) -> None:
    me = gpuscope_cli("watch", "--once", "--pid", str(os.getpid()), "--format", "json")
    assert me.returncode == 0 and '"scope"' in me.stdout
    import pwd

    user = gpuscope_cli("watch", "--once", "--user", pwd.getpwuid(os.getuid()).pw_name, "--format", "json")
    assert user.returncode == 0


@pytest.fixture
def no_screen(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Opening the screen is recorded, not done."""
    from gpuscope.tui.app import GpuscopeApp

    opened: list[object] = []
    monkeypatch.setattr(GpuscopeApp, "run", lambda self, *a, **k: opened.append(self))
    return opened


@pytest.mark.parametrize("flag", ["--job", "--pid", "--user"])
def test_screen_is_not_opened_for_a_missing_scope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_screen: list[object], flag: str) -> None:
    monkeypatch.setenv("PATH", fake_scontrol(tmp_path)["PATH"])
    value = {"--job": "424242", "--pid": str(unused_pid()), "--user": "nosuchuser-gpuscope"}[flag]
    assert cli.main(["watch", flag, value]) == 2
    assert no_screen == []
    assert "gpuscope:" in capsys.readouterr().err


def test_screen_opens_for_an_existing_pid(no_screen: list[object]) -> None:
    assert cli.main(["watch", "--pid", str(os.getpid())]) == 0
    assert len(no_screen) == 1


def test_missing_answers(tmp_path: Path) -> None:
    (tmp_path / "proc" / "7").mkdir(parents=True)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("alice:x:1000:1000::/home/alice:/bin/sh\n")
    gone = lambda argv: slurm.CommandResult(1, "", NO_JOB)  # noqa: E731
    down = lambda argv: slurm.CommandResult(1, "", "slurm_load_jobs error: Unable to contact slurm controller\n")  # noqa: E731
    assert scope.missing(pid=7, root=tmp_path) is None
    assert scope.missing(pid=8, root=tmp_path) == "no such process: 8"
    assert scope.missing(user="alice", root=tmp_path) is None
    assert scope.missing(user="1234", root=tmp_path) is None  # a uid without a passwd line
    assert scope.missing(user="bob", root=tmp_path) == "no such user: bob"
    assert "does not exist" in (scope.missing(job="9", root=tmp_path, runner=gone) or "")
    assert "not a Slurm job id" in (scope.missing(job="9;rm", root=tmp_path, runner=gone) or "")
    assert scope.missing(job="9", root=tmp_path, runner=down) is None  # cannot tell: the scope says why
