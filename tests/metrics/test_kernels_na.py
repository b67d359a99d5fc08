"""A value that cannot be computed is n/a, never 0. FLOP/s and FLOPS
efficiency of kernels without FLOP counts, the GPU compute efficiency of a trace without FLOPs,
and the roofline verdict ("Bound") of kernels with neither FLOPs nor bytes: n/a on the cards and
in text and markdown, null in JSON, empty in CSV."""

from __future__ import annotations

import csv
import io
import json
import math

import pandas as pd

from gpuscope.metrics import export
from gpuscope.metrics.kernels import efficiency as ke
from gpuscope.parsers import registry
from gpuscope.tui.model.kernels import KernelView, build_model
from paths import ROOT

NSYS_V100 = ROOT / "tests/data/profiles/nsys_gputrace_2021.csv"  # one saxpy launch: no FLOPs, no bytes
PYPROF = ROOT / "tests/data/pyprof/resnet_csv.csv"  # cat_kernel: FLOPs and Bytes are '-'
SAXPY = "saxpy(double *, double *, double *, double, int)"


def _lines_with(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word in line]


def test_trace_without_flops_has_no_compute_efficiency() -> None:
    table = registry.read(NSYS_V100).table
    s = ke.sums(table)
    assert ke.compute_efficiency_pct(s) is None  # was 0.0: "no kernel has FLOPs" is not "0 % compute"
    assert ke.efficiency(table, peak_tflops=15.7, peak_gbs=900).compute_efficiency_pct is None
    model = build_model([str(NSYS_V100)])
    assert model.peak.gpu == "V100 SXM2"  # the peak is known: only the FLOPs are missing
    cards = {card.title: card for card in model.cards}
    assert cards["Compute eff."].value == "n/a" and cards["FLOPS eff."].value == "n/a"
    assert pd.isna(model.runs.loc[0, "compute_efficiency_pct"])

    text = export.render([model.summary, model.runs_table()], "text")
    (line,) = _lines_with(text, "GPU compute efficiency")
    assert line.split()[-1] == "n/a"
    runs_line = _lines_with(text, NSYS_V100.name)[-1]
    assert runs_line.split()[1:] == ["1", "n/a", "n/a", "n/a", "n/a", "n/a"]  # launches, then five efficiencies
    summary = {r["item"]: r["value"] for r in json.loads(export.render([model.summary], "json"))}
    assert summary["GPU compute efficiency % (seed 001)"] is None
    assert summary["FLOPS efficiency %"] is None and summary["achieved TFLOP/s"] is None
    (run,) = json.loads(export.render([model.runs_table(compact=False)], "json"))
    assert run["compute_efficiency_pct"] is None and run["launches"] == 1


def test_kernel_without_flops_or_bytes_has_no_rate_efficiency_or_verdict() -> None:
    model = build_model([str(NSYS_V100)])
    table = model.ranking_table(KernelView())
    (row,) = json.loads(export.render([table], "json"))
    assert row["kernel"] == SAXPY and row["calls"] == 1 and row["total_ms"] > 0
    for key in ("flop_per_s", "flops_eff_pct", "gbs", "bw_eff_pct", "intensity", "verdict", "below_roof_pct"):
        assert row[key] is None, key  # 'verdict' was "unknown"
    (csv_row,) = csv.DictReader(io.StringIO(export.render([table], "csv")))
    assert csv_row["verdict"] == "" and csv_row["flops_eff_pct"] == "" and csv_row["flop_per_s"] == ""
    for fmt in ("text", "markdown"):
        (line,) = _lines_with(export.render([table], fmt), "saxpy")
        cells = line.replace("|", " ").split()
        assert cells[-7:] == ["n/a"] * 7, fmt  # FLOP/s ... Below roof %: shown as n/a, not blank


def test_pyprof_kernel_without_flop_counts_is_na_in_both_rankings() -> None:
    # cat_kernel's FLOPs and Bytes are '-' (not counted); nchwToNhwc3To4Kernel counted 0 FLOPs.
    table = registry.read(PYPROF).table
    seed = ke.kernel_ranking(table, peak_tflops=4.29).set_index("kernel")
    assert math.isnan(seed.loc["cat_kernel", "flops_per_s"])  # was 0.0
    assert math.isnan(seed.loc["cat_kernel", "flops_efficiency_pct"]) and math.isnan(seed.loc["cat_kernel", "flops"])
    assert seed.loc["nchwToNhwc3To4Kernel", "flops_per_s"] == 0.0  # counted zero stays zero
    assert list(seed.index)[-1] == "cat_kernel"  # unknown efficiency sorts last

    model = build_model([str(PYPROF)], gpu="K40m")
    ranking = model.rankings["kernel"].set_index("kernel")
    assert pd.isna(ranking.loc["cat_kernel", "verdict"])  # neither FLOPs nor bytes: no verdict (was "unknown")
    assert pd.isna(ranking.loc["nchwToNhwc3To4Kernel", "verdict"])  # 0 bytes: no intensity, no verdict
    assert ranking.loc["batch_norm_collect_statistics_kernel", "verdict"] == "memory-bound"
    text = export.render([model.ranking_table(KernelView(sort="time"))], "text")
    (line,) = _lines_with(text, "cat_kernel")
    assert line.split()[-7:] == ["n/a"] * 7
