"""Command-line values that name nothing: each subcommand's --table takes only its own tables,
and --test / --nodes / --impl (magma) or --group-by / --gpu / --table (kernels) values that
match nothing say what exists and exit 2, without a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.tui.cli import KERNEL_TABLES, MAGMA_TABLES, WATCH_TABLES, main

ROOT = Path(__file__).resolve().parents[1]
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
    headers = {"scope": "item,value", "verdicts": "severity,verdict", "host": "item,value"}
    if table in headers:
        assert out.splitlines()[0] == headers[table]
    if table in ("scope", "host"):  # the same columns: told apart by their rows
        assert ("load 1/5/15" in out) == (table == "host")


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
