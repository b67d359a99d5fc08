"""Provides `diff_paths`: a baseline against a candidate, for every kind of result gpuscope reads.

    from gpuscope.tui.model.diff import DiffOptions, diff_paths
    report = diff_paths(Path("base/"), Path("new/"), DiffOptions(fail_if_slower=5))
    report.verdict        # "3 kernels slower beyond noise, largest +31 % `gemm<…>(…)`; 2 new"
    report.tables         # the per-item comparison first
    report.slower_beyond  # what --fail-if-slower fails on

Each side is a file or a folder, recognised through the registry (`parsers.registry`); both
must be of one kind: profiles (kernels), MAGMA outputs, job logs (scaling), recordings, or one
table file each. Reading goes through the readers the study screens use; the comparing is
in `metrics.compare`. Nothing here raises on bad input: a side that cannot be read, is empty
or is of another kind gives a report whose verdict says why. No Textual here.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from gpuscope.metrics.compare import kernels as compare_kernels
from gpuscope.metrics.compare import noise
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.parsers import registry
from gpuscope.parsers.files import display_name, walk

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("kernels", "magma", "scaling", "recording", "table")
"""What a side can be, by the view its files open in (a reader's VIEW), in the order a folder
of mixed files is taken as: a folder of profiles with a CSV beside them is profiles."""
VIEW_KIND = {"kernels": "kernels", "magma": "magma", "scaling": "scaling", "replay": "recording", "table": "table"}
NOUNS = {"kernels": "profiles", "magma": "MAGMA outputs", "scaling": "job logs", "recording": "a recording", "table": "a table"}


@dataclass(frozen=True)
class DiffOptions:
    keys: tuple[str, ...] = ()
    """Key columns that match rows of two tables; empty: guessed from the non-numeric columns."""
    fail_if_slower: float | None = None
    """A percentage: only items slower beyond noise and by more than this are `slower_beyond`."""


@dataclass
class DiffReport:
    kind: str
    """kernels, magma, scaling, recording or table; empty when no kind could be told."""
    verdict: str
    """The one line said first."""
    tables: list[ResultTable] = field(default_factory=list)
    """The per-item comparison first, then any others."""
    findings: list[Finding] = field(default_factory=list)
    """What could not be compared, and why."""
    slower_beyond: list[str] = field(default_factory=list)
    """Items slower beyond noise (and beyond --fail-if-slower's percentage when given)."""
    mismatch: bool = False
    """The two sides are of different kinds (or one has no kind): a usage error, not a result."""
    base: str = ""
    new: str = ""
    """The two sides' names, safe to print."""
    judged: int = 0
    """Items a noise test could call slower or not (two values or more on each side): with
    none, an empty `slower_beyond` says nothing about speed."""

    @property
    def compared(self) -> bool:
        """Something was compared (a table of items exists)."""
        return bool(self.tables)


def side_kind(path: Path) -> tuple[str | None, list[Finding]]:
    """The kind of a file or folder (KINDS), or None with findings that say why."""
    label = clean(display_name(path))
    if not path.exists() and not path.is_symlink():
        return None, [Finding("error", "missing", "no such file or folder", label)]
    seen = Counter()
    problems: list[Finding] = []
    for file in walk(path):
        got = registry.recognise(file)
        kind = VIEW_KIND.get(got.screen or "")
        if kind is not None:
            seen[kind] += 1
        elif got.problem is not None and not path.is_dir():
            problems.append(got.problem)
    if not path.is_dir():
        if not seen:
            return None, problems or [Finding("error", "unknown-format", "not a kind gpuscope compares (profiles, MAGMA, job logs, "
                                                                      "recordings, tables)", label)]
        return next(iter(seen)), []
    for kind in KINDS[:-1]:
        if seen[kind]:
            return kind, []
    if seen["table"] == 1:
        return "table", []
    why = f"{seen['table']} tables and no profiles, MAGMA outputs, job logs or recordings: give one table file on each side" if seen["table"] \
        else "no profiles, MAGMA outputs, job logs, recordings or tables in it"
    return None, [Finding("error", "unknown-format", why, label)]


def diff_paths(base: Path, new: Path, options: DiffOptions = DiffOptions()) -> DiffReport:
    """The comparison of `new` against `base`. Never raises on bad input."""
    base, new = Path(base), Path(new)
    (base_kind, base_found), (new_kind, new_found) = side_kind(base), side_kind(new)
    if base_kind is None or new_kind is None:
        findings = [*base_found, *new_found]
        side = "base" if base_kind is None else "new"
        reason = (base_found if base_kind is None else new_found)[0].message
        return DiffReport(base_kind or new_kind or "", f"nothing compared: the {side} side ({clean(display_name(base if side == 'base' else new))}): "
                          f"{reason}", findings=findings, mismatch=True)
    if base_kind != new_kind:
        return DiffReport("", f"nothing compared: base is {NOUNS[base_kind]} ({base_kind}), new is {NOUNS[new_kind]} ({new_kind}); "
                          "both sides must be of one kind", mismatch=True)
    try:
        report = DIFFS[base_kind](base, new, options)
    except MemoryError:
        report = DiffReport(base_kind, "nothing compared: not enough memory to read both sides")
    except Exception as exc:  # noqa: BLE001 - a comparison that fails is said, as the registry says a reader's
        report = DiffReport(base_kind, f"nothing compared: the comparison failed ({type(exc).__name__}: {exc}); please report these files")
    report.base, report.new = clean(display_name(base)), clean(display_name(new))
    if cut := [f for f in report.findings if f.kind in CUT_SHORT]:
        # a side read in part compares what was read, not the run: said before the verdict
        sides = sorted({(f.file or "").split(":")[0] for f in cut} & {"base", "new"}) or ["a side"]
        report.verdict = f"{' and '.join(sides)} read in part ({cut[0].message}): only what was read is compared; {report.verdict}"
    report.verdict = clean(report.verdict)  # names and columns from the files are outside text
    return report


CUT_SHORT = frozenset({"partial", "huge", "too-large", "truncated"})
"""Finding kinds that say a file was read in part (a row, size or decoded-data budget, a cut file)."""


def render(report: DiffReport, fmt: str, width: int | None = None, limit: int | None = None) -> str:
    """The report in `fmt` (metrics.export's formats): the verdict line first, then the tables
    and the findings; CSV is the per-item comparison alone, JSON has the verdict as its first table."""
    from gpuscope.metrics import export
    from gpuscope.metrics.magma.stats import findings_table

    tables = list(report.tables)
    if report.findings and fmt != "csv":
        tables.append(findings_table(report.findings, limit=40 if fmt in ("text", "markdown") else None))
    if fmt == "csv":
        return export.render(tables[:1] or [summary_table(report)], fmt)
    if fmt == "json":
        return export.render([summary_table(report), *tables], fmt)
    body = export.render(tables, fmt, width, limit=limit) if tables else ""
    if fmt == "markdown":
        head = f"**gpuscope diff** ({report.kind or 'no kind'}) `{report.base}` → `{report.new}`: {report.verdict}\n"
    else:
        head = f"{report.kind or 'diff'}: {report.base} → {report.new}\n{report.verdict}\n"
    return head + ("\n" + body if body else "")


def summary_table(report: DiffReport) -> ResultTable:
    """The verdict as a one-row table (JSON's first key, `verdict`)."""
    from gpuscope.metrics.table import Column

    columns = (Column("kind"), Column("base"), Column("new"), Column("verdict"), Column("slower_beyond", "slower beyond noise"))
    return ResultTable("Verdict", columns, ((report.kind, report.base, report.new, report.verdict, len(report.slower_beyond)),))


def verdict_line(noun: str, frame: pd.DataFrame, label: str = "kernel") -> str:
    """The one line said first, from a comparison frame's `verdict`, `slowdown` and `label`
    columns: how many items are slower beyond noise and the largest, what is new or gone; or,
    where no noise test could be made, why, with the largest change."""
    if frame.empty:
        return f"no {noun} on either side"
    verdicts = frame["verdict"].astype(str)
    slower = frame[verdicts == noise.SLOWER]
    faster = int((verdicts == noise.FASTER).sum())
    new, gone = int((verdicts == noise.NEW).sum()), int((verdicts == noise.GONE).sum())
    tail = [f"{new} new"] if new else []
    tail += [f"{gone} vanished"] if gone else []
    untrusted = int(verdicts.str.startswith("no trusted").sum())
    tail += [f"{untrusted} with no trusted rows on a side"] if untrusted else []
    tested = frame["p_value"].notna() if "p_value" in frame else frame["verdict"].isna()
    if len(slower):
        worst = slower.loc[slower["slowdown"].idxmax()]
        head = f"{_count(len(slower), noun)} slower beyond noise (p < {noise.ALPHA}, Holm-corrected), largest {noise.percent(worst['slowdown'])} `{_short(worst[label])}`"
        if faster:
            head += f"; {faster} faster"
    elif tested.any():
        head = f"none of {_count(int(tested.sum()), noun)} tested is slower beyond noise (p < {noise.ALPHA}, Holm-corrected)"
        if faster:
            quickest = frame[verdicts == noise.FASTER]
            best = quickest.loc[quickest["slowdown"].idxmin()]
            head += f"; {faster} faster beyond noise, largest {noise.percent(best['slowdown'])} `{_short(best[label])}`"
    else:
        why = "single run on each side: no noise estimate" if (verdicts == noise.SINGLE).any() else \
              "one run on a side: no noise estimate" if (verdicts == noise.ONE_SIDE).any() else "no noise test could be made"
        both = frame[frame["slowdown"].map(lambda v: isinstance(v, float) and math.isfinite(v))]
        head = why
        if len(both) and (both["slowdown"] == 0).all():
            head += "; no value changed"
        elif len(both):
            worst = both.loc[both["slowdown"].idxmax()]
            head += f"; largest change {noise.percent(worst['slowdown'])} `{_short(worst[label])}`"
    return "; ".join([head, *tail])


def _judged(frame: pd.DataFrame) -> int:
    """How many items had a noise test and a change in time."""
    return int((frame["p_raw"].notna() & frame["slowdown"].notna()).sum())


def _sided(side: str, findings: list[Finding]) -> list[Finding]:
    """The readers' warnings and errors, each file named with the side it is on."""
    return [replace(f, file=f"{side}: {f.file}" if f.file else side) for f in findings if f.severity != "info"]


def _count(n: int, noun: str) -> str:
    """`1 kernel`, `2 kernels`: `noun` is given in the plural."""
    return f"{n} {noun[:-1] if n == 1 and noun.endswith('s') else noun}"


def _short(name: object) -> str:
    from gpuscope.metrics.kernels.names import short_name

    return short_name(clean(str(name)), 60)


def slower_beyond(frame: pd.DataFrame, pct: float | None, label: str) -> list[str]:
    """Labels of the items slower beyond noise (and by more than `pct` % when given)."""
    return [str(r[label]) for _, r in frame.iterrows() if noise.beyond(r["verdict"], r["slowdown"], pct)]


# ============================================================== one comparison per kind
# Each reads both sides through the reader its study screen uses and compares them with
# metrics.compare; none raises on bad content.

def _both_sides(kind: str, base: Path, new: Path, read: Callable[[Path], tuple[Any, list[Finding]]],
                is_empty: Callable[[Any], bool], nothing: str) -> tuple[list[Any], list[Finding], DiffReport | None]:
    """Each side read by `read` (its value and the reader's findings, named with their side),
    and the report to return instead when a side has nothing: `nothing` with `{}` for the side(s)."""
    values, findings = [], []
    for side, path in (("base", base), ("new", new)):
        value, found = read(path)
        values.append(value)
        findings.extend(_sided(side, found))
    empty = [side for side, value in zip(("base", "new"), values) if is_empty(value)]
    if empty:
        return values, findings, DiffReport(kind, "nothing compared: " + nothing.format(" and ".join(empty)), findings=findings)
    return values, findings, None


def _profiles(path: Path) -> tuple[pd.DataFrame, list[Finding]]:
    loaded = registry.read_profiles([path], columns=compare_kernels.READS)
    return loaded.kernels, loaded.findings


def diff_kernels(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per kernel: launches, time, mean per launch and share, base against new."""
    sides, findings, nothing = _both_sides("kernels", base, new, _profiles, lambda k: k.empty, "no kernel launch read on the {} side")
    if nothing is not None:
        return nothing
    frame = compare_kernels.compare_kernels(compare_kernels.per_run(sides[0]), compare_kernels.per_run(sides[1]))
    return DiffReport("kernels", verdict_line("kernels", frame), [compare_kernels.kernels_table(frame)], findings,
                      slower_beyond(frame, options.fail_if_slower, "kernel"), judged=_judged(frame))


def _magma_rows(path: Path) -> tuple[pd.DataFrame, list[Finding]]:
    from gpuscope.parsers.magma import read as magma_read

    result = magma_read.read_tree([path])
    return result.rows, result.findings


def diff_magma(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per tester, implementation, size: the median of the trusted rows, base against new."""
    from gpuscope.metrics.compare import magma as compare_magma

    sides, findings, nothing = _both_sides("magma", base, new, _magma_rows, lambda rows: rows.empty, "no MAGMA row read on the {} side")
    if nothing is not None:
        return nothing
    frame, pooled = compare_magma.compare_magma(*sides)
    frame = frame.assign(label=[compare_magma.label(r) for _, r in frame.iterrows()])
    return DiffReport("magma", verdict_line("sizes", frame, "label"), [compare_magma.magma_table(frame, pooled)], findings,
                      slower_beyond(frame, options.fail_if_slower, "label"), judged=_judged(frame))


def _scaling_model(path: Path) -> tuple[Any, list[Finding]]:
    from gpuscope.tui.model.scaling import load

    model = load([str(path)])
    return model, model.findings


def diff_scaling(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per configuration: time to solution, speedup and efficiency, base against new."""
    from gpuscope.metrics.compare import scaling as compare_scaling

    models, findings, nothing = _both_sides("scaling", base, new, _scaling_model, lambda m: m.empty, "no run read on the {} side")
    if nothing is not None:
        return nothing
    frame = compare_scaling.compare_scaling(models[0].runs, models[0].summary, models[1].runs, models[1].summary)
    frame = frame.assign(label=[compare_scaling.label(r) for _, r in frame.iterrows()])
    return DiffReport("scaling", verdict_line("configurations", frame, "label"), [compare_scaling.scaling_table(frame)], findings,
                      slower_beyond(frame, options.fail_if_slower, "label"), judged=_judged(frame))


def _recordings(path: Path) -> tuple[list[dict[str, float]], list[Finding]]:
    """Each recording below `path` as the measures compared (one dict per job recorded)."""
    from gpuscope.metrics.compare import recording as compare_recording
    from gpuscope.parsers.recording import read as recording_read
    from gpuscope.parsers.recording.gpu_readings import GpuReadingsReduce
    from gpuscope.parsers.recording.usage import usage_per_node

    values, findings = [], []
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
                findings.append(Finding("warning", "simulated", "SIMULATED GPUs (--demo): its GPU numbers are not measurements",
                                        clean(display_name(file))))
    return values, findings


def diff_recording(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Per measure (duration, CPU, memory, GPU activity, energy): each side's recordings."""
    from gpuscope.metrics.compare import recording as compare_recording

    sides, findings, nothing = _both_sides("recording", base, new, _recordings, lambda jobs: not jobs, "no samples read on the {} side")
    if nothing is not None:
        return nothing
    frame = compare_recording.compare_recordings(*sides)
    table = compare_recording.recording_table(frame, len(sides[0]), len(sides[1]))
    return DiffReport("recording", verdict_line("measures", frame, "measure"), [table], findings,
                      slower_beyond(frame, options.fail_if_slower, "measure"), judged=_judged(frame))


def _table(path: Path) -> tuple[pd.DataFrame | None, list[Finding]]:
    got = registry.read(path)
    return got.table, got.findings


def diff_table(base: Path, new: Path, options: DiffOptions) -> DiffReport:
    """Rows matched on key columns, numeric columns' deltas."""
    from gpuscope.metrics.compare import tables as compare_tables

    frames, findings, nothing = _both_sides("table", base, new, _table, lambda t: t is None or t.empty, "no rows read from the {} table")
    if nothing is not None:
        return nothing
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


DIFFS = {"kernels": diff_kernels, "magma": diff_magma, "scaling": diff_scaling, "recording": diff_recording, "table": diff_table}
