"""A scaling series is one machine: runs split by benchmark, accelerator and framework (and
regrouped by --series-by), one GPU count on two topologies kept apart, efficiency above 100 %
said and above 150 % refused as a grouping error, aborted runs counted as not converged, and
percentages beside a threshold never rounded onto its other side. Real data: the NVIDIA, Krai
and Dell MLPerf Training v3.1 logs in ../shared/data/scaling (skipped when absent)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscope.metrics.scaling import analysis as scaling
from gpuscope.metrics.scaling import checks as scaling_checks
from gpuscope.metrics.scaling import series as scaling_series
from gpuscope.parsers.runlogs.read import read_runs
from gpuscope.tui.cli.main import main
from gpuscope.tui.model.scaling import build_model
from gpuscope.tui.render.scaling_plots import as_text, draw_efficiency, draw_speedup
from runs_table import make_runs, row

SCALING = Path(__file__).resolve().parents[3] / "shared" / "data" / "scaling"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scaling"
needs_round = pytest.mark.skipif(not (SCALING / "mlperf-training-v3.1-others").is_dir(), reason="../shared/data/scaling is absent")


@pytest.fixture(scope="module")
def round_runs():
    return read_runs([str(SCALING)])


# --- point 1: one machine per series --------------------------------------------------------


@needs_round
def test_real_round_splits_bert_by_accelerator(round_runs) -> None:
    model = build_model(round_runs)
    series = set(model.summary["series"])
    assert series == {"bert · A5000 (gpus)", "bert · H100 (gpus)", "resnet (gpus)", "ssd (gpus)"}
    # Krai's 2x RTX A5000 and Dell's 4x H100 are two machines: each is one configuration, no speedup of 33
    assert (model.summary[model.summary["benchmark"] == "bert"]["speedup"] == 1.0).all()
    assert model.summary["efficiency"].max() <= 1.0
    kinds = {f.kind for f in model.findings}
    assert "grouping" not in kinds and "single-config" in kinds
    said = [f.message for f in model.findings if "bert · A5000" in f.message and "configuration" in f.message]
    assert said == ["bert · A5000 (gpus): one configuration (2 GPUs): no scaling to compute"]  # once, not again by the reader
    fit = model.overview.set_index("series")["fit"]
    assert fit["bert · A5000 (gpus)"] == "1 configuration with a speedup: an Amdahl fit needs 3"
    assert fit["resnet (gpus)"] == "2 configurations with a speedup: an Amdahl fit needs 3"
    notes = model.overview_table().notes
    assert notes[0].startswith("series split by benchmark, accelerator, framework")
    assert any(n.startswith("bert · A5000 (gpus): accelerator NVIDIA RTX A5000; framework PyTorch NVIDIA Release 22.09") for n in notes)
    # NVIDIA's resnet and ssd keep their 8 -> 64 GPU curves; the batch size that follows the GPUs stays in the diff
    assert row(model.summary, 64, "resnet (gpus)")["speedup"] == pytest.approx(5.42, abs=0.01)
    assert "local batch size" in set(model.diff[model.diff["series"] == "resnet (gpus)"]["setting"])


@needs_round
def test_series_by_benchmark_pools_and_refuses_the_bert_point(round_runs) -> None:
    model = build_model(round_runs, series_by=("benchmark",))
    bert = model.summary[model.summary["series"] == "bert (gpus)"].set_index("resources")
    assert math.isnan(bert.loc[4, "speedup"]) and math.isnan(bert.loc[4, "efficiency"])  # not 33x, not 1666 %
    note = bert.loc[4, "speedup_note"]
    assert note.startswith("efficiency 1666% is above 150%: not one machine's scaling (accelerator NVIDIA RTX A5000 at 2 GPUs, NVIDIA H100-SXM5-80GB at 4 GPUs")
    grouping = [f for f in model.findings if f.kind == "grouping"]
    assert len(grouping) == 1 and grouping[0].severity == "error" and "bert (gpus): at 4 GPUs" in grouping[0].message
    assert grouping[0].message.endswith("(--series-by benchmark,accelerator,framework,org splits it)")  # Krai and Dell differ in all three
    assert all(label != "bert (gpus)" for label, _x, _y in scaling.plot_series(model.summary))  # nothing to plot but the baseline
    text = model.speedup_table(full=False)
    assert "speedup n/a because" in [c.header for c in text.columns]
    assert model.overview_table().notes[0].startswith("series split by benchmark (")


def test_spelling_of_a_framework_does_not_split_a_series() -> None:
    runs = make_runs([1, 2, 4], [100, 55, 30], set_framework=["NGC Pytorch 23.09", "NGC  PyTorch 23.09", "NGC PyTorch 23.09"],
                     set_accelerator="NVIDIA H100")
    out = scaling_series.assign(runs)
    assert set(out["series"]) == {"bench (gpus)"}
    assert set(out["set_framework"]) == {"NGC PyTorch 23.09"}  # the most common spelling, everywhere
    assert scaling.config_diff(out).empty


def test_series_names_say_only_what_tells_machines_apart() -> None:
    runs = make_runs([1, 2, 1, 2, 1], [10, 6, 10, 6, 10], set_accelerator=["NVIDIA H100-SXM5-80GB"] * 2 + ["NVIDIA H100-PCIe-80GB"] * 2 + [None],
                     set_framework="PyTorch 2.1")
    names = set(scaling_series.assign(runs)["series"])
    assert names == {"bench · NVIDIA H100-SXM5-80GB (gpus)", "bench · NVIDIA H100-PCIe-80GB (gpus)", "bench · accelerator unknown (gpus)"}
    mx = make_runs([1, 2, 1, 2], [10, 6, 10, 6], set_accelerator="NVIDIA A100", set_framework=["MxNet NVIDIA Release 23.09"] * 2 + ["PyTorch NVIDIA Release 23.09"] * 2)
    assert set(scaling_series.assign(mx)["series"]) == {"bench · MxNet (gpus)", "bench · PyTorch (gpus)"}
    none = make_runs([1, 2], [10, 6], benchmark=None, format="seed004")
    assert set(scaling_series.assign(none)["series"]) == {"seed004 (gpus)"}


@given(st.lists(st.sampled_from(["NGC PyTorch 23.09", "ngc pytorch 23.09", " NGC  Pytorch\t23.09 ", "NGC MXNet 23.09"]), min_size=1, max_size=8))
def test_case_and_spacing_never_split(frameworks) -> None:
    runs = make_runs(list(range(1, len(frameworks) + 1)), [10.0] * len(frameworks), set_framework=frameworks)
    out = scaling_series.assign(runs)
    assert out["series"].nunique() == len({scaling_series.normalise(f) for f in frameworks})


def test_parse_keys() -> None:
    assert scaling_series.parse_keys(None) == ("benchmark", "accelerator", "framework")
    assert scaling_series.parse_keys(" Benchmark, accelerator ") == ("benchmark", "accelerator")
    for bad in ("gpu", "", "benchmark,,framework"):
        with pytest.raises(ValueError, match="--series-by"):
            scaling_series.parse_keys(bad)


@needs_round
def test_cli_series_by(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scaling", str(SCALING), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["series"] for r in rows if r["series"].startswith("bert")} == {"bert · A5000 (gpus)", "bert · H100 (gpus)"}
    assert main(["scaling", str(SCALING), "--format", "csv", "--series-by", "benchmark"]) == 0
    captured = capsys.readouterr()
    rows = {(r["series"], r["resources"]): r for r in csv.DictReader(io.StringIO(captured.out))}
    assert rows[("bert (gpus)", "4")]["speedup"] == "" and "above 150%" in rows[("bert (gpus)", "4")]["speedup_note"]
    assert "not one machine's scaling" in captured.err
    assert main(["scaling", str(SCALING), "--format", "text", "--width", "200", "--table", "overview"]) == 0
    assert "series split by benchmark, accelerator, framework" in capsys.readouterr().out
    assert main(["scaling", str(SCALING), "--series-by", "gpu", "--format", "text"]) == 2
    assert "'gpu' is not a key" in capsys.readouterr().err
    assert main(["scaling", str(SCALING), "--series-by", "benchmark", "--series", "bert (gpus)", "--format", "csv"]) == 0
    assert main(["scaling", str(SCALING), "--series", "bert (gpus)", "--format", "csv"]) == 2  # split by default


def test_examples_keep_one_series(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scaling", str(EXAMPLES), "--format", "csv"]) == 0
    assert {r["series"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))} == {"seed004 (processes)"}


# --- point 2: topology ----------------------------------------------------------------------


def test_same_gpus_on_two_topologies_are_two_points() -> None:
    runs = make_runs([4, 4, 8, 8, 8, 8, 16], [100, 101, 55, 56, 70, 71, 30], nodes=pd.array([1, 1, 1, 1, 2, 2, 2], dtype="Int64"))
    s = scaling.summarize(runs)
    eight = s[s["resources"] == 8].set_index("topology")
    assert set(eight.index) == {"1 node x 8", "2 nodes x 4"}
    assert eight.loc["1 node x 8", "time_s_median"] == 55.5 and eight.loc["2 nodes x 4", "time_s_median"] == 70.5  # never pooled
    assert bool(eight.loc["1 node x 8", "curve"]) and not bool(eight.loc["2 nodes x 4", "curve"])
    assert (s[s["resources"] != 8]["topology"] == "").all()
    found = [f for f in scaling.findings(runs, s) if f.kind == "topology"]
    assert len(found) == 1 and "8 GPUs were run on 1 node x 8 (2 runs) and 2 nodes x 4 (2 runs)" in found[0].message
    (_label, xs, _ys), = scaling.plot_series(s)
    assert xs == [4, 8, 16]  # the curve has one point per GPU count
    assert "s · 2 nodes x 4" in as_text(draw_speedup, s, scaling.fits(runs, s))
    assert not [f for f in scaling.findings(runs, s) if f.kind == "speedup-falls"]


# --- point 3: superlinear and implausible efficiency --------------------------------------


def test_superlinear_is_said_and_implausible_is_refused() -> None:
    runs = make_runs([1, 2, 4], [100, 45, 15], set_accelerator=["A100", "A100", "H100"])
    s = scaling.summarize(runs)
    assert row(s, 2)["efficiency"] == pytest.approx(100 / 45 / 2)
    assert math.isnan(row(s, 4)["speedup"]) and math.isnan(row(s, 4)["efficiency"]) and math.isnan(row(s, 4)["karp_flatt"])
    assert "efficiency 167% is above 150%" in row(s, 4)["speedup_note"] and "accelerator A100 at 1 GPU, H100 at 4 GPUs" in row(s, 4)["speedup_note"]
    found = {f.kind: f for f in scaling.findings(runs, s)}
    assert found["superlinear"].message == "s: efficiency 111% at 2 GPUs, above 100%: superlinear: caches, or a slow baseline?"
    assert found["grouping"].severity == "error"
    assert found["grouping"].message.endswith("speedup not given (--series-by benchmark,accelerator splits it)")  # the key that differs
    assert scaling.plot_series(s)[0][1] == [1, 2]
    assert "166" not in as_text(draw_efficiency, s)
    same = make_runs([1, 2], [100, 20])
    assert "the logs show no setting that differs (a slow baseline?)" in row(scaling.summarize(same), 2)["speedup_note"]
    assert "--series-by" not in row(scaling.summarize(same), 2)["speedup_note"]  # no key would split it
    batch = make_runs([1, 2], [100, 20], set_global_batch_size=[32, 256])  # not a --series-by key: no regrouping to suggest
    assert "global batch size 32 at 1 GPU, 256 at 2 GPUs" in row(scaling.summarize(batch), 2)["speedup_note"]
    assert "--series-by" not in row(scaling.summarize(batch), 2)["speedup_note"]


# --- point 4: accuracy counts the runs that did not converge --------------------------------


@needs_round
def test_accuracy_counts_the_aborted_resnet_run(round_runs) -> None:
    model = build_model(round_runs)
    q = model.quality.set_index(["series", "resources"])
    assert q.loc[("resnet (gpus)", 8), "not_converged"] == 1  # the speedup table's 1 aborted
    # The target is MLPerf's (the log does not print it): 0.759 top-1 for ResNet in v3.1.
    assert q.loc[("resnet (gpus)", 8), "convergence"] == "4 converged, 1 stopped at 0.75794 < 0.759 target (aborted)"
    assert q.loc[("resnet (gpus)", 64), "convergence"] == "5 converged"
    assert row(model.summary, 8, "resnet (gpus)")["left_out"] == "1 aborted"


def test_accuracy_counts_unconverged_finished_runs() -> None:
    runs = make_runs([1, 1, 1], [10, 11, 12], converged=pd.array([True, False, pd.NA], dtype="boolean"), quality=[0.8, 0.5, 0.7],
                     status=["ok", "ok", "failed"])
    q = scaling.quality_check(runs).iloc[0]
    assert q["not_converged"] == 1 and q["convergence"] == "1 converged, 1 stopped at 0.5 (finished unconverged), 1 not said"


@pytest.mark.parametrize(("benchmark", "value", "said"), [
    ("resnet", 0.75794, "0.75794 < 0.759 target"),   # accuracy: higher is better
    ("gpt3", 2.75, "2.75 > 2.69 target"),            # log perplexity under the same key: lower is better
    ("ssd", 0.35, "0.35"),                           # reached the target, stopped for another reason
    ("unknown-benchmark", 0.5, "0.5"),               # no known target: the value alone
])
def test_mlperf_stop_names_the_target_it_missed(tmp_path, benchmark: str, value: float, said: str) -> None:
    log = tmp_path / "gpus-8" / "result_0.txt"
    log.parent.mkdir()
    events = [("submission_benchmark", f'"{benchmark}"', 0), ("run_start", "null", 1000),
              ("eval_accuracy", str(value), 2000), ("run_stop", "null", 3000)]
    lines = []
    for key, val, t in events:
        meta = '{"status": "aborted"}' if key == "run_stop" else '{"epoch_num": 1}'
        lines.append(f':::MLLOG {{"namespace": "", "time_ms": {t}, "event_type": "POINT_IN_TIME", "key": "{key}", "value": {val}, "metadata": {meta}}}')
    log.write_text("\n".join(lines) + "\n")
    runs = read_runs([tmp_path], resources_pattern="gpus-{gpus}/*").runs
    q = scaling.quality_check(runs).iloc[0]
    assert q["convergence"] == f"1 stopped at {said} (aborted)"


# --- point 5: a value beside a threshold never rounds onto its other side --------------------


def test_percent_keeps_the_side_of_the_threshold() -> None:
    assert scaling_checks.percent(0.7489, 0.75) == "74.9%"
    assert scaling_checks.percent(0.74999, 0.75) == "74.999%"
    assert scaling_checks.percent(0.68, 0.75) == "68%"
    assert scaling_checks.percent(1.004, 1.0) == "100.4%"
    assert scaling_checks.percent(float("nan")) == "n/a"
    runs = make_runs([1, 2], [100, 100 / (2 * 0.7489)])
    found = {f.kind: f.message for f in scaling.findings(runs, scaling.summarize(runs))}
    assert "efficiency under 75%: 74.9% at 2 GPUs" in found["low-efficiency"]


@given(st.floats(0.0, 3.0, allow_nan=False), st.sampled_from([0.75, 1.0, 1.5]))
def test_percent_never_crosses(value, threshold) -> None:
    shown = float(scaling_checks.percent(value, threshold).removesuffix("%")) / 100
    assert (shown < threshold) == (value < threshold) or np.isclose(value, threshold, rtol=0, atol=5e-9)
    assert (shown > threshold) == (value > threshold) or np.isclose(value, threshold, rtol=0, atol=5e-9)
