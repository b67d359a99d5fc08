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


def magma(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per tester, implementation, size: the median of the trusted rows, base against new."""
    from gpuscope.metrics.compare import magma as compare_magma
    from gpuscope.parsers.magma import read as magma_read

    sides, findings = [], []
    for path in (base, new):
        result = magma_read.read_tree([path])
        findings.extend(f for f in result.findings if f.severity != "info")
        sides.append(result.rows)
    empty = [name for name, side in zip(("base", "new"), sides) if side.empty]
    if empty:
        return DiffReport("magma", f"nothing compared: no MAGMA row read on the {' and '.join(empty)} side", findings=findings)
    frame, pooled = compare_magma.compare_magma(*sides)
    frame = frame.assign(label=[compare_magma.label(r) for _, r in frame.iterrows()])
    return DiffReport("magma", verdict_line("sizes", frame, "label"), [compare_magma.magma_table(frame, pooled)], findings,
                      slower_beyond(frame, options.fail_if_slower, "label"))


def scaling(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per configuration: time to solution, speedup and efficiency, base against new."""
    from gpuscope.metrics.compare import scaling as compare_scaling
    from gpuscope.tui.model.scaling import load

    models, findings = [], []
    for path in (base, new):
        model = load([str(path)])
        findings.extend(f for f in model.findings if f.severity != "info")
        models.append(model)
    empty = [name for name, model in zip(("base", "new"), models) if model.empty]
    if empty:
        return DiffReport("scaling", f"nothing compared: no run read on the {' and '.join(empty)} side", findings=findings)
    frame = compare_scaling.compare_scaling(models[0].runs, models[0].summary, models[1].runs, models[1].summary)
    frame = frame.assign(label=[compare_scaling.label(r) for _, r in frame.iterrows()])
    return DiffReport("scaling", verdict_line("configurations", frame, "label"), [compare_scaling.scaling_table(frame)], findings,
                      slower_beyond(frame, options.fail_if_slower, "label"))


def recording(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per measure (duration, CPU, memory, GPU activity, energy): each side's recordings."""
    from gpuscope.metrics.compare import recording as compare_recording
    from gpuscope.parsers.files import walk
    from gpuscope.parsers.recording import read as recording_read
    from gpuscope.parsers.recording.gpu_readings import GpuReadingsReduce
    from gpuscope.parsers.recording.usage import usage_per_node

    sides: list[list[dict[str, float]]] = []
    findings: list[Finding] = []
    for path in (base, new):
        values = []
        for file in walk(path):
            if registry.recognise(file).kind != "recording":
                continue
            stream = recording_read.Stream(file)
            reduce = GpuReadingsReduce()
            usages = usage_per_node(reduce.tap(stream.batches()))
            findings.extend(stream.findings)
            if stream.samples:
                gpus = reduce.gpus()
                values.append(compare_recording.job_values(usages, gpus, reduce.cpu()))
                if any(g.simulated for g in gpus):
                    findings.append(Finding("warning", "simulated", "SIMULATED GPUs (--demo): its GPU numbers are not measurements", str(file)))
        sides.append(values)
    empty = [name for name, side in zip(("base", "new"), sides) if not side]
    if empty:
        return DiffReport("recording", f"nothing compared: no samples read on the {' and '.join(empty)} side", findings=findings)
    frame = compare_recording.compare_recordings(*sides)
    table = compare_recording.recording_table(frame, len(sides[0]), len(sides[1]))
    return DiffReport("recording", verdict_line("measures", frame, "measure"), [table], findings,
                      slower_beyond(frame, options.fail_if_slower, "measure"))


def table(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Rows matched on key columns, numeric columns' deltas."""
    from gpuscope.metrics.compare import noise
    from gpuscope.metrics.compare import tables as compare_tables

    frames, findings = [], []
    for path in (base, new):
        got = registry.read(path)
        findings.extend(f for f in got.findings if f.severity != "info")
        frames.append(got.table)
    empty = [name for name, frame in zip(("base", "new"), frames) if frame is None or frame.empty]
    if empty:
        return DiffReport("table", f"nothing compared: no rows read from the {' and '.join(empty)} table", findings=findings)
    keys = list(options.keys) or compare_tables.guess_keys(*frames)
    try:
        frame, values = compare_tables.compare_tables(*frames, keys)
    except KeyError as exc:
        return DiffReport("table", f"nothing compared: {exc.args[0]}", findings=findings, mismatch=True)
    matches = frame["match"].value_counts()
    parts = [f"{int(matches.get('same', 0))} rows matched on {', '.join(keys) or 'position'}"]
    largest = compare_tables.largest_change(frame, values, keys)
    said = f"; largest change {noise.percent(largest[0])} `{largest[1]}`" if largest and largest[0] else "; no value changed" if largest else ""
    parts.append("one value per cell: no noise estimate" + said)
    parts += [f"{int(matches[m])} {m}" for m in ("new", "vanished") if matches.get(m)]
    if not values:
        findings.append(Finding("warning", "no-numbers", "the two tables share no numeric column: rows are matched, nothing is compared"))
    return DiffReport("table", "; ".join(parts), [compare_tables.table_table(frame, keys, values, not options.keys)], findings)
