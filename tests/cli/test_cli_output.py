"""Where the command line writes: -o never replaces an input (the same file, a hard or symbolic
link to it, a file inside an input folder), for every command that takes -o; and a failed write
on standard output (a full disk, a closed pipe) is one line and exit 1, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.tui.cli.main import main
from gpuscope.tui.cli.checks import overwritten_input

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MAGMA_FILE = next(iter(sorted((EXAMPLES / "magma").rglob("*.out"))), None)
SCENARIO = ROOT / "collectors" / "scenarios" / "one-gpu-idle.json"
GPUSCOPE = [sys.executable, "-m", "gpuscope.tui.cli.main"]

needs_examples = pytest.mark.skipif(MAGMA_FILE is None, reason="examples/magma has no MAGMA output")


def run(*args: str, stdout: object = subprocess.PIPE, unbuffered: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PYTHONUNBUFFERED")}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run([*GPUSCOPE, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=env)


def copy(source: Path, target: Path) -> Path:
    """A copy of a real input, so a test that fails cannot damage the committed example."""
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


@needs_examples
def test_magma_output_onto_its_input_is_refused_and_the_input_kept(tmp_path: Path, gpuscope_cli) -> None:
    """The reported case: `gpuscope magma in.txt -o in.txt` replaced the MAGMA output with the report."""
    given = copy(MAGMA_FILE, tmp_path / "in.txt")  # type: ignore[arg-type]
    before = given.read_bytes()
    done = gpuscope_cli("magma", given, "-o", given)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"gpuscope: -o {given} is the input {given}: writing would replace it; choose another file"
    assert given.read_bytes() == before


@needs_examples
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_link_to_the_input_is_the_input(tmp_path: Path, link: str, capsys: pytest.CaptureFixture[str]) -> None:
    given = copy(MAGMA_FILE, tmp_path / "run.out")  # type: ignore[arg-type]
    before = given.read_bytes()
    alias = tmp_path / "alias.txt"
    (os.symlink if link == "symlink" else os.link)(given, alias)
    assert main(["magma", str(given), "-o", str(alias)]) == 2
    assert f"is the input {given}" in capsys.readouterr().err
    assert given.read_bytes() == before


@needs_examples
def test_a_file_inside_an_input_folder_is_refused_even_through_a_hard_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy(EXAMPLES / "magma", tmp_path / "magma")
    inside = next(iter(sorted(folder.rglob("*.out"))))
    before = inside.read_bytes()
    outside = tmp_path / "report.txt"
    os.link(inside, outside)  # the same file, named from outside the folder
    for target in (inside, outside):
        assert main(["magma", str(folder), "-o", str(target)]) == 2
        assert f"inside the input folder {folder}" in capsys.readouterr().err
    assert inside.read_bytes() == before


@needs_examples
def test_new_files_and_devices_are_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing is refused that loses nothing: a new file (inside the input folder too) or /dev/null."""
    folder = copy(EXAMPLES / "magma", tmp_path / "magma")
    for target in (tmp_path / "summary.csv", folder / "summary.csv", Path(os.devnull)):
        assert main(["magma", str(folder), "-o", str(target)]) == 0, capsys.readouterr().err
    assert (folder / "summary.csv").read_text().startswith("test,")


def _cases(tmp: Path) -> list[tuple[list[str], Path]]:
    """(argv, the input -o names) for every other command that takes -o, on real inputs."""
    profile = copy(EXAMPLES / "profiles" / "ncu_long_2022.csv", tmp / "ncu.csv")
    markers = tmp / "markers_ncu.csv"
    markers.write_text("name_str,timestamp\nstep,1\n")
    scaling = copy(EXAMPLES / "scaling", tmp / "scaling")
    scaling_log = scaling / "workers-1" / "run-1.log"
    check = copy(EXAMPLES / "specmoe", tmp / "specmoe")
    (check / "expected.toml").write_text('[[check]]\nfile = "*.csv"\ncolumn = "Speedup"\nmin = 1\n')
    recording = copy(EXAMPLES / "recording" / "demo.gsrec", tmp / "demo.gsrec")
    scenario = copy(SCENARIO, tmp / "scenario.json")
    return [
        (["kernels", str(profile)], profile),
        (["kernels", str(profile), "--markers", str(markers)], markers),
        (["scaling", str(scaling_log)], scaling_log),
        (["scaling", str(scaling)], scaling / "workers-2" / "run-1.log"),
        (["check", str(check)], check / "expected.toml"),
        (["report", "--recording", str(recording)], recording),
        (["watch", "--once", "--demo", str(scenario)], scenario),
        (["browse", str(scenario)], scenario),
        (["record", "--demo", str(scenario), "--duration", "1"], scenario),
    ]


def test_every_command_with_o_refuses_its_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, target in _cases(tmp_path):
        before = target.read_bytes()
        assert main([*argv, "-o", str(target)]) == 2, argv
        err = capsys.readouterr().err
        assert f"-o {target} is " in err and "Traceback" not in err, (argv, err)
        assert target.read_bytes() == before, argv


def test_browse_writes_its_listing_into_the_folder_it_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The listing reads only the head of each file: writing it beside them is its normal use."""
    folder = copy(EXAMPLES / "scaling", tmp_path / "scaling")
    listing = folder / "listing.txt"
    listing.write_text("old listing\n")
    assert main(["browse", str(folder), "-o", str(listing)]) == 0, capsys.readouterr().err
    assert "run-1.log" in listing.read_text()


def test_overwritten_input_follows_links_both_ways(tmp_path: Path) -> None:
    """A symlink inside an input folder to a file outside it makes that file an input too."""
    folder = tmp_path / "logs"
    folder.mkdir()
    outside = tmp_path / "real.log"
    outside.write_text("x\n")
    (folder / "link.log").symlink_to(outside)
    assert overwritten_input(str(outside), [str(folder)]) is not None
    assert overwritten_input(str(tmp_path / "absent.txt"), [str(folder), str(outside)]) is None
    assert overwritten_input(os.devnull, [os.devnull]) is None  # a device keeps nothing
    assert overwritten_input(str(outside), [str(tmp_path / "absent")]) is None


# ---------------------------------------------------------------- writing to standard output


def _one_stdout_line(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if "standard output" in line]
    assert len(said) == 1 and said[0].startswith("gpuscope: cannot write to standard output: "), done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [
    ["magma", str(EXAMPLES / "magma")],
    ["scaling", str(EXAMPLES / "scaling")],
    ["kernels", str(EXAMPLES / "profiles" / "ncu_long_2022.csv")],
    ["report", "--recording", str(EXAMPLES / "recording" / "demo.gsrec")],
    ["watch", "--once", "--demo"],
    ["browse", str(EXAMPLES / "scaling"), "--format", "text"],
    ["collect", "--stream", "--demo", "--count", "1", "--interval", "0.5"],
    ["--help"],
    ["--version"],
])
def test_a_full_disk_on_stdout_is_one_line_and_exit_1(argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        _one_stdout_line(run(*argv, stdout=full))


@pytest.mark.parametrize("argv", [
    ["magma", str(EXAMPLES / "magma"), "--table", "rows", "--format", "csv"],
    ["scaling", str(EXAMPLES / "scaling")],
    ["--help"],
])
def test_a_closed_pipe_is_one_line_and_exit_1(argv: list[str]) -> None:
    """`gpuscope ... | head -1` once head has gone: a pipe whose reading end is closed before
    gpuscope writes (closing it first, not racing a real head, makes the failure certain)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        _one_stdout_line(run(*argv, stdout=write_end))
    finally:
        os.close(write_end)


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
def test_a_reader_that_goes_mid_output_is_said(unbuffered: bool) -> None:
    """A real `| head -c 100`: the reader goes while gpuscope is blocked writing 1.2 MB into a
    64 KB pipe. Unbuffered, the write then takes only part of the bytes without an error: the
    rest must still be tried, so the loss is said, never an exit 0 with the output cut."""
    argv = [*GPUSCOPE, "magma", str(EXAMPLES / "magma"), "--table", "rows"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | ({"PYTHONUNBUFFERED": "1"} if unbuffered else {})
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    assert child.stdout is not None and child.stdout.read(100)
    child.stdout.close()
    _, err = child.communicate(timeout=120)
    _one_stdout_line(subprocess.CompletedProcess(argv, child.returncode, "", err.decode()))
