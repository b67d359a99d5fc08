"""Several profiles at once. Each profile is measured against the peak of its
own GPU (a V100 trace and an RTX 5090 profile read together do not share the V100's peak), the
summed kernel time per device is right for every source (summaries without start times too),
and profiles from different files keep distinct labels (two `trace.csv` in two folders)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import gpuscope.collectors.nvml as nvml
from gpuscope.metrics import export
from gpuscope.metrics.kernels.table import kernel_table
from gpuscope.metrics.kernels.peak_choice import choose_peak
from gpuscope.parsers import registry
from gpuscope.tui.model.kernels import KernelView, build_model
from paths import ROOT

PROFILES = ROOT / "tests/data/profiles"
NSYS_V100 = PROFILES / "nsys_gputrace_2021.csv"  # rows name `Tesla V100-SXM2-16GB (0)`
NSYS_H100 = PROFILES / "nsys_cuda_gpu_trace_2024_us.csv"  # rows name `NVIDIA H100 80GB HBM3 (1)`
KERN_SUM = PROFILES / "nsys_gpukernsum_2021.csv"  # `nsys stats` summary: no start times, no device
NCU = PROFILES / "ncu_long_2022.csv"  # FLOPs and bytes; names no GPU (device '0')
TORCH = ROOT / "tests/data/torch/edge_cases.json"  # deviceProperties name the GPU
SAMPLE = ROOT / "tests/data/kernels"  # two PyProf runs of the same kernels, FLOPs and bytes counted


def _summary(model: Any) -> dict[str, Any]:
    return {r["item"]: r["value"] for r in json.loads(export.render([model.summary], "json"))}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _runs(model: Any) -> dict[str, dict[str, Any]]:
    return {Path(r["file"]).name: r for r in json.loads(export.render([model.runs_table(compact=False)], "json"))}


def _kernel_ns(path: Path) -> float:
    """Σ duration of a profile's kernels (copies and memsets left out), from its own reader."""
    table = registry.read(path).table
    kernels = table[~table["op"].isin(["memcpy", "memset"]).fillna(False).astype(bool)]
    duration = kernels["duration_ns"].astype("float64")
    return float(duration[duration > 0].sum())


def test_a_v100_trace_and_an_rtx_5090_profile_do_not_share_the_v100_peak(tmp_path: Path, monkeypatch: Any) -> None:
    # A PyTorch trace taken on a V100 (its deviceProperties name it) and an Nsight Compute profile
    # taken on this machine, an RTX 5090 (ncu names no GPU, so NVML's GPU 0 gives its peak).
    v100 = tmp_path / "v100.json"
    v100.write_text(TORCH.read_text().replace('"name": "Test GPU"', '"name": "Tesla V100-SXM2-16GB"'))
    monkeypatch.setattr(nvml, "local_gpu_names", lambda: ("NVIDIA GeForce RTX 5090",))
    model = build_model([str(v100), str(NCU)])

    runs = _runs(model)
    rtx = runs[NCU.name]
    assert rtx["flops_efficiency_pct"] == pytest.approx(rtx["tflops_per_s"] / 104.8 * 100)  # was / 15.7, the V100's
    assert rtx["bandwidth_efficiency_pct"] == pytest.approx(rtx["bandwidth_gbs"] / 1792 * 100)
    assert (rtx["peak_gpu"], rtx["peak_tflops"], rtx["peak_gbs"]) == ("GeForce RTX 5090", 104.8, 1792)
    assert (runs["v100.json"]["peak_gpu"], runs["v100.json"]["peak_tflops"], runs["v100.json"]["peak_gbs"]) == ("V100 SXM2", 15.7, 900)

    # The ranking measures the 5090's kernels against the 5090: efficiency and ridge.
    ranking = model.rankings["kernel"].set_index("kernel")
    sgemm = ranking.loc[next(k for k in ranking.index if k.startswith("sgemm_kernel"))]
    assert sgemm["flops_eff_pct"] == pytest.approx(sgemm["flop_per_s"] / 104.8e12 * 100)
    assert sgemm["bw_eff_pct"] == pytest.approx(sgemm["gbs"] / 1792 * 100)
    assert sgemm["ridge"] == pytest.approx(104.8e12 / 1792e9) and sgemm["verdict"] == "compute-bound"
    notes = " ".join(model.ranking_table(KernelView()).notes)
    assert "each kernel's, from the peak of the GPU it ran on" in notes

    # No single peak: the text lists both. The V100 trace counts no FLOPs, so FLOP figures of
    # both together would count its time as time without work: n/a, and the summary says why.
    assert model.peak.tflops is None and "V100 SXM2 15.7 TFLOPS" in model.peak.source_text
    assert "GeForce RTX 5090 104.8 TFLOPS" in model.peak.source_text
    summary = _summary(model)
    assert summary["FLOPS efficiency %"] is None and summary["GPU compute efficiency % (seed 001)"] is None
    assert summary["FLOP figures of all profiles together"] == "n/a: 1 of 2 profiles have no FLOP counts (see Runs)"
    cards = {card.title: card for card in model.cards}
    assert cards["Peak FP32"].value == "per profile" and cards["Compute eff."].value == "n/a"


def test_launches_of_two_gpus_are_each_measured_against_their_own_peak() -> None:
    # The two bundled PyProf runs, as if run 1 ran on a K40m and run 8 on a V100 (the files name
    # no GPU): every kernel ran in both, so each kernel's peak is what both GPUs could do.
    from gpuscope.metrics.kernels.peak_choice import per_profile
    from gpuscope.tui.model.kernels import overall_peaks, with_launch_peaks

    loaded = registry.read_profiles([str(SAMPLE)])
    one, eight = loaded.runs
    peaks = {one.file: choose_peak(gpu="K40m"), eight.file: choose_peak(gpu="V100")}
    frame = kernel_table(with_launch_peaks(loaded.kernels, peaks)).set_index("kernel")
    alone_1 = kernel_table(one.kernels, peaks[one.file]).set_index("kernel")
    alone_8 = kernel_table(eight.kernels, peaks[eight.file]).set_index("kernel")
    for kernel in alone_1.index:
        flops = alone_1.loc[kernel, "flops"] + alone_8.loc[kernel, "flops"]
        possible = (alone_1.loc[kernel, "total_ns"] * 4.29e12 + alone_8.loc[kernel, "total_ns"] * 15.7e12) * 1e-9
        assert frame.loc[kernel, "flops_eff_pct"] == pytest.approx(flops / possible * 100)
        assert pd.isna(frame.loc[kernel, "verdict"]) and pd.isna(frame.loc[kernel, "ridge"])  # no single roof
    # A kernel whose launches all ran on one GPU is measured against exactly that GPU's peak.
    own = kernel_table(with_launch_peaks(one.kernels, peaks)).set_index("kernel")
    pd.testing.assert_frame_equal(own, alone_1)
    # The whole read: the launches' time-weighted peak, so % = work done / what the GPUs could do.
    t1, t8 = float(alone_1["total_ns"].sum()), float(alone_8["total_ns"].sum())
    limits = overall_peaks(with_launch_peaks(loaded.kernels, peaks), per_profile(list(peaks.values())))
    assert limits.per_launch and limits.tflops == pytest.approx((t1 * 4.29 + t8 * 15.7) / (t1 + t8))
    assert limits.gbs == pytest.approx((t1 * 288 + t8 * 900) / (t1 + t8))


def test_gpus_named_in_the_rows_each_give_their_own_peak() -> None:
    model = build_model([str(NSYS_V100), str(NSYS_H100)])  # was: no peak at all (two GPU names)
    runs = _runs(model)
    assert (runs[NSYS_V100.name]["peak_gpu"], runs[NSYS_V100.name]["peak_gbs"]) == ("V100 SXM2", 900)
    assert (runs[NSYS_H100.name]["peak_gpu"], runs[NSYS_H100.name]["peak_gbs"]) == ("H100 SXM5", 3350)
    text = export.render([model.runs_table()], "text")
    assert "V100 SXM2" in text and "H100 SXM5" in text  # the runs table shows the peaks when they differ
    # PyProf runs that name no GPU (no peak) beside the V100 trace: only the V100's kernels have a
    # ridge, but it is not the ridge of the whole ranking.
    mixed = build_model([str(SAMPLE), str(NSYS_V100)]).ranking_table(KernelView())
    assert not any(note.startswith("Ridge point: 17.4") for note in mixed.notes)
    assert any("each kernel's, from the peak of the GPU it ran on" in note for note in mixed.notes)
    one = build_model([str(NSYS_V100), str(NSYS_V100.with_name("nsys_cuda_gpu_trace_2023.csv"))], gpu="V100")
    assert one.peak.tflops == 15.7 and "GPU" not in export.render([one.runs_table()], "text").split("\n")[2]


def test_summed_kernel_time_per_device_for_every_source() -> None:
    with KERN_SUM.open(newline="") as handle:
        total_ns = sum(float(row["Total Time (ns)"]) for row in csv.DictReader(handle))
    both = _summary(build_model([str(NSYS_V100), str(KERN_SUM)]))
    summary_device = f"device {KERN_SUM.name} / ?"
    assert _number(both[f"{summary_device}: summed kernel ms"]) == pytest.approx(total_ns / 1e6, abs=5e-4)  # was 0.000
    assert both[f"{summary_device}: GPU busy ms (union of kernels)"] is None  # was 0.000: no start times
    assert both[f"{summary_device}: idle gaps"] is None
    trace_device = f"device {NSYS_V100.name} / Tesla V100-SXM2-16GB (0)"
    assert _number(both[f"{trace_device}: summed kernel ms"]) == pytest.approx(_kernel_ns(NSYS_V100) / 1e6, abs=5e-4)
    assert _number(both[f"{trace_device}: GPU busy ms (union of kernels)"]) == pytest.approx(_kernel_ns(NSYS_V100) / 1e6, abs=5e-4)

    alone = _summary(build_model([str(KERN_SUM)]))  # was: no per-device line at all
    assert _number(alone["device ?: summed kernel ms"]) == pytest.approx(total_ns / 1e6, abs=5e-4)
    assert alone["device ?: GPU busy ms (union of kernels)"] is None and alone["device ?: idle gaps"] is None


def test_profiles_with_the_same_file_name_keep_distinct_labels(tmp_path: Path) -> None:
    for folder in ("node-a", "node-b"):
        (tmp_path / folder).mkdir()
        shutil.copy(NSYS_V100, tmp_path / folder / "trace.csv")
    model = build_model([str(tmp_path)])
    summary = _summary(model)
    assert len([item for item in summary if item.endswith("summed kernel ms")]) == 2
    one_ms = _kernel_ns(NSYS_V100) / 1e6
    for folder in ("node-a", "node-b"):  # was one merged device 'trace.csv / ...' with twice the time
        device = f"device {folder}/trace.csv / Tesla V100-SXM2-16GB (0)"
        assert _number(summary[f"{device}: summed kernel ms"]) == pytest.approx(one_ms, abs=5e-4)
        assert _number(summary[f"{device}: GPU busy ms (union of kernels)"]) == pytest.approx(one_ms, abs=5e-4)
    runs_text = export.render([model.runs_table()], "text")
    assert "node-a/trace.csv" in runs_text and "node-b/trace.csv" in runs_text
