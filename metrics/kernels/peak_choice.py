"""Provides `choose_peak`: which peak FLOP/s and bandwidth a run is measured against, and why.

Priority, per value: explicit `--peak-tflops` / `--peak-gbs` > `--gpu NAME` (the table in
`gpu_peaks`) > facts from the file or the machine (`meta`: nsys `TARGET_INFO_GPU` gives
`gpu_name` and a measured `peak_gbs`; a torch trace gives `gpu_name`; NVML, when run on the GPU,
gives the same keys with `peak_source='NVML'`) > none, with a message that says how to give one.
The screen shows `ChosenPeak.source_text` so it always says which peak was used and its precision.
Several profiles read together are each measured against their own GPU (`per_profile`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gpuscope.metrics.kernels.peaks import GpuPeak, find_peak, known_names

PRECISIONS = {"fp64": "d", "fp32": "s", "fp16": "h", "d": "d", "z": "d", "s": "s", "c": "s", "h": "h",
              "double": "d", "single": "s", "half": "h", "fp16-tensor": "h", "fp16_tc": "h"}
LABEL = {"d": "FP64", "s": "FP32", "h": "FP16-tensor"}
FLAGS_HINT = "give the peak yourself with --peak-tflops N and --peak-gbs N, or name the GPU with --gpu NAME"


@dataclass(frozen=True)
class ChosenPeak:
    tflops: float | None
    """Peak TFLOPS for `precision`; None when unknown."""
    gbs: float | None
    """Peak memory bandwidth in GB/s; None when unknown."""
    precision: str
    """'FP64', 'FP32' or 'FP16-tensor'."""
    source_text: str
    """One line for the screen: the figures, the precision, and where they came from."""
    note: str = ""
    gpu: str = ""
    """The GPU table entry used, e.g. 'Tesla K40m'; empty when the peak came from flags only."""

    @property
    def complete(self) -> bool:
        return self.tflops is not None and self.gbs is not None


def _positive(value: Any, flag: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{flag} must be a positive number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0:
        raise ValueError(f"{flag} must be a positive finite number, got {value!r}")
    return number


def unknown_gpu_message(name: str) -> str:
    return (f"unknown GPU {name!r}. Known GPUs: {', '.join(known_names())}. "
            f"For another GPU, {FLAGS_HINT.replace('name the GPU with --gpu NAME', 'pass --gpu with one of the names above')}.")


def _fmt(value: float | None, unit: str) -> str:
    return f"{value:g} {unit}" if value is not None else f"? {unit}"


def choose_peak(gpu: str | None = None, peak_tflops: float | None = None, peak_gbs: float | None = None,
                precision: str = "fp32", meta: Mapping[str, Any] | None = None) -> ChosenPeak:
    """The peak to use. Raises ValueError for a bad flag: an unknown --gpu (the message lists the
    known names and the --peak-tflops/--peak-gbs flags), a non-positive peak, an unknown precision."""
    letter = PRECISIONS.get(str(precision).lower())
    if letter is None:
        raise ValueError(f"unknown precision {precision!r}: use fp64, fp32 or fp16")
    label = LABEL[letter]
    tflops = None if peak_tflops is None else _positive(peak_tflops, "--peak-tflops")
    gbs = None if peak_gbs is None else _positive(peak_gbs, "--peak-gbs")
    origins: list[str] = []
    notes: list[str] = []
    if tflops is not None:
        origins.append(f"{tflops:g} TFLOPS from --peak-tflops")
    if gbs is not None:
        origins.append(f"{gbs:g} GB/s from --peak-gbs")

    table: GpuPeak | None = None
    table_origin = ""
    if gpu is not None and (tflops is None or gbs is None):
        table = find_peak(gpu)
        if table is None:
            raise ValueError(unknown_gpu_message(gpu))
        table_origin = f"--gpu {gpu}"
    meta = meta or {}
    meta_source = str(meta.get("peak_source") or "the profile")
    if table is None and (tflops is None or gbs is None):
        if gbs is None and _finite(meta.get("peak_gbs")):
            gbs = float(meta["peak_gbs"])
            origins.append(f"{gbs:g} GB/s from {meta_source}")
        name = meta.get("gpu_name")
        if name and (tflops is None or gbs is None):
            table = find_peak(str(name))
            table_origin = f"GPU name {name!r} in {meta_source}"
            if table is None:
                notes.append(f"GPU {name!r} named in {meta_source} is not in the peak table; {FLAGS_HINT}")
    if table is not None:
        used = []
        if tflops is None:
            tflops = table.tflops(letter)
            if tflops is None:
                notes.append(f"{table.name} has no {label} peak in the table; pass --peak-tflops")
            else:
                used.append(f"{tflops:g} TFLOPS")
        if gbs is None:
            gbs = float(table.bandwidth_gbs)
            used.append(f"{gbs:g} GB/s")
        if used:
            origins.append(f"{' and '.join(used)} from {table_origin} (table: {table.source})")
        if table.note:
            notes.append(table.note)

    if tflops is None and gbs is None:
        return ChosenPeak(None, None, label, f"no peak known: {FLAGS_HINT}", "; ".join(notes))
    missing = [what for what, v in (("TFLOPS", tflops), ("GB/s", gbs)) if v is None]
    if missing:
        notes.append(f"no peak {' or '.join(missing)}: {FLAGS_HINT}")
    name = table.name + " " if table is not None else ""
    head = f"{name}{label} {_fmt(tflops, 'TFLOPS')}, {_fmt(gbs, 'GB/s')}"
    detail = "; ".join(origins + notes)
    return ChosenPeak(tflops, gbs, label, f"{head} ({detail})", "; ".join(notes), table.name if table is not None else "")


def _finite(value: Any) -> bool:
    try:
        return value is not None and not isinstance(value, bool) and math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        return False


def per_profile(peaks: Sequence[ChosenPeak]) -> ChosenPeak:
    """What several profiles, each with its own peak, are measured against: their common peak when
    they all have the same figures; else a peak without figures (no single roof) whose text lists
    each GPU's peak and how many profiles ran on it. Raises ValueError for no peaks."""
    if not peaks:
        raise ValueError("no peaks")
    counts: dict[tuple[Any, ...], list[ChosenPeak]] = {}
    for peak in peaks:
        counts.setdefault((peak.tflops, peak.gbs), []).append(peak)
    if len(counts) == 1:
        return peaks[0]
    parts = []
    for (tflops, gbs), same in counts.items():
        figures, gpu = f"{_fmt(tflops, 'TFLOPS')}, {_fmt(gbs, 'GB/s')}", same[0].gpu
        what = (f"{gpu} {figures}" if gpu else figures) if tflops is not None or gbs is not None else "no peak known"
        parts.append(f"{what} ({len(same)} profile{'s' if len(same) > 1 else ''})")
    label = peaks[0].precision
    text = f"{label}, each profile against its own GPU's peak: " + "; ".join(parts)
    return ChosenPeak(None, None, label, text, "", "")
