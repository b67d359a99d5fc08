"""Shared pytest fixtures."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from paths import EXAMPLES, SHARED_MAGMA

MAGMA_DATA_CANDIDATES = (EXAMPLES, SHARED_MAGMA / "experiments")

# pytest keeps each test module's assert-rewritten code in __pycache__ only where bytecode may be
# written. Under PYTHONDONTWRITEBYTECODE (set on this project's machines) every run, and every
# xdist worker of a run, would rewrite and compile all the test modules again: about 15 s of CPU
# a process. Set here, before pytest imports the test modules.
sys.dont_write_bytecode = False

# A test process holds a large heap (pandas, pyarrow, Textual, hypothesis, every test module),
# and each Pilot test makes and drops tens of thousands of widget and style objects. At CPython's
# default thresholds a full collection, which walks the whole heap, ran every few tests: a fifth
# of the screen tests' CPU. Full collections are let wait ten times longer (young collections
# stay as they are: raising those made the pandas-heavy tests slower); garbage cycles are still
# collected. Children the tests start are fresh interpreters with the defaults.
gc.set_threshold(700, 10, 100)

# A shell starts a background job with SIGINT ignored, and children inherit that: the tests'
# own `sleep` children would then outlive the INT the signal tests send them. Python's own
# handler is not inherited across exec, so children get the default action again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _stable_terminal_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR (set on some CI runners) changes every SVG snapshot and the Pilot colours."""
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture(autouse=True)
def _own_config_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The watch's setup (F2) and the theme read ~/.config/gpuscope/config.toml: tests must not
    read the developer's, nor write it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(autouse=True)
def _no_local_gpu_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels screen takes this machine's GPU as the peak when a profile names none; tests
    must not depend on whether the machine running them has a GPU (test_kernels_local_peak.py
    tests that path with a fake NVML)."""
    import gpuscope.collectors.nvml as nvml

    monkeypatch.setattr(nvml, "local_gpu_names", lambda: ())


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    """A sleeping process of the tests' own: what signals and renice may act on."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def magma_data() -> Path:
    """Real MAGMA outputs: the committed examples, else the shared data; skip when neither exists."""
    for folder in MAGMA_DATA_CANDIDATES:
        if folder.is_dir() and any(folder.rglob("*.out")):
            return folder
    pytest.skip("no MAGMA data: neither examples/magma nor ../shared/data/magma")


def _in_process(capture: Any) -> Callable[..., subprocess.CompletedProcess[Any]]:
    from gpuscope.tui.cli.main import main

    def run(*args: object) -> subprocess.CompletedProcess[Any]:
        argv = [str(a) for a in args]
        capture.readouterr()
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse: --help, --version, usage errors
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        out, err = capture.readouterr()
        return subprocess.CompletedProcess(["gpuscope", *argv], code, out, err)

    return run


@pytest.fixture
def gpuscope_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`gpuscope ARGS` run in this process (the console script is `main`): its exit code, stdout
    and stderr as a subprocess's would be, without a second of interpreter start-up. Tests that
    need a process of their own (signals, a terminal, what a fresh process imports) start one."""
    return _in_process(capsys)


@pytest.fixture
def gpuscope_cli_bytes(capsysbinary: pytest.CaptureFixture[bytes]) -> Callable[..., subprocess.CompletedProcess[bytes]]:
    """`gpuscope_cli` with stdout and stderr as the bytes written."""
    return _in_process(capsysbinary)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile gpuscope's modules once, before the workers start. Many tests run gpuscope in a
    subprocess, and where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) each
    would compile every module it imports again: about a quarter of a second each."""
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: the controller did it
        return
    import compileall

    root = Path(__file__).resolve().parents[1]
    for package in ("metrics", "parsers", "collectors", "tui"):
        try:
            compileall.compile_dir(root / package, quiet=2)
        except OSError:  # a read-only checkout: the subprocesses compile as they go
            return


def pytest_configure(config: pytest.Config) -> None:
    """xdist_group is pytest-xdist's; named here so a run without it (-p no:xdist) does not warn."""
    config.addinivalue_line("markers", "xdist_group(name): run these tests in one pytest-xdist worker")


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With pytest-xdist (`-n 3 --dist loadgroup`, the README's command), every test of the real
    Slurm cluster runs in one worker, so one cluster is started (it is session-scoped per worker)."""
    for item in items:
        if "slurm_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("slurm"))
