"""Usage errors and help texts: a mistyped command or choice names the closest one, -o with an
extension that names no format is refused before any work, and every --help prints `%` once."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.tui.cli.main import build_parser

COMMANDS = ("magma", "kernels", "scaling", "check", "browse", "record", "collect", "report", "replay", "watch", "diff")


def test_a_mistyped_command_gets_did_you_mean(gpuscope_cli) -> None:
    done = gpuscope_cli("mgma", "examples/magma")
    assert done.returncode == 2
    assert "invalid choice: 'mgma', did you mean 'magma'?" in done.stderr


def test_a_mistyped_choice_gets_did_you_mean(gpuscope_cli) -> None:
    done = gpuscope_cli("check", "examples", "--format", "jsn")
    assert done.returncode == 2 and "did you mean 'json'?" in done.stderr


def test_nothing_close_lists_the_choices_only(gpuscope_cli) -> None:
    done = gpuscope_cli("zzzz")
    assert done.returncode == 2
    assert "did you mean" not in done.stderr and "(choose from 'magma'" in done.stderr


def test_the_command_list_matches_the_parser() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


@pytest.mark.parametrize("command", ("", *COMMANDS))
def test_help_prints_percent_once(command: str, gpuscope_cli) -> None:
    done = gpuscope_cli(*([command] if command else []), "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:")
    assert "%%" not in done.stdout


def test_the_percent_signs_meant_are_printed(gpuscope_cli) -> None:
    assert "75 % line" in " ".join(gpuscope_cli("scaling", "--help").stdout.split())
    assert "'45%'" in gpuscope_cli("check", "--help").stdout


@pytest.mark.parametrize("name", ("out.xlsx", "out.XLSX", "report.pdf"))
def test_o_with_an_unknown_extension_exits_2_listing_the_formats(tmp_path: Path, name: str, gpuscope_cli) -> None:
    target = tmp_path / name
    done = gpuscope_cli("check", "examples", "-o", target)
    assert done.returncode == 2 and not target.exists()
    for listed in ("text (.txt)", "markdown (.md", "csv (.csv)", "json (.json)", "--format"):
        assert listed in done.stderr


def test_report_writes_one_table_as_csv(tmp_path: Path, gpuscope_cli) -> None:
    done = gpuscope_cli("report", "--recording", "examples/recording/demo.gsrec", "-o", tmp_path / "r.csv")
    assert done.returncode == 0 and (tmp_path / "r.csv").read_text().startswith("node,samples,")  # the default: the nodes table
    done = gpuscope_cli("report", "--recording", "examples/recording/demo.gsrec", "-o", tmp_path / "e.csv", "--table", "energy")
    assert done.returncode == 0 and (tmp_path / "e.csv").read_text().startswith("node,gpu,what,energy_kwh,")


def test_format_wins_over_the_extension_and_no_extension_is_text(tmp_path: Path, gpuscope_cli) -> None:
    given = gpuscope_cli("browse", "examples/recording", "-o", tmp_path / "list.xlsx", "--format", "csv")
    assert given.returncode == 0 and (tmp_path / "list.xlsx").read_text().startswith("path,")
    plain = gpuscope_cli("browse", "examples/recording", "-o", tmp_path / "listing")
    assert plain.returncode == 0 and not (tmp_path / "listing").read_text().startswith("path,")
