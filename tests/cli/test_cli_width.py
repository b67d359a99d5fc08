"""Text output fits --width (and the terminal): every command on the bundled examples prints no
line wider than the width; tables too wide are split into parts or lose low-value columns, each
said in a note, and a cell is cut only where its meaning survives (kernel names fold, command
lines end in …); other text wraps with every character kept."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import re

import pytest
from hypothesis import given, strategies as st
from rich.cells import cell_len

from gpuscope.metrics import export
from gpuscope.metrics.samples import ProcessRow
from gpuscope.metrics.snapshot_tables import htop_time, snapshot_dict, snapshot_tables
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.tui.cli import output
from fake_watch import FakeSource

COMMANDS = {
    "magma": ("magma", "examples/magma", "--exclude", "attempt-1"),
    "kernels": ("kernels", "examples/profiles", "--gpu", "A100"),
    "scaling": ("scaling", "examples/scaling"),
    "check": ("check", "examples"),
    "browse": ("browse", "examples"),
    "report": ("report", "--recording", "examples/recording/demo.gsrec"),
    "watch": ("watch", "--demo", "--once"),
}


@pytest.mark.parametrize("width", (80, 100, 200))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_fits_the_width(command: str, width: int, gpuscope_cli) -> None:
    done = gpuscope_cli(*COMMANDS[command], "--format", "text", "--width", width)
    assert done.returncode in (0, 1), done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 5
    too_wide = [line for line in lines if cell_len(line) > width]
    assert not too_wide, f"{len(too_wide)} lines over {width}: {too_wide[:3]}"


def test_a_table_too_wide_is_split_into_parts_that_repeat_its_keys(gpuscope_cli) -> None:
    out = gpuscope_cli(*COMMANDS["magma"], "--format", "text", "--width", "100", "--table", "summary").stdout
    assert "Too wide for 100 columns: shown in" in out and "each starting with #, test, size" in out
    assert "Left out to fit 100 columns: whisker lo, whisker hi (every column is in --format csv)" in out
    headers = [line.split() for line in out.splitlines() if line.split()[:3] == ["#", "test", "size"]]
    assert len(headers) >= 2  # each part starts with the row number and the keys
    assert sum("116" == line.split()[0] for line in out.splitlines() if line.strip()) == len(headers)  # every row in each part


def test_cells_wrap_whole_instead_of_being_cut(gpuscope_cli) -> None:
    out = gpuscope_cli(*COMMANDS["scaling"], "--format", "text", "--width", "80").stdout
    assert "folder name 'workers-1'" in out and "…" not in out.split("Speedup (")[0]
    runs = gpuscope_cli(*COMMANDS["magma"], "--format", "text", "--width", "80", "--table", "runs").stdout
    assert "…" not in runs and "magma-4n-53-" in runs  # long paths wrap after a '/' or '-'


def test_kernel_names_fold_their_templates(gpuscope_cli) -> None:
    out = gpuscope_cli(*COMMANDS["kernels"], "--format", "text", "--width", "80", "--table", "kernels").stdout
    assert "elementwise_kernel<…>(…)" in out


def test_natural_width_when_the_table_fits_or_no_width_applies() -> None:
    table = ResultTable("T", (Column("name"), Column("note")), (("a", "x " * 100),))
    assert export.table_lines(table) == export.table_lines(table, limit=1000)
    assert max(map(cell_len, export.table_lines(table))) > 200


def test_low_value_columns_go_before_the_table_is_split() -> None:
    table = ResultTable("T", (Column("name"), Column("a"), Column("b", low_value=True)), (("n", "x" * 30, "y" * 30),), row_keys=("name",))
    lines = export.table_lines(table, limit=50)
    assert max(map(cell_len, lines)) <= 50 and "Left out to fit 50 columns: b (every column is in --format csv)" in " ".join(lines)
    assert not any("y" * 30 in line for line in lines) and any("x" * 30 in line for line in lines)


@given(st.text(alphabet=st.sampled_from("ab /-_xé界 "), max_size=80), st.integers(1, 30))
def test_wrap_keeps_every_character_within_the_width(text: str, width: int) -> None:
    lines = export.wrap_cell(text, width)
    assert all(cell_len(line) <= width or cell_len(line) == 2 == width + 1 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_the_terminal_width_applies_without_width(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdout", Terminal())
    monkeypatch.setattr(output.shutil, "get_terminal_size", lambda fallback: __import__("os").terminal_size((91, 30)))
    assert output.text_limit(argparse.Namespace(width=None, output=None)) == 91
    assert output.text_limit(argparse.Namespace(width=70, output=None)) == 70
    assert output.text_limit(argparse.Namespace(width=None, output="out.txt")) is None  # a file is read later


def test_a_pipe_keeps_the_natural_width(gpuscope_cli) -> None:
    out = gpuscope_cli(*COMMANDS["magma"], "--format", "text", "--table", "summary").stdout
    assert "Too wide" not in out and max(map(cell_len, out.splitlines())) > 200


# --- watch --once: numbers as numbers, kernel threads hidden, TIME+ as htop --------------------


def _with_kernel_thread():
    snap = FakeSource().poll()
    kworker = ProcessRow(99999, 2, "root", 0, "I", 50.0, 0, 1, 1.0, "[kworker/0:1]", cpu_time=1.0)
    return dataclasses.replace(snap, processes=(*snap.processes, kworker))


def test_watch_csv_has_numbers_and_bytes_columns() -> None:
    snap = _with_kernel_thread()
    scope, _, gpus, host, top = snapshot_tables(snap, fmt="csv")
    assert len(scope.rows) == 1 and isinstance(scope.records()[0]["memory_used_bytes"], int)
    assert {"memory_used_bytes", "memory_total_bytes", "swap_used_bytes"} <= set(host.keys)
    assert all(isinstance(v, (int, float)) for k, v in host.records()[0].items() if k not in ("host",) and v is not None)
    assert "memory_used_bytes" in gpus.keys and gpus.records()[0]["memory_used_bytes"] == snap.gpus[0].memory_used
    record = top.records()[0]
    assert isinstance(record["mem_bytes"], int) and "MiB" not in export.to_csv(top) and "GiB" not in export.to_csv(host)
    assert 99999 not in [r["pid"] for r in top.records()]  # the kernel thread, though the busiest, is hidden


def test_watch_text_keeps_readable_sizes_and_htop_time() -> None:
    snap = _with_kernel_thread()
    text = export.render(snapshot_tables(snap), "text", limit=120)
    assert "GiB" in text and "kworker" not in text
    top = snapshot_tables(snap)[4]
    times = [top.cell_text(r, top.keys.index("cpu_time_s")) for r in range(len(top.rows))]
    assert times and all(re.fullmatch(r"\d+:\d\d\.\d\d|\d+h\d\d:\d\d|\d+h", t) for t in times if t != "n/a"), times


def test_watch_json_hides_kernel_threads_and_collect_keeps_them() -> None:
    snap = _with_kernel_thread()
    assert 99999 not in [p["pid"] for p in snapshot_dict(snap, kernel_threads=False)["processes"]]
    assert 99999 in [p["pid"] for p in snapshot_dict(snap)["processes"]]
    json.dumps(snapshot_dict(snap, kernel_threads=False), allow_nan=False)


def test_watch_once_json_on_the_command_line(gpuscope_cli) -> None:
    data = json.loads(gpuscope_cli("watch", "--demo", "--once", "--format", "json").stdout)
    assert not [p for p in data["processes"] if p["rss"] == 0 and (p["pid"] == 2 or p["ppid"] == 2)]


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0:00.00"), (110.07, "1:50.07"), (59.999, "1:00.00"), (3725, "1h02:05"), (400_000, "111h")])
def test_htop_time(seconds: float, shown: str) -> None:
    assert htop_time(seconds) == shown


def test_a_single_row_too_wide_is_stacked_one_field_a_line() -> None:
    """One row split in parts would be a cell or two a part: its fields are listed instead."""
    table = ResultTable("Series overview", tuple(Column(f"c{i}", f"column {i}") for i in range(12)),
                        (tuple(f"value {i} " + "x" * 10 for i in range(12)),))
    lines = export.table_lines(table, limit=60)
    assert max(map(cell_len, lines)) <= 60 and not any("parts" in line for line in lines)
    assert [line.split()[:3] for line in lines[2:14]] == [["column", str(i), "value"] for i in range(12)]
