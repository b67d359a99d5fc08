"""`gpuscope browse DIR --format text|csv|json`: every file below DIR with
its kind, why, a summary and any problem, printed for scripts; bad files are rows, never a crash."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from gpuscope.tui.cli.main import main
from gpuscope.tui.model.browse_listing import listing

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["browse", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run.log").write_text("start\nWARNING: slow\nERROR: failed\n")
    (tmp_path / "table.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "magma.out").write_text("% MAGMA 2.8.0  32-bit magma_int_t, 64-bit pointer.\n% Usage: ./testing_dgemm [options]\n")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "evil\x1b]0;owned\x07.txt").write_text("hello\n")
    return tmp_path


def test_csv_lists_every_file_with_kind_reason_summary_problem(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    code, out, _ = printed(capsys, str(folder), "--format", "csv")
    assert code == 0
    rows = {r["path"]: r for r in csv.DictReader(io.StringIO(out))}
    assert list(next(csv.reader(io.StringIO(out)))) == ["path", "kind", "reason", "summary", "problem"]
    assert rows["table.csv"]["kind"] == "csv" and "2 rows" in rows["table.csv"]["summary"]
    assert rows["magma.out"]["kind"] == "magma" and "banner on line 1" in rows["magma.out"]["reason"]
    assert rows["sub/run.log"]["kind"] == "log"
    assert rows["pipe"]["kind"] == "" and "FIFO" in rows["pipe"]["problem"]
    assert rows["loop"]["kind"] == "" and "loop" in rows["loop"]["problem"]
    assert "\x1b" not in out and "\x07" not in out


def test_json_is_a_list_of_records(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    code, out, _ = printed(capsys, str(folder), "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 6
    assert {r["path"] for r in records} >= {"table.csv", "magma.out", "sub/run.log", "pipe", "loop"}
    assert all(set(r) == {"path", "kind", "reason", "summary", "problem"} for r in records)
    assert next(r for r in records if r["path"] == "table.csv")["problem"] is None


def test_text_has_a_title_and_counts(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    code, out, _ = printed(capsys, str(folder), "--format", "text", "--width", "200")
    assert code == 0
    assert out.startswith("Files below ") and "6 file(s):" in out and "with a problem" in out
    assert "\x1b" not in out


def test_output_file_takes_the_format_from_its_name(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    target = tmp_path_factory.mktemp("out") / "listing.json"
    code, out, err = printed(capsys, str(folder), "-o", str(target))
    assert code == 0 and out == "" and "wrote" in err
    assert len(json.loads(target.read_text())) == 6


def test_without_format_and_no_screen_prints_text(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    # Until the browser screen exists (or when stdout is not a terminal) the listing is printed.
    code, out, _ = printed(capsys, str(folder))
    assert code == 0 and "Files below" in out


def test_missing_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = printed(capsys, str(tmp_path / "nope"), "--format", "text")
    assert code == 2 and "no such file or folder" in err


def test_a_single_file_lists_itself(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    code, out, _ = printed(capsys, str(folder / "table.csv"), "--format", "json")
    assert code == 0 and [r["kind"] for r in json.loads(out)] == ["csv"]


def test_examples_folder_every_file_recognised() -> None:
    table = listing(EXAMPLES)
    kinds = {row[0]: row[1] for row in table.rows}
    assert kinds, "examples/ is empty"
    assert not [path for path, kind in kinds.items() if kind is None], kinds
    assert not [row for row in table.rows if row[4] is not None]
