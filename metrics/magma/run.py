"""Provides what one MAGMA output file says about its run beside its rows (`RunInfo`), and the
precision a tester's Gflop/s count in: the reader fills them in, the trust rules judge them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuscope.metrics.findings import Finding

PRECISION = {"s": "FP32", "c": "FP32", "d": "FP64", "z": "FP64", "h": "FP16 tensor"}
"""A tester's first letter -> the precision its Gflop/s count (for the device peak)."""


@dataclass
class RunInfo:
    """What one file says about its run, beside its rows."""

    label: str
    context: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    digest: str = ""
    banners: int = 0
    device: str = ""
    clock_mhz: float | None = None
    visible_devices: int = 0
    version: str = ""
    tests: list[str] = field(default_factory=list)
    asserts: list[tuple[int, str]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)
    orphan_rows: int = 0
    unparsed: list[int] = field(default_factory=list)
    unknown_headers: list[tuple[int, str]] = field(default_factory=list)
    start: float | None = None
    end: float | None = None
    exit_code: int | None = None
    cancelled: bool = False
    last_line_cut: bool = False
    run_nodes: int | None = None
    """Nodes the run itself names (Flux jobspec and taskmap, SLURM_NNODES), when it does."""
    hosts: set[str] = field(default_factory=set)
    last_banner_line: int = 0
    overlapped: bool = False
    """Processes ran at the same time: a process started before the others' tables were done."""
    processes: dict[str, int] = field(default_factory=dict)
    """Processes (headers printed) per test label."""
    commands: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)
    """Echoed command lines that name sizes: (line, tester, the sizes asked, in run order)."""
    # Set by the trust rules: the evidence behind their flags.
    peaks: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    warm: dict[str, Any] | None = None
    untrusted: list[str] = field(default_factory=list)
    untrusted_env: str = ""
