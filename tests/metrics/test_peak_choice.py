"""Which peak a run is measured against: flags > --gpu > file/NVML meta > none."""

from __future__ import annotations

import pytest

from gpuscope.metrics.kernels.peaks import known_names
from gpuscope.metrics.kernels.peak_choice import choose_peak


def test_gpu_name_gives_table_figures_and_says_so() -> None:
    peak = choose_peak(gpu="K40m")
    assert (peak.tflops, peak.gbs, peak.precision) == (4.29, 288.0, "FP32")
    assert peak.source_text.startswith("Tesla K40m FP32 4.29 TFLOPS, 288 GB/s (")
    assert "--gpu K40m" in peak.source_text and "base-clock" in peak.source_text
    assert peak.complete


@pytest.mark.parametrize(("precision", "tflops", "label"), [("fp64", 7.8, "FP64"), ("fp32", 15.7, "FP32"), ("fp16", 125, "FP16-tensor")])
def test_precision_picks_the_column(precision: str, tflops: float, label: str) -> None:
    peak = choose_peak(gpu="Tesla V100-SXM2-32GB", precision=precision)
    assert peak.tflops == tflops and peak.precision == label and label in peak.source_text


def test_explicit_flags_beat_gpu_and_meta() -> None:
    meta = {"gpu_name": "A100-SXM4-40GB", "peak_gbs": 1555.2}
    peak = choose_peak(gpu="K40m", peak_tflops=3.0, peak_gbs=200.0, meta=meta)
    assert (peak.tflops, peak.gbs) == (3.0, 200.0)
    assert "--peak-tflops" in peak.source_text and "--peak-gbs" in peak.source_text


def test_one_flag_overrides_only_its_value() -> None:
    peak = choose_peak(gpu="K40m", peak_tflops=5.04)
    assert (peak.tflops, peak.gbs) == (5.04, 288.0)
    assert "5.04 TFLOPS from --peak-tflops" in peak.source_text and "288 GB/s from --gpu K40m" in peak.source_text


def test_gpu_beats_meta() -> None:
    peak = choose_peak(gpu="K40m", meta={"gpu_name": "A100-SXM4-40GB", "peak_gbs": 1555.2})
    assert (peak.tflops, peak.gbs) == (4.29, 288.0)


def test_meta_from_nsys_measured_bandwidth_and_name() -> None:
    peak = choose_peak(meta={"gpu_name": "NVIDIA A100-SXM4-40GB", "peak_gbs": 1555.2})
    assert (peak.tflops, peak.gbs) == (19.5, 1555.2)
    assert "1555.2 GB/s from the profile" in peak.source_text


def test_meta_from_nvml_says_nvml() -> None:
    peak = choose_peak(meta={"gpu_name": "NVIDIA H100 80GB HBM3", "peak_source": "NVML"})
    assert peak.tflops == 67 and peak.gbs == 3350 and "NVML" in peak.source_text


def test_meta_with_unknown_name_keeps_bandwidth_and_says_what_is_missing() -> None:
    peak = choose_peak(meta={"gpu_name": "Mystery GPU", "peak_gbs": 500})
    assert peak.tflops is None and peak.gbs == 500 and not peak.complete
    assert "--peak-tflops" in peak.note and "Mystery GPU" in peak.note


def test_no_peak_has_a_clear_message() -> None:
    peak = choose_peak()
    assert peak.tflops is None and peak.gbs is None
    assert "--gpu" in peak.source_text and "--peak-tflops" in peak.source_text and "--peak-gbs" in peak.source_text


def test_no_fp16_peak_on_k40m() -> None:
    peak = choose_peak(gpu="K40m", precision="fp16")
    assert peak.tflops is None and peak.gbs == 288.0 and "--peak-tflops" in peak.note


def test_unknown_gpu_lists_known_names_and_flags() -> None:
    with pytest.raises(ValueError) as err:
        choose_peak(gpu="GTX 9999")
    message = str(err.value)
    assert "GTX 9999" in message and "--peak-tflops" in message and "--peak-gbs" in message
    assert all(name in message for name in known_names())


def test_unknown_gpu_is_fine_when_both_flags_are_given() -> None:
    assert choose_peak(gpu="GTX 9999", peak_tflops=1, peak_gbs=2).tflops == 1


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "x", True])
def test_bad_flag_values_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="--peak-tflops"):
        choose_peak(peak_tflops=bad)  # type: ignore[arg-type]


def test_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision"):
        choose_peak(gpu="K40m", precision="int4")
