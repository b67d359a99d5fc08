"""Provides what one MAGMA output file says about its run beside its rows (`RunInfo`), and the
precision a tester's Gflop/s count in: the reader fills them in, the trust rules judge them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuscope.metrics.findings import Finding

PRECISION = {"s": "FP32", "c": "FP32", "d": "FP64", "z": "FP64", "h": "FP16 tensor"}
"""A tester's first letter -> the precision its Gflop/s count (for the device peak)."""


def precision_of(test: str) -> str:
    """A tester's precision letter (`dgemm` -> `d`), "" for a name that has none."""
    return test[0] if len(test) > 1 and test[0] in PRECISION else ""


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
    row_lines: int = 0
    """Lines read as data rows under a header (those that fit it or not)."""
    rows_before_last_banner: int = 0
    """... of them above the last process's banner: few when processes ran one after another."""
    processes: dict[str, int] = field(default_factory=dict)
    """Processes (headers printed) per test label."""
    commands: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)
    """Echoed command lines that name sizes: (line, tester, the sizes asked, in run order)."""
    # Set by the trust rules: the evidence behind their flags.
    peaks: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    warm: dict[str, Any] | None = None
    untrusted: list[str] = field(default_factory=list)
    untrusted_env: str = ""


def block_labels(blocks: list[tuple[str, dict[str, str]]]) -> list[str]:
    """Per (tester, options) block, the test as the tables name it: the tester, plus the options
    whose values differ between that tester's blocks, or that some of them do not print
    (`dpotrf uplo=Lower`): such runs must not be pooled."""
    values: dict[str, dict[str, set[str]]] = {}
    count: dict[str, int] = {}
    having: dict[tuple[str, str], int] = {}
    for test, options in blocks:
        count[test] = count.get(test, 0) + 1
        for name, value in options.items():
            values.setdefault(test, {}).setdefault(name, set()).add(value)
            having[test, name] = having.get((test, name), 0) + 1
    labels = []
    for test, options in blocks:
        varying = sorted(name for name, seen in values.get(test, {}).items() if len(seen) > 1 or having[test, name] < count[test])
        labels.append(" ".join([test] + [f"{name}={options.get(name, '?')}" for name in varying]))
    return labels
