"""Provides one comparison per kind for `diff.diff_paths`: each reads both sides through the
reader its study screen uses and compares them with `metrics.compare`. Each is called with
(base, new, options) and returns a `DiffReport`; none raises on bad content."""

from __future__ import annotations

from pathlib import Path

from gpuscope.metrics.compare import kernels as compare_kernels
from gpuscope.metrics.findings import Finding
from gpuscope.parsers import registry
from gpuscope.tui.model.diff import DiffOptions, DiffReport, slower_beyond, verdict_line


def kernels(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per kernel: launches, time, mean per launch and share, base against new."""
    sides = []
    findings: list[Finding] = []
    for path in (base, new):
        loaded = registry.read_profiles([path])
        findings.extend(loaded.findings)
        sides.append(loaded.kernels)
    empty = [name for name, side in zip(("base", "new"), sides) if side.empty]
    if empty:
        return DiffReport("kernels", f"nothing compared: no kernel launch read on the {' and '.join(empty)} side", findings=findings)
    frame = compare_kernels.compare_kernels(compare_kernels.per_run(sides[0]), compare_kernels.per_run(sides[1]))
    return DiffReport("kernels", verdict_line("kernels", frame), [compare_kernels.kernels_table(frame)], findings,
                      slower_beyond(frame, options.fail_if_slower, "kernel"))
