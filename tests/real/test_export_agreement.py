"""Exports agree with the screen and tables use the width they have.

Printed and exported tables: CSV/JSON floats to `export.SIGNIFICANT` digits, JSON keys stable
snake_case whatever the metric, `--width` limits text tables (cut in the middle); the MAGMA
summary opens on sizes with data; plots list environments as the table does; axis ticks are round.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pytest

from gpuscope.metrics import export
from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.cli.main import main
from gpuscope.tui.render import plots
from gpuscope.tui.render.boxplot import draw_boxes
from gpuscope.tui.render.plots import round_ticks
from gpuscope.tui.model.magma import build_model

ROOT = Path(__file__).resolve().parents[2]
LONG_NAMES = ROOT / "tests/data/profiles/nsys_cuda_gpu_kern_sum_16448.csv"
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(list(argv))
    return capsys.readouterr().out


def significant_digits(text: str) -> int:
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) if "." not in text.split("e")[0] else len(mantissa)


def test_middle_keeps_both_ends() -> None:
    name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, T2, T3)"
    cut = export.middle(name, 40)
    assert len(cut) == 40 and cut.startswith("void at::native") and cut.endswith("(int, T2, T3)") and "…" in cut
    assert export.middle("short", 40) == "short"


def test_csv_floats_are_rounded(capsys: pytest.CaptureFixture[str], magma_data: Path) -> None:
    out = printed(capsys, "magma", str(magma_data), "--format", "csv", "--table", "comparison")
    rows = list(csv.DictReader(io.StringIO(out)))
    ratios = [r["ratio_to_best"] for r in rows if r["ratio_to_best"]]
    assert ratios and all(significant_digits(v) <= export.SIGNIFICANT for v in ratios), ratios[:5]
    assert export.rounded(0.8530620632963419) == 0.8530621 and export.rounded(99999.99) == 99999.99
    assert export.rounded(1.7e15) == 1700000000000000 and isinstance(export.rounded(2.0), int)


def test_json_keys_are_snake_case_and_the_same_for_both_metrics(capsys: pytest.CaptureFixture[str], magma_data: Path) -> None:
    payloads = [json.loads(printed(capsys, "magma", str(magma_data), "--format", "json", "--metric", metric)) for metric in ("gflops", "ms")]
    assert list(payloads[0]) == list(payloads[1])
    assert all(SNAKE.match(key) for key in payloads[0]), list(payloads[0])
    for name in payloads[0]:
        keys = [set().union(*(r.keys() for r in p[name])) if p[name] else set() for p in payloads]
        assert keys[0] == keys[1], name
        assert all(SNAKE.match(k) for k in keys[0]), keys[0]
    comparison = {p["environments_compared"][0]["metric"] for p in payloads}
    assert comparison == {"gflops", "time_ms"}  # the unit of `median` is in every record


def test_width_limits_printed_tables(capsys: pytest.CaptureFixture[str]) -> None:
    out = printed(capsys, "kernels", str(LONG_NAMES), "--gpu", "A100", "--format", "text", "--table", "kernels", "--width", "100")
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    name = next(line for line in lines if "16448" in line).split("   ")[0].strip()  # the 16448-launch kernel
    assert name.startswith("void at::native::vectorized_elementwise_kernel") and "…" in name, name  # folded: the function name stays


def test_magma_summary_opens_on_sizes_with_data(capsys: pytest.CaptureFixture[str], magma_data: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(printed(capsys, "magma", str(magma_data), "--format", "csv"))))
    counts = [int(r["count"]) for r in rows]
    assert counts[0] > 0 and 0 in counts
    first_empty = counts.index(0)
    assert all(c == 0 for c in counts[first_empty:])  # empty groups last
    model = build_model(read_tree([magma_data]))
    sel = model.first_selection()
    table = model.summary_table(sel)
    count = table.keys.index("count")
    assert table.rows[0][count] > 0
    why = table.keys.index("why")
    assert all(r[why] for r in table.rows if r[count] == 0) and "warm-up" in " ".join(r[why] for r in table.rows if r[count] == 0)


def plot_labels_and_ticks(rows, metric: str = "gflops") -> tuple[list[str], list[str]]:
    fig = plots.figure(100, 20)
    draw_boxes(fig, rows, metric, "t")
    lines = plots.plain_text(fig).splitlines()
    labels = [m.group(1).strip() for line in lines if (m := re.match(r"^\s*(\S[^┤│]*?)\s*┤", line))]
    ticks_line = next(line for line in reversed(lines) if re.search(r"\d", line) and "┤" not in line and "│" not in line and "gflop" not in line.lower() and "Gflop" not in line)
    return labels, ticks_line.split()


def test_plot_lists_environments_in_the_table_order(magma_data: Path) -> None:
    model = build_model(read_tree([magma_data]))
    sel = model.first_selection()
    summary = model.summary(sel)
    size = summary.loc[summary["count"] > 0, "problem_size"].iloc[0]
    rows = summary[(summary["problem_size"] == size) & (summary["count"] > 0)].reset_index(drop=True)
    labels, _ = plot_labels_and_ticks(rows)
    table = model.summary_table(sel)
    env, sz, count = table.keys.index("environment"), table.keys.index("problem_size"), table.keys.index("count")
    in_table = [r[env] for r in table.rows if r[sz] == size and r[count] > 0]
    assert labels == list(dict.fromkeys(in_table)), (labels, in_table)


def is_round_step(step: float) -> bool:
    exponent = math.floor(math.log10(step))
    mantissa = round(step / 10**exponent, 6)
    return mantissa in (1, 2, 2.5, 5)


def test_axis_ticks_are_round_numbers(magma_data: Path) -> None:
    for low, high in ((72.6, 100.9), (0.013, 0.0171), (1234, 98765), (5, 5.0001)):
        ticks = round_ticks(low, high)
        assert 3 <= len(ticks) <= 8 and low <= ticks[0] and ticks[-1] <= high, (low, high, ticks)
        steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:])}
        assert len(steps) == 1 and is_round_step(steps.pop()), ticks
    summary = magma_stats.summarize(read_tree([magma_data]).rows)
    rows = summary[(summary["problem_size"] == "64x64x63") & (summary["nodes"].astype(str) == "4") & (summary["count"] > 0)]
    rows = rows[rows["test"] == rows["test"].iloc[0]].reset_index(drop=True)
    _, ticks = plot_labels_and_ticks(rows)
    values = [float(t) for t in ticks]
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(steps) == 1 and is_round_step(steps.pop()), ticks
