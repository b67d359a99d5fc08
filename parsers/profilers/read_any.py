"""Provides `read_any()`: the right profiler reader for a file, chosen from its content.

Extensions lie (PyProf's Parquet files end in `.gzip`), so formats are told apart by magic
bytes and by the header words each tool prints: the rules are the registry's (parsers/rules,
`kernel_kind`), the one place that describes every kind of file. A file no reader knows gives one finding that
lists the formats gpuscope reads.
"""

from __future__ import annotations

import os

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.profilers import ncu
from gpuscope.parsers.profilers import nsys
from gpuscope.parsers.profilers import nvprof
from gpuscope.parsers.profilers import pyprof
from gpuscope.parsers.profilers import torch_trace
from gpuscope.parsers.profilers.kernel_table import KernelRead, empty
from gpuscope.parsers.rules import kernel_kind
from gpuscope.parsers.files import display_name, head

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
    kind = kernel_kind(data)
    if kind is None:
        return None, [Finding("error", "unknown-format", f"not a profiler export gpuscope reads (it reads {KNOWN})", label)]
    return kind, []


def read_any(path: str | os.PathLike[str], label: str | None = None) -> KernelRead:
    """Read a profiler export of any known kind into the canonical kernel table."""
    label = label if label is not None else display_name(path)
    kind, findings = identify(path, label)
    if kind is None:
        return KernelRead(empty("unknown"), findings)
    return READERS[kind](path, label)
