"""Provides the GPU peak table: dense FP64/FP32/tensor TFLOPS and memory bandwidth.

Figures are per device as a profiler or MAGMA sees it (a K80 board is two devices), dense
(no sparsity), at boost clock unless the note says otherwise. Sources: vendor datasheets as
collected in shared/research/profile-anchors.md §4.1. A measured value above the peak for its
precision is physically impossible and points at a broken measurement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GpuPeak:
    name: str
    fp64_tflops: float
    fp32_tflops: float
    fp16_tc_tflops: float | None
    bandwidth_gbs: float
    source: str
    note: str = ""
    clock_mhz: float | None = None
    """The clock the figures are quoted at, where the datasheet gives it: a device that prints
    another clock (MAGMA's banner does) has its peak scaled to that clock."""

    def tflops(self, precision: str) -> float | None:
        """Peak for a MAGMA precision letter: d/z -> FP64, s/c -> FP32, h -> FP16 tensor."""
        return {"d": self.fp64_tflops, "z": self.fp64_tflops, "s": self.fp32_tflops,
                "c": self.fp32_tflops, "h": self.fp16_tc_tflops}.get(precision)


def _p(name: str, fp64: float, fp32: float, fp16: float | None, bw: float, source: str, note: str = "", clock: float | None = None) -> GpuPeak:
    return GpuPeak(name, fp64, fp32, fp16, bw, source, note, clock)


# (pattern on the normalised device name, peak). Specific variants before general ones; where a
# name is ambiguous the higher peak is used, so nothing is called impossible by mistake.
PEAKS: tuple[tuple[str, GpuPeak], ...] = (
    (r"k40", _p("Tesla K40m", 1.43, 4.29, None, 288, "K40 datasheet", "4.29 TFLOPS FP32 is the base-clock (745 MHz) figure; 5.04 at boost", clock=745)),
    (r"k80", _p("Tesla K80 (one GPU)", 1.46, 4.37, None, 240, "K80 datasheet", "per device: a K80 board is two GPUs")),
    (r"p100.*pcie", _p("Tesla P100 PCIe", 4.7, 9.3, 18.7, 732, "P100 datasheet", clock=1329)),
    (r"p100", _p("Tesla P100 SXM2", 5.3, 10.6, 21.2, 732, "P100 datasheet", clock=1480)),
    (r"v100.*pcie", _p("V100 PCIe", 7.0, 14.0, 112, 900, "V100 datasheet", clock=1380)),
    (r"v100", _p("V100 SXM2", 7.8, 15.7, 125, 900, "V100 datasheet", clock=1530)),
    (r"\bt4\b", _p("T4", 0.25, 8.1, 65, 320, "T4 datasheet")),
    (r"a10g", _p("A10G", 0.98, 31.2, 125, 600, "A10 datasheet (AWS A10G uses the A10 figures)")),
    (r"\ba10\b", _p("A10", 0.98, 31.2, 125, 600, "A10 datasheet")),
    (r"\ba30\b", _p("A30", 10.3, 10.3, 165, 933, "A30 datasheet", "FP64 10.3 with tensor cores, 5.2 without")),
    (r"\ba40\b", _p("A40", 0.58, 37.4, 149.7, 696, "A40 datasheet")),
    (r"a100.*80.*pcie|a100.*pcie.*80", _p("A100 80GB PCIe", 19.5, 19.5, 312, 1935, "A100 datasheet", "FP64 19.5 with tensor cores, 9.7 without")),
    (r"a100.*pcie", _p("A100 40GB PCIe", 19.5, 19.5, 312, 1555, "A100 datasheet", "FP64 19.5 with tensor cores, 9.7 without")),
    (r"a100.*80", _p("A100 80GB SXM4", 19.5, 19.5, 312, 2039, "A100 datasheet; nsys export", "FP64 19.5 with tensor cores, 9.7 without")),
    (r"a100|pg509", _p("A100 40GB SXM4", 19.5, 19.5, 312, 1555, "A100 datasheet; nsys export", "FP64 19.5 with tensor cores, 9.7 without")),
    (r"a6000", _p("RTX A6000", 1.2, 38.7, 154.8, 768, "RTX A6000 datasheet")),
    (r"\bl4\b", _p("L4", 0.49, 30.3, 121, 300, "L4 datasheet")),
    (r"l40s", _p("L40S", 1.4, 91.6, 362, 864, "L40S datasheet")),
    (r"h100.*pcie", _p("H100 PCIe", 51, 51, 756, 2000, "H100 datasheet", "FP64 51 with tensor cores, 25.6 without")),
    (r"h200", _p("H200 SXM", 67, 67, 989, 4800, "H200 spec", "FP64 67 with tensor cores, 34 without")),
    (r"h100", _p("H100 SXM5", 67, 67, 989.4, 3350, "H100 datasheet", "FP64 67 with tensor cores, 34 without")),
    (r"b200", _p("B200", 40, 80, 2250, 8000, "HGX B200 spec")),
    (r"rtx 5090", _p("GeForce RTX 5090", 1.64, 104.8, 209.5, 1792, "RTX 5090 specs (21,760 cores x 2 FLOP x 2.407 GHz boost; "
                     "512-bit 28 Gbps GDDR7); not in profile-anchors §4.1", "FP64 is 1/64 of FP32; FP16 tensor dense with FP32 accumulate")),
    (r"mi300x", _p("MI300X", 163.4, 163.4, 1307.4, 5300, "AMD MI300X datasheet", "matrix-core FP64")),
    (r"mi250x", _p("MI250X (one GCD)", 47.9, 47.9, 191.5, 1638, "AMD MI250X datasheet", "per GCD: an MI250X package is two devices")),
)
_COMPILED = tuple((re.compile(p), peak) for p, peak in PEAKS)


def normalise(name: str) -> str:
    """Lower case, vendor words dropped, separators as spaces: 'Tesla V100-SXM2-32GB' -> 'v100 sxm2 32gb'."""
    text = re.sub(r"[-_/,()]+", " ", name.lower())
    text = re.sub(r"\b(nvidia|tesla|geforce|amd|instinct|radeon)\b", " ", text)
    return " ".join(text.split())


def find_peak(device_name: str) -> GpuPeak | None:
    """The table entry for a device name as MAGMA, NVML or a profiler prints it, or None."""
    text = normalise(device_name)
    for regex, peak in _COMPILED:
        if regex.search(text):
            return peak
    return None


def peak_at_clock(device_name: str, precision: str, clock_mhz: float | None) -> tuple[float, str] | None:
    """Peak Gflop/s of a device for a MAGMA precision letter, and where it comes from: scaled
    to the clock the device printed when the table knows the clock of its figure."""
    peak = find_peak(device_name)
    tflops = peak.tflops(precision) if peak else None
    if not tflops:
        return None
    if peak.clock_mhz and clock_mhz and abs(clock_mhz - peak.clock_mhz) > 1:  # type: ignore[union-attr]
        return tflops * 1000 * clock_mhz / peak.clock_mhz, f"{peak.name} datasheet at its printed {clock_mhz:g} MHz clock"  # type: ignore[union-attr]
    at = f" at {peak.clock_mhz:g} MHz" if peak.clock_mhz else ""  # type: ignore[union-attr]
    return tflops * 1000, f"{peak.name} datasheet{at}"  # type: ignore[union-attr]


def known_names() -> list[str]:
    return [peak.name for _, peak in PEAKS]
