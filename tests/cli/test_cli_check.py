"""`gpuscope check DIR [--expected FILE]`: expected ranges checked, exit 0 / 1 / 2."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpuscope.tui.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "expected"
EXAMPLES = ROOT / "examples"
SPECMOE = ROOT.parent / "shared" / "data" / "specmoe"
GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_all_pass_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, str(FIXTURE), "--width", "200")
    assert code == 0, out + err
    assert "8xA100 speedup ~4-6x" in out and "5.72 x" in out and "36 %" in out and "4 pass" in out
    assert "FAIL" not in out and err == ""


def test_a_failing_range_exits_1_and_names_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, str(FIXTURE), "--expected", str(FIXTURE / "failing.toml"), "--width", "200")
    assert code == 1
    assert "FAIL" in out and "1 of 1 outside: row 4" in out
    assert "not a number: row 2 (empty)" in out and "no file matched" in out


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown", "text"])
def test_formats(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, _ = check(capsys, str(FIXTURE), "--expected", str(FIXTURE / "failing.toml"), "--format", fmt)
    assert code == 1
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [r["status"] for r in rows] == ["FAIL", "n/a", "n/a"]
        assert rows[0]["file"] == "data/all_systems_comparison.csv" and rows[0]["range"] == "4 … 6"
    elif fmt == "json":
        records = json.loads(out)
        assert [r["status"] for r in records] == ["FAIL", "n/a", "n/a"] and records[2]["value"] is None
    elif fmt == "markdown":
        assert "| # | check |" in out and "| FAIL |" in out
    else:
        assert "Expected ranges" in out and "1 FAIL, 2 n/a" in out


def test_output_file_takes_its_format_from_the_extension(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "checks.csv"
    code, out, err = check(capsys, str(FIXTURE), "-o", str(target))
    assert code == 0 and out == "" and "wrote" in err
    assert [r["status"] for r in csv.DictReader(io.StringIO(target.read_text()))] == ["pass"] * 4


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = check(capsys, str(tmp_path / "absent"))
    assert code == 2 and "no such folder" in err
    code, _, err = check(capsys, str(tmp_path))
    assert code == 2 and "expected.toml" in err and "no checks to run" in err
    (tmp_path / "expected.toml").write_text('[[check]]\nfile = "a.csv"\ncolumn =\n')
    code, _, err = check(capsys, str(tmp_path))
    assert code == 2 and "expected.toml:3: not valid TOML" in err
    with pytest.raises(SystemExit) as exc:
        main(["check"])
    assert exc.value.code == 2


def test_a_left_out_check_exits_2_after_printing_the_rest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copytree(FIXTURE / "data", tmp_path / "data")
    text = (FIXTURE / "expected.toml").read_text() + '\n[[check]]\nfile = "*.csv"\ncolumn = "speedup"\nrange = [6, 4]\n'
    (tmp_path / "expected.toml").write_text(text)
    code, out, err = check(capsys, str(tmp_path))
    assert code == 2 and "4 pass" in out
    assert "check 5 left out: range low end 6 is above its high end 4" in err and "expected.toml:" in err


def test_parquet_and_unreadable_tables(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frame = pd.DataFrame({"system": ["8xA100", "4xH100"], "speedup": [5.7, 3.4]})
    frame.to_parquet(tmp_path / "speed.parquet")
    (tmp_path / "broken.json").write_text("{not json")
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "expected.toml").write_text('[[check]]\nfile = "*.*"\nwhere = { system = "8xA100" }\ncolumn = "speedup"\nrange = [5, 6]\n')
    code, out, _ = check(capsys, str(tmp_path), "--format", "csv")
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO(out))}
    assert code == 1
    assert {f: r["status"] for f, r in rows.items()} == {"broken.json": "n/a", "pipe.json": "n/a", "speed.parquet": "pass"}
    assert "JSON" in rows["broken.json"]["why"] and "FIFO" in rows["pipe.json"]["why"]


def test_the_gpuscope_command(tmp_path: Path) -> None:
    out = subprocess.run([GPUSCOPE, "check", str(FIXTURE), "--expected", str(FIXTURE / "failing.toml"), "--format", "csv"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and out.stdout.startswith("check,name,file,") and "Traceback" not in out.stderr


def test_examples_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, str(EXAMPLES), "--format", "csv")
    assert code == 0, out + err
    assert {r["status"] for r in csv.DictReader(io.StringIO(out))} == {"pass"}


@pytest.mark.skipif(not SPECMOE.is_dir(), reason="../shared/data/specmoe is absent")
def test_real_specmoe_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copytree(SPECMOE, tmp_path / "specmoe")
    (tmp_path / "specmoe" / "expected.toml").write_text(
        '[[check]]\nname = "Oracle speedup over 15x"\nfile = "research_paper_table.csv"\nwhere = { Strategy = "Oracle" }\n'
        'column = "Speedup"\nrange = [15, 16]\n\n'
        '[[check]]\nname = "batch-1 mean latency under 200 ms"\nfile = "evalSwitchB8/results/research_paper_table.csv"\n'
        'where = { "Batch Size" = 1 }\ncolumn = "Mean Latency (ms)"\nmax = 200\n\n'
        '[[check]]\nfile = "*comprehensive_summary.csv"\nwhere = { strategy = "A" }\ncolumn = "cache_hit_rate_mean"\nrange = [0, 1]\n'
    )
    code, out, _ = check(capsys, str(tmp_path / "specmoe"), "--format", "json")
    assert code == 1
    records = json.loads(out)
    by_name = {(r["name"], r["file"]): r for r in records}
    oracle = by_name[("Oracle speedup over 15x", "evalSwitchB8/results/research_paper_table.csv")]
    assert oracle["status"] == "pass" and oracle["value"] == "15.85 x (5 cells)"
    latency = by_name[("batch-1 mean latency under 200 ms", "evalSwitchB8/results/research_paper_table.csv")]
    assert latency["status"] == "FAIL" and latency["why"] == "3 of 5 outside: rows 3, 4, 5"
    hits = [r for r in records if r["column"] == "cache_hit_rate_mean"]
    assert {r["file"] for r in hits} == {"evalQwenB8/results/qwen_comprehensive_summary.csv", "evalSwitchB8/results/comprehensive_summary.csv"}
    assert all(r["status"] == "pass" for r in hits)


def test_hostile_expected_file_and_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "expected.toml")  # never opened for reading: no hang
    code, _, err = check(capsys, str(tmp_path))
    assert code == 2 and "FIFO" in err
    (tmp_path / "expected.toml").unlink()
    (tmp_path / "expected.toml").write_text('[[check]]\nfile = "*.csv"\ncolumn = "a"\nmax = 1\n')
    (tmp_path / "x\x1b]0;evil\x07.csv").write_text("a\n5\n")
    code, out, _ = check(capsys, str(tmp_path))
    assert code == 1 and "\x1b" not in out and "\x07" not in out and "FAIL" in out
