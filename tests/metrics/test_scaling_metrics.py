"""Scaling metrics: hand-computed speedup / efficiency / Karp-Flatt,
baselines that are not 1, runs left out, Amdahl fits, strong vs weak, config diff, quality
check, several series, and random tables that never raise."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runs_table import make_runs, row

from gpuscope.metrics.scaling import analysis as scaling
from gpuscope.metrics.scaling.fit import amdahl_fit, gustafson_serial, karp_flatt, karp_flatt_trend

MLPERF = Path(__file__).resolve().parents[3] / "shared" / "data" / "scaling" / "mlperf-training-v3.1" / "NVIDIA"






# --- point 4: speedup, efficiency, Karp-Flatt -----------------------------------------------


def test_hand_computed_speedup_efficiency_karp_flatt() -> None:
    s = scaling.summarize(make_runs([1, 2, 4], [100, 55, 30]))
    assert list(s["resources"]) == [1, 2, 4]
    assert row(s, 1)["speedup"] == 1.0 and row(s, 1)["efficiency"] == 1.0 and math.isnan(row(s, 1)["karp_flatt"])
    assert row(s, 2)["speedup"] == pytest.approx(100 / 55, abs=1e-9)
    assert row(s, 2)["efficiency"] == pytest.approx(100 / 55 / 2, abs=1e-9)
    assert row(s, 2)["karp_flatt"] == pytest.approx(0.1, abs=1e-9)  # (0.55 - 0.5) / 0.5
    assert row(s, 4)["speedup"] == pytest.approx(100 / 30, abs=1e-9)
    assert row(s, 4)["efficiency"] == pytest.approx(100 / 30 / 4, abs=1e-9)
    assert row(s, 4)["karp_flatt"] == pytest.approx(0.05 / 0.75, abs=1e-9)  # (0.3 - 0.25) / 0.75
    assert (s["baseline_resources"] == 1).all()
    assert (s["scaling"] == "unknown").all()  # no samples, no batch size: the kind is not told


def test_baseline_not_one() -> None:
    s = scaling.summarize(make_runs([8, 64], [100, 20]))
    assert (s["baseline_resources"] == 8).all()
    r = row(s, 64)
    assert r["speedup"] == pytest.approx(5.0, abs=1e-9)
    assert r["ideal_speedup"] == pytest.approx(8.0)
    assert r["efficiency"] == pytest.approx(5 / 8, abs=1e-9)
    assert r["karp_flatt"] == pytest.approx((0.2 - 0.125) / 0.875, abs=1e-9)


def test_named_baseline_and_missing_baseline() -> None:
    runs = make_runs([1, 2, 4], [100, 55, 30])
    s = scaling.summarize(runs, baseline=2)
    assert row(s, 4)["speedup"] == pytest.approx(55 / 30, abs=1e-9)
    assert row(s, 1)["speedup"] == pytest.approx(0.55, abs=1e-9)  # smaller than the baseline: a slowdown
    missing = scaling.summarize(runs, baseline=16)
    assert len(missing) == 3 and missing["speedup"].isna().all()  # partial: times kept, no speedup
    assert missing["time_s_median"].tolist() == [100, 55, 30]
    kinds = [f.kind for f in scaling.findings(runs, missing)]
    assert "no-baseline" in kinds
    assert "16 GPUs" in next(f.message for f in scaling.findings(runs, missing) if f.kind == "no-baseline")


def test_repeats_median_and_spread() -> None:
    s = scaling.summarize(make_runs([1, 1, 1, 4, 4, 4], [100, 90, 120, 30, 28, 40]))
    r1, r4 = row(s, 1), row(s, 4)
    assert (r1["runs"], r1["time_s_median"], r1["time_s_min"], r1["time_s_max"]) == (3, 100, 90, 120)
    assert r4["time_s_median"] == 30 and r4["speedup"] == pytest.approx(100 / 30, abs=1e-9)


def test_aborted_and_unconverged_runs_left_out_and_counted() -> None:
    runs = make_runs(
        [1, 1, 2, 2, 2, 2],
        [100, 100, 50, 1, 2, np.nan],
        status=["ok", "ok", "ok", "aborted", "ok", "ok"],
        converged=pd.array([True, True, True, True, False, pd.NA], dtype="boolean"),
    )
    s = scaling.summarize(runs)
    r = row(s, 2)
    assert r["runs"] == 1 and r["runs_left_out"] == 3
    assert r["left_out"] == "1 aborted, 1 no timing, 1 not converged"
    assert r["speedup"] == pytest.approx(2.0)  # the 1 s and 2 s runs did not count
    messages = [f.message for f in scaling.findings(runs, s) if f.kind == "left-out"]
    assert any("(aborted)" in m for m in messages) and any("(not converged)" in m for m in messages) and any("(no timing)" in m for m in messages)


def test_nan_times_never_become_zero() -> None:
    runs = make_runs([1, 2, 4], [100, np.nan, 25])
    s = scaling.summarize(runs)
    r = row(s, 2)
    assert r["runs"] == 0 and r["runs_left_out"] == 1
    for column in ("time_s_median", "time_s_min", "time_s_max", "speedup", "efficiency", "karp_flatt", "throughput", "resource_seconds"):
        assert math.isnan(r[column]), column
    assert row(s, 4)["speedup"] == 4.0
    numbers = s[["time_s_median", "time_s_min", "time_s_max", "speedup", "efficiency", "resource_seconds"]].to_numpy(float)
    assert not (numbers == 0).any()


def test_throughput_when_samples_known() -> None:
    s = scaling.summarize(make_runs([1, 2], [100, 50], samples=[1000.0, 1000.0]))
    assert row(s, 1)["throughput"] == pytest.approx(10.0) and row(s, 2)["throughput"] == pytest.approx(20.0)
    assert (s["scaling"] == "strong").all() and s["scaling_from"].iloc[0] == "samples constant"
    assert math.isnan(row(scaling.summarize(make_runs([1, 2], [100, 50])), 2)["throughput"])


def test_weak_scaling_from_samples_and_gustafson() -> None:
    runs = make_runs([1, 2, 4], [100, 110, 125], samples=[1000.0, 2000.0, 4000.0])
    s = scaling.summarize(runs)
    assert (s["scaling"] == "weak").all()
    r = row(s, 4)
    assert r["efficiency"] == pytest.approx(0.8, abs=1e-9)  # T(p0) / T(p)
    assert r["scaled_speedup"] == pytest.approx(3.2, abs=1e-9)
    assert r["gustafson_serial"] == pytest.approx((4 - 3.2) / 3, abs=1e-9)
    assert math.isnan(r["karp_flatt"])
    assert r["ideal_speedup"] == 1.0
    fit = amdahl_fit(s)
    assert math.isnan(fit.serial_fraction) and "weak" in fit.note


def test_a_batch_growing_with_the_workers_is_not_weak_scaling_of_the_run() -> None:
    # Seed 002 keeps 32 per GPU: weak per step, but the whole run's time over the same data is
    # strong scaling with a second change (the "not a pure strong-scaling comparison").
    s = scaling.summarize(make_runs([8, 16, 64], [100, 101, 104], set_global_batch_size=[256, 512, 2048]))
    assert (s["scaling"] == "strong").all() and "weak per step only" in s["scaling_from"].iloc[0]
    assert row(s, 64)["efficiency"] == pytest.approx((100 / 104) / 8)
    s = scaling.summarize(make_runs([8, 16], [100, 60], set_local_batch_size=[32, 32]))
    assert (s["scaling"] == "strong").all()
    s = scaling.summarize(make_runs([8, 16], [100, 60], set_global_batch_size=[256, 256]))
    assert (s["scaling"] == "strong").all()
    s = scaling.summarize(make_runs([8, 64], [100, 60], set_global_batch_size=[256, 512]))
    assert (s["scaling"] == "unknown").all()


def test_gustafson_and_karp_flatt_formulas() -> None:
    assert float(gustafson_serial(3.2, 4)) == pytest.approx(0.8 / 3)
    assert math.isnan(float(karp_flatt(1.0, 1.0)))
    assert math.isnan(float(karp_flatt(np.nan, 4.0)))


# --- Amdahl fit and Karp-Flatt trend ----------------------------------------------------------


def amdahl_runs(f: float, ps, repeats: int, noise: float, seed: int = 1, series: str = "s") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    resources = [p for p in ps for _ in range(repeats)]
    times = [1000.0 * (f + (1 - f) / p) * (1 + noise * rng.standard_normal()) for p in resources]
    return make_runs(resources, times, series=series)


def test_amdahl_fit_recovers_serial_fraction() -> None:
    runs = amdahl_runs(0.05, [1, 2, 4, 8, 16, 32], repeats=5, noise=0.01)
    s = scaling.summarize(runs)
    table = scaling.fits(runs, s)
    r = table.iloc[0]
    assert r["n_points"] == 6
    assert r["serial_fraction"] == pytest.approx(0.05, abs=0.01)
    assert r["low"] <= 0.05 <= r["high"] and r["low"] < r["serial_fraction"] < r["high"]
    assert r["r_squared"] > 0.99
    assert r["karp_flatt_trend"].startswith("serial fraction roughly constant")
    again = scaling.fits(runs, s).iloc[0]
    assert (again["low"], again["high"]) == (r["low"], r["high"])  # seeded: reproducible


def test_amdahl_fit_with_baseline_not_one() -> None:
    runs = amdahl_runs(0.02, [8, 16, 32, 64, 128], repeats=4, noise=0.005, seed=3)
    s = scaling.summarize(runs)
    fit = scaling.fits(runs, s).iloc[0]
    # Relative to 8 workers, the serial fraction of T(8) is f / (f + (1 - f) / 8).
    truth = 0.02 / (0.02 + 0.98 / 8)
    assert fit["low"] <= truth <= fit["high"]


def test_amdahl_fit_needs_three_points_and_single_runs_use_residuals() -> None:
    s = scaling.summarize(make_runs([1, 2], [100, 55]))
    fit = amdahl_fit(s)
    assert math.isnan(fit.serial_fraction) and fit.n_points == 2 and "needs 3" in fit.note
    s = scaling.summarize(make_runs([1, 2, 4, 8], [100, 53, 28, 16]))
    fit = amdahl_fit(s)
    assert 0 < fit.serial_fraction < 0.1 and "residuals" in fit.note
    assert fit.low <= fit.serial_fraction <= fit.high


def test_karp_flatt_trend_words() -> None:
    e = {2: 0.02, 4: 0.05, 8: 0.09}
    times = [100.0] + [100.0 * (e[p] * (1 - 1 / p) + 1 / p) for p in (2, 4, 8)]
    s = scaling.summarize(make_runs([1, 2, 4, 8], times))
    assert s["karp_flatt"].iloc[1:].to_numpy() == pytest.approx([0.02, 0.05, 0.09], abs=1e-9)
    words = karp_flatt_trend(s)
    assert words == "serial fraction grows with p (0.02 -> 0.09): overhead (communication, synchronisation, imbalance), not serial code (one run per configuration: spread unknown)"
    assert karp_flatt_trend(s[s["resources"] < 8]) is None  # two values: no trend said
    falling = [100.0] + [100.0 * (v * (1 - 1 / p) + 1 / p) for p, v in zip((2, 4, 8), (0.09, 0.05, 0.02))]
    assert karp_flatt_trend(scaling.summarize(make_runs([1, 2, 4, 8], falling))).startswith("serial fraction falls with p (0.09 -> 0.02)")


def test_karp_flatt_trend_against_run_to_run_spread() -> None:
    e = {2: 0.02, 4: 0.05, 8: 0.09}
    resources = [1, 1, 1] + [p for p in (2, 4, 8) for _ in range(3)]

    def times(spread: float) -> list[float]:
        return [100.0] * 3 + [100.0 * (e[p] * (1 - 1 / p) + 1 / p) * k for p in (2, 4, 8) for k in (1 - spread, 1.0, 1 + spread)]

    tight = karp_flatt_trend(scaling.summarize(make_runs(resources, times(0.001))))
    assert tight == "serial fraction grows with p (0.02 -> 0.09): overhead (communication, synchronisation, imbalance), not serial code"
    noisy = karp_flatt_trend(scaling.summarize(make_runs(resources, times(0.3))))
    assert noisy == "serial fraction grows with p (0.02 -> 0.09), but not beyond the run-to-run spread"


def test_efficiency_and_falling_speedup_findings() -> None:
    runs = make_runs([1, 2, 4, 8], [100, 60, 40, 45])
    s = scaling.summarize(runs)
    found = {f.kind: f.message for f in scaling.findings(runs, s)}
    assert "speedup falls from 2.5 at 4 to 2.22 at 8 GPUs" in found["speedup-falls"]
    assert "efficiency under 75%: 62% at 4, 28% at 8 GPUs" in found["low-efficiency"]
    assert "single-run" in found and "scaling-kind" in found


def test_single_config_series_finding() -> None:
    runs = make_runs([8, 8], [100, 101])
    found = {f.kind: f.message for f in scaling.findings(runs, scaling.summarize(runs))}
    assert found["single-config"] == "s: one configuration (8 GPUs): no scaling to compute"


# --- point 5: config diff and quality -------------------------------------------------------


def test_config_diff_sentence_and_table() -> None:
    runs = make_runs(
        [8, 8, 64, 64], [100, 100, 20, 20], samples=1e6, set_global_batch_size=[256, 256, 2048, 2048],
        set_precision="bf16", set_learning_rate=[0.1, 0.1, 0.1, 0.1],
    )  # fmt: skip
    s = scaling.summarize(runs)
    assert (s["scaling"] == "strong").all()
    sentences = scaling.diff_sentences(runs, s)
    assert sentences["s"] == "global batch size 256 at 8 GPUs, 2048 at 64 GPUs: not a pure strong-scaling comparison"
    assert row(s, 64)["differs"] == "global batch size 2048 (256 at 8 GPUs)" and row(s, 8)["differs"] == ""
    diff = scaling.config_diff(runs)
    assert diff[["setting", "resources", "value"]].values.tolist() == [["global batch size", 8, "256"], ["global batch size", 64, "2048"]]
    wide = scaling.config_diff_wide(diff, "s")
    assert wide.loc["global batch size", 64] == "2048"
    assert any(f.kind == "settings-differ" for f in scaling.findings(runs, s))


def test_config_diff_only_resources_changed_and_no_settings() -> None:
    runs = make_runs([8, 64], [100, 20], set_precision="bf16", set_dataset="imagenet")
    assert scaling.diff_sentences(runs)["s"] == "only the GPUs changed (compared: precision, dataset)"
    assert scaling.config_diff(runs).empty
    assert scaling.diff_sentences(make_runs([8, 64], [100, 20]))["s"] == "no settings in the logs: cannot tell whether only the GPUs changed"


def test_config_diff_growing_batch_is_a_second_change() -> None:
    runs = make_runs([8, 64], [100, 104], set_global_batch_size=[256, 2048])
    assert scaling.diff_sentences(runs)["s"] == "global batch size 256 at 8 GPUs, 2048 at 64 GPUs: not a pure strong-scaling comparison"
    assert scaling.summarize(runs)["differs"].tolist() == ["", "global batch size 2048 (256 at 8 GPUs)"]


def test_config_diff_local_batch_following_strong_scaling_is_no_second_change() -> None:
    # MLPerf ResNet: global batch 3200 on 8 and 64 GPUs, so the local batch goes 400 -> 50.
    runs = make_runs([8, 64], [800, 150], set_global_batch_size=[3200, 3200], set_local_batch_size=[400, 50], set_learning_rate=[0.1, 0.2])
    s = scaling.summarize(runs)
    assert (s["scaling"] == "strong").all()
    assert scaling.diff_sentences(runs, s)["s"] == (
        "learning rate 0.1 at 8 GPUs, 0.2 at 64 GPUs: not a pure strong-scaling comparison (local batch size 400 at 8 GPUs, 50 at 64 GPUs: follows the GPUs, as strong scaling means)"
    )
    assert row(s, 64)["differs"] == "learning rate 0.2 (0.1 at 8 GPUs)"


def quality_runs(base_q, other_q, base_epochs=None, other_epochs=None) -> pd.DataFrame:
    resources = [8] * len(base_q) + [64] * len(other_q)
    epochs = (base_epochs or [pd.NA] * len(base_q)) + (other_epochs or [pd.NA] * len(other_q))
    return make_runs(
        resources, [100.0] * len(resources), quality=[*base_q, *other_q], quality_name="eval_accuracy",
        quality_higher_is_better=pd.array([True] * len(resources), dtype="boolean"), epochs=pd.array(epochs, dtype="Int64"),
        converged=pd.array([True] * len(resources), dtype="boolean"),
    )  # fmt: skip


def test_quality_check_too_few_runs() -> None:
    q = scaling.quality_check(quality_runs([0.76, 0.761], [0.70, 0.71, 0.705]))
    r = q[q["resources"] == 64].iloc[0]
    assert r["quality_verdict"].startswith("too few runs to tell (3 and 2")
    assert math.isnan(r["quality_p_value"])
    assert q[q["resources"] == 8].iloc[0]["quality_verdict"] == "baseline"
    # 3 against 3: Mann-Whitney cannot reach p < 0.05, so no verdict either.
    q = scaling.quality_check(quality_runs([0.76, 0.761, 0.762], [0.70, 0.71, 0.705]))
    assert "cannot reach" in q[q["resources"] == 64].iloc[0]["quality_verdict"]


def test_quality_check_enough_runs() -> None:
    worse = scaling.quality_check(quality_runs([0.760, 0.761, 0.762, 0.759, 0.7605], [0.70, 0.71, 0.705, 0.702, 0.708], [35] * 5, [40, 41, 40, 42, 40]))
    r = worse[worse["resources"] == 64].iloc[0]
    assert r["quality_verdict"].startswith("worse than at 8 GPUs, beyond run-to-run spread")
    assert r["quality_p_value"] < 0.05
    assert r["quality_median"] == pytest.approx(0.705) and r["quality_difference"] == pytest.approx(0.705 - 0.7605)
    assert r["epochs_median"] == 40 and r["epochs_verdict"].startswith("worse than at 8 GPUs")
    same = scaling.quality_check(quality_runs([0.760, 0.762, 0.758, 0.761, 0.759], [0.7601, 0.7615, 0.7585, 0.7605, 0.7595]))
    r = same[same["resources"] == 64].iloc[0]
    assert r["quality_verdict"].startswith("within run-to-run spread") and r["quality_p_value"] >= 0.05


# --- point 6: several series ----------------------------------------------------------------


def test_several_series_stay_apart() -> None:
    threads = make_runs([1, 2, 4], [100, 55, 30], series="threads", resource_kind="threads", benchmark="mnist")
    gpus = make_runs([1, 2, 4], [10, 6, 4], series="gpu", resource_kind="gpus", benchmark="mnist")
    runs = pd.concat([threads, gpus], ignore_index=True)
    s = scaling.summarize(runs)
    assert len(s) == 6
    assert row(s, 2, "threads")["speedup"] == pytest.approx(100 / 55) and row(s, 2, "gpu")["speedup"] == pytest.approx(10 / 6)
    overview = scaling.series_overview(s).set_index("series")
    assert overview.loc["threads", "vs_fastest"] == pytest.approx(30 / 4) and overview.loc["gpu", "vs_fastest"] == 1.0
    lines = scaling.plot_series(s)
    assert [label for label, _, _ in lines] == ["gpu (GPUs)", "threads (threads)"]
    assert lines[1][1] == [1, 2, 4]
    assert len(scaling.fits(runs, s)) == 2


# --- random tables --------------------------------------------------------------------------

STATUSES = ["ok", "ok", "ok", "aborted", "failed", "cancelled", "timeout", "no-timing"]


@st.composite
def random_runs(draw) -> pd.DataFrame:
    n = draw(st.integers(1, 14))
    resources = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8, 16, 64]), min_size=n, max_size=n))
    times = draw(st.lists(st.one_of(st.just(np.nan), st.floats(1e-3, 1e6)), min_size=n, max_size=n))
    status = draw(st.lists(st.sampled_from(STATUSES), min_size=n, max_size=n))
    converged = draw(st.lists(st.sampled_from([True, False, None]), min_size=n, max_size=n))
    series = draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    quality = draw(st.lists(st.one_of(st.just(np.nan), st.floats(0, 1)), min_size=n, max_size=n))
    samples = draw(st.lists(st.one_of(st.just(np.nan), st.sampled_from([100.0, 200.0, 800.0])), min_size=n, max_size=n))
    batch = draw(st.lists(st.one_of(st.just(np.nan), st.sampled_from([32.0, 256.0])), min_size=n, max_size=n))
    return make_runs(
        resources, times, status=status, converged=pd.array([pd.NA if c is None else c for c in converged], dtype="boolean"),
        series=series, quality=quality, samples=samples, set_global_batch_size=batch, set_precision="fp32",
        epochs=pd.array(draw(st.lists(st.one_of(st.none(), st.integers(1, 50)), min_size=n, max_size=n)), dtype="Int64"),
    )  # fmt: skip


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_runs(), st.sampled_from([None, 1, 4]))
def test_random_tables_never_raise_and_baseline_speedup_is_one(runs: pd.DataFrame, baseline: int | None) -> None:
    s = scaling.summarize(runs, baseline=baseline)
    scaling.fits(runs, s, n_boot=20)
    scaling.config_diff(runs)
    scaling.diff_sentences(runs, s)
    scaling.quality_check(runs, baseline=baseline)
    scaling.findings(runs, s)
    scaling.series_overview(s)
    scaling.plot_series(s)
    assert s["runs"].sum() + s["runs_left_out"].sum() == len(runs)
    at_base = s[s["resources"] == s["baseline_resources"]]
    assert (at_base["speedup"] == 1.0).all() and (at_base["efficiency"] == 1.0).all()
    for column in ("time_s_median", "speedup", "efficiency"):
        values = s[column].to_numpy(float)
        assert not (values == 0).any()  # unknown is NaN, never 0
        assert np.isnan(values[s["runs"].to_numpy() == 0]).all()


# --- the real MLPerf Training v3.1 results (NVIDIA eos, 1 and 8 nodes x 8 GPUs) -------------


def read_mllog(path: Path, series: str, nodes: int) -> dict:
    """Just enough of one MLPerf result file for a runs row (the real reader lives in parsers/)."""
    events: dict[str, dict] = {}
    quality = np.nan
    for line in path.read_text(errors="replace").splitlines():
        at = line.find(":::MLLOG ")
        if at < 0:
            continue
        try:
            event = json.loads(line[at + 9 :])
        except ValueError:
            continue
        events.setdefault(event["key"], event)
        if event["key"] == "eval_accuracy":
            quality, epoch = float(event["value"]), event["metadata"].get("epoch_num")
        if event["key"] == "run_stop":
            events["run_stop"] = event
    status = events["run_stop"]["metadata"].get("status")
    return {
        "source": str(path), "series": series, "resources": nodes * 8, "nodes": nodes, "gpus": nodes * 8,
        "time_s": (events["run_stop"]["time_ms"] - events["run_start"]["time_ms"]) / 1000.0,
        "status": "ok" if status == "success" else "aborted", "converged": status == "success",
        "quality": quality, "epochs": epoch, "quality_name": "eval_accuracy",
        "set_global_batch_size": events["global_batch_size"]["value"],
        "set_learning_rate": events.get("opt_base_learning_rate", {}).get("value", np.nan),
    }  # fmt: skip


@pytest.mark.skipif(not MLPERF.is_dir(), reason="../shared/data/scaling is absent")
def test_real_mlperf_resnet_and_ssd() -> None:
    rows = []
    for series, (one, eight) in {"resnet": ("eos_ngc23.09_mxnet/resnet", "eos_n8_ngc23.09_mxnet/resnet"), "ssd": ("eos_ngc23.09_pytorch/ssd", "eos_n8_ngc23.09_pytorch/ssd")}.items():
        for nodes, folder in ((1, one), (8, eight)):
            rows += [read_mllog(path, series, nodes) for path in sorted((MLPERF / "results" / folder).glob("result_*.txt"))]
    table = pd.DataFrame(rows)
    n = len(table)
    runs = make_runs(
        table["resources"].tolist(), table["time_s"].tolist(), **{c: table[c].tolist() for c in table if c not in ("resources", "time_s", "converged", "epochs")},
        converged=pd.array(table["converged"].tolist(), dtype="boolean"), epochs=pd.array(table["epochs"].tolist(), dtype="Int64"),
        quality_higher_is_better=pd.array([True] * n, dtype="boolean"),
    )  # fmt: skip
    s = scaling.summarize(runs)
    resnet8, resnet64 = row(s, 8, "resnet"), row(s, 64, "resnet")
    assert (resnet8["runs"], resnet8["runs_left_out"], resnet8["left_out"]) == (4, 1, "1 aborted")  # result_2 stopped "aborted"
    assert resnet64["runs"] == 5
    assert resnet64["speedup"] == pytest.approx(resnet8["time_s_median"] / resnet64["time_s_median"], abs=1e-12)
    assert 5.3 < resnet64["speedup"] < 5.5 and resnet64["efficiency"] < 0.75
    assert (s[s["series"] == "resnet"]["scaling"] == "strong").all()  # global batch 3200 on both
    sentences = scaling.diff_sentences(runs, s)
    assert sentences["resnet"].startswith("only the GPUs changed")
    assert sentences["ssd"] == "learning rate 8.5e-05 at 8 GPUs, 0.0001 at 64 GPUs: not a pure strong-scaling comparison"
    quality = scaling.quality_check(runs).set_index(["series", "resources"])
    assert quality.loc[("resnet", 8), "runs"] == 4 and not quality.loc[("resnet", 64), "quality_verdict"].startswith("too few")
    kinds = {f.kind for f in scaling.findings(runs, s)}
    assert {"left-out", "low-efficiency", "settings-differ"} <= kinds


def test_quality_check_with_hundreds_of_runs_does_not_overflow() -> None:
    # 2 / comb(1200, 600) overflowed a float (OverflowError) once a configuration had ~500 runs.
    rng = np.random.default_rng(1)
    q = scaling.quality_check(quality_runs(list(0.76 + rng.normal(0, 0.001, 600)), list(0.70 + rng.normal(0, 0.001, 600))))
    assert q[q["resources"] == 64].iloc[0]["quality_verdict"].startswith("worse than at 8 GPUs")


def test_config_diff_with_unhashable_settings_from_json() -> None:
    runs = make_runs([8, 64], [100, 20], set_layers=[[1, 2], [1, 2, 3]])
    assert scaling.diff_sentences(runs)["s"].startswith("layers [1, 2] at 8 GPUs, [1, 2, 3] at 64 GPUs: not a pure")


def test_amdahl_closed_form_matches_scipy_least_squares_on_time() -> None:
    """The closed form is the least-squares f on normalised time; scipy's curve_fit on the
    same model and data (bounded to [0, 1]) finds the same f, also where the bound binds."""
    from scipy.optimize import curve_fit

    from gpuscope.metrics.scaling.fit import _fit_f

    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    rng = np.random.default_rng(7)
    for f_true, noise in ((0.05, 0.02), (0.3, 0.05), (0.0, 0.03), (0.9, 0.1)):
        s = 1.0 / (f_true + (1 - f_true) / p) * (1 + noise * rng.standard_normal(p.size))
        (ref,), _ = curve_fit(lambda q, f: f + (1 - f) / q, p, 1.0 / s, p0=[0.5], bounds=(0.0, 1.0))
        assert float(_fit_f(p, s)[0]) == pytest.approx(ref, abs=1e-4)  # trf stops within its tolerance of a bound
    rows = np.array([[1.0, 1.9, 3.5, 6.0, 9.0], [1.0, np.nan, 3.5, 6.0, 9.0], [1.0, 1.9, -1.0, 6.0, 9.0]])
    got = _fit_f(p, rows)
    assert math.isfinite(got[0]) and math.isnan(got[1]) and math.isnan(got[2])
