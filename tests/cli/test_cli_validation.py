"""Command-line values that name nothing: each subcommand's --table takes only its own tables,
and --test / --nodes / --impl (magma) or --group-by / --gpu / --table (kernels) values that
match nothing say what exists and exit 2, without a traceback; option values that are no
number of their kind (a non-finite time, a width below 1) are usage errors before any work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.tui.cli.main import KERNEL_TABLES, MAGMA_TABLES, WATCH_TABLES, main

ROOT = Path(__file__).resolve().parents[2]
MAGMA = str(ROOT / "examples" / "magma")
KERNELS = str(ROOT / "tests" / "data" / "kernels")


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("command", "foreign"), [
    (["magma", MAGMA, "--format", "text"], "host"),
    (["magma", MAGMA, "--format", "csv"], "top"),
    (["watch", "--demo", "--once"], "comparison"),
    (["watch", "--demo", "--once"], "summary"),
    (["kernels", KERNELS, "--format", "text"], "host"),
])
def test_table_of_another_subcommand_is_a_usage_error(command: list[str], foreign: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error([*command, "--table", foreign], capsys)
    assert "invalid choice" in err and repr(foreign) in err


def test_each_subcommand_lists_its_own_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(MAGMA_TABLES) == {"summary", "comparison", "findings", "runs", "rows"}
    assert set(WATCH_TABLES) == {"scope", "verdicts", "gpus", "host", "top"}
    for command, tables in (("magma", MAGMA_TABLES), ("watch", WATCH_TABLES), ("kernels", KERNEL_TABLES)):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert "{" + ",".join(tables) + "}" in text


@pytest.mark.parametrize("table", ["scope", "verdicts", "gpus", "host", "top"])
def test_watch_table_prints_exactly_that_table(table: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--demo", "--once", "--format", "csv", "--table", table]) == 0
    out = capsys.readouterr().out
    headers = {"scope": "scope,job,", "verdicts": "severity,verdict", "host": "host,cores,"}
    if table in headers:
        assert out.splitlines()[0].startswith(headers[table])
    if table in ("scope", "host"):  # one row of numbers under their keys
        assert len(out.splitlines()) == 2


@pytest.mark.parametrize(("flag", "value", "present"), [
    ("--test", "nope", "dgemm"), ("--nodes", "999", "16"), ("--impl", "nope", "cublas"),
])
def test_magma_choices_that_match_nothing_list_what_exists(flag: str, value: str, present: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["magma", MAGMA, "--format", "text", flag, value]) == 2
    err = capsys.readouterr().err
    assert "matches nothing" in err and present in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "listed"), [
    (["--group-by", "nope"], "batch_size"),
    (["--gpu", "nope"], "H100"),
    (["--table", "grouped"], "--group-by"),
])
def test_kernels_choices_that_match_nothing_list_what_exists(args: list[str], listed: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kernels", KERNELS, "--format", "text", *args]) == 2
    err = capsys.readouterr().err
    assert listed in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "Infinity"])
@pytest.mark.parametrize("argv", [
    ["record", "--demo", "-o", "never.gsrec", "--duration"],
    ["record", "--demo", "-o", "never.gsrec", "--interval"],
    ["watch", "--demo", "--once", "--interval"],
    ["collect", "--stream", "--demo", "--interval"],
    ["report", "--recording", "x.gsrec", "--time-limit"],
    ["magma", MAGMA, "--format", "text", "--peak-gflops"],
    ["kernels", KERNELS, "--format", "text", "--peak-tflops"],
    ["kernels", KERNELS, "--format", "text", "--peak-gbs"],
])
def test_non_finite_numbers_are_usage_errors(argv: list[str], value: str, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _usage_error([*argv, value] if not value.startswith("-") else [*argv[:-1], f"{argv[-1]}={value}"], capsys)
    assert f"argument {argv[-1]}: must be a finite number, not {value!r}" in err
    assert not (tmp_path / "never.gsrec").exists()  # refused before the recording was made


def test_record_with_a_nan_duration_stops_at_once(tmp_path: Path) -> None:
    """`--duration nan` once recorded forever: no time is ever past NaN. The timeout only keeps a
    regression from hanging the suite; the exit status and the message are what is checked."""
    out = tmp_path / "nan.gsrec"
    done = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "record", "--demo", "--duration", "nan", "-o", str(out)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "--duration: must be a finite number, not 'nan'" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


@pytest.mark.parametrize("width", ["-1", "0", "wide"])
@pytest.mark.parametrize("argv", [
    ["magma", MAGMA, "--format", "text"],
    ["kernels", KERNELS, "--format", "text"],
    ["scaling", str(ROOT / "examples" / "scaling"), "--format", "text"],
    ["watch", "--demo", "--once"],
    ["check", str(ROOT / "examples")],
    ["browse", str(ROOT / "examples"), "--format", "text"],
    ["report", "--recording", str(ROOT / "examples" / "recording" / "demo.gsrec")],
])
def test_a_width_below_one_is_a_usage_error(argv: list[str], width: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error([*argv, f"--width={width}"], capsys)
    assert "argument --width: " in err
    assert ("must be 1 or more" if width != "wide" else "is not a whole number") in err


@pytest.mark.parametrize("width", ["1", "13", "14", "15", "30"])
def test_the_narrowest_width_still_prints(width: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["magma", MAGMA, "--format", "text", "--width", width]) == 0
    assert "MAGMA summary" in capsys.readouterr().out


@pytest.mark.parametrize("count", ["0", "-3"])
def test_collect_count_below_one_is_a_usage_error(count: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "must be 1 or more" in _usage_error(["collect", "--stream", "--demo", f"--count={count}"], capsys)
