"""Provides `read_any()`: the right profiler reader for a file, chosen from its content.

Extensions lie (PyProf's Parquet files end in `.gzip`), so formats are told apart by magic
bytes and by the header words each tool prints. A file no reader knows gives one finding that
lists the formats gpuscope reads.
"""

from __future__ import annotations

import os

from gpuscope.metrics.findings import Finding
from gpuscope.parsers import ncu, nsys, nvprof, pyprof, torch_trace
from gpuscope.parsers.kernel_table import KernelRead, empty
from gpuscope.parsers.textfile import display_name, head

READERS = {"pyprof": pyprof.read, "nsys": nsys.read, "ncu": ncu.read, "nvprof": nvprof.read, "torch": torch_trace.read}
KNOWN = ("PyProf Parquet/--csv/-w, Nsight Systems SQLite or `nsys stats` CSV, Nsight Compute CSV, "
         "nvprof CSV, PyTorch profiler trace (.json/.json.gz)")
PEEK = 64 * 1024


def sniff(path: str | os.PathLike[str]) -> str | None:
    """'pyprof', 'nsys', 'ncu', 'nvprof', 'torch', or None when no reader knows the file (or it
    cannot be opened: `identify` says why)."""
    return identify(path, "")[0]


def identify(path: str | os.PathLike[str], label: str) -> tuple[str | None, list[Finding]]:
    """(the reader's name, []), or (None, the finding that says why not): not a regular file,
    unreadable (permission denied...), or not a profiler export."""
    data, findings = head(path, label, PEEK)
    if data is None:
        if not os.path.lexists(path):
            return None, [Finding("error", "missing", "no such file or folder", label)]
        return None, findings
    kind = _kind(data)
    if kind is None:
        return None, [Finding("error", "unknown-format", f"not a profiler export gpuscope reads (it reads {KNOWN})", label)]
    return kind, []


def _kind(head: bytes) -> str | None:
    if head.startswith(b"PAR1"):
        return "pyprof"
    if head.startswith(b"SQLite format 3"):
        return "nsys"
    if b"traceEvents" in head or head.lstrip().startswith(b"[{"):
        return "torch"
    text = head.decode("utf-8", "replace")
    if "==PROF==" in text or ('"Kernel Name"' in text and ("Metric" in text or "__" in text)):
        return "ncu"
    if "NVPROF" in text or "==" in text.split("\n", 1)[0] and "Profiling result" in text or '"Grid X"' in text \
            or "GPU activities:" in text or ("Invocations" in text and "Metric Name" in text) \
            or ("Time(%)" in text and "Calls" in text and "Avg" in text):  # text summary, --metrics, summary CSV
        return "nvprof"
    if "Sil(ns)" in text or ('"Kernel"' in text and '"Op"' in text) or ("Kernel" in text and "FLOPs" in text):
        return "pyprof"
    if "Instances" in text or "(ns)" in text or "(us)" in text or "Start(sec)" in text or "cuda_gpu" in text:
        return "nsys"
    return None


def read_any(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """Read a profiler export of any known kind into the canonical kernel table."""
    label = label if label is not None else display_name(path)
    kind, findings = identify(path, label)
    if kind is None:
        return KernelRead(empty("unknown"), findings)
    return READERS[kind](path, label)
