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

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gpuscope.metrics.compare import noise
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.parsers import registry
from gpuscope.parsers.files import display_name, walk

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
    from gpuscope.tui.model import diff_kinds

    try:
        report = getattr(diff_kinds, base_kind)(base, new, options)
    except MemoryError:
        report = DiffReport(base_kind, "nothing compared: not enough memory to read both sides")
    report.base, report.new = clean(display_name(base)), clean(display_name(new))
    return report


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


def verdict_line(noun: str, frame, label: str = "kernel") -> str:
    """The one line said first, from a comparison frame's `verdict`, `slowdown` and `label`
    columns: how many items are slower beyond noise and the largest, what is new or gone; or,
    where no noise test could be made, why, with the largest change."""
    import math

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
            head += f"; {faster} faster beyond noise"
    else:
        why = "single run on each side: no noise estimate" if (verdicts == noise.SINGLE).any() else \
              "one run on a side: no noise estimate" if (verdicts == noise.ONE_SIDE).any() else "no noise test could be made"
        both = frame[frame["slowdown"].map(lambda v: isinstance(v, float) and math.isfinite(v))]
        head = why
        if len(both):
            worst = both.loc[both["slowdown"].idxmax()]
            head += f"; largest change {noise.percent(worst['slowdown'])} `{_short(worst[label])}`"
    return "; ".join([head, *tail])


def _count(n: int, noun: str) -> str:
    """`1 kernel`, `2 kernels`: `noun` is given in the plural."""
    return f"{n} {noun[:-1] if n == 1 and noun.endswith('s') else noun}"


def _short(name: object) -> str:
    from gpuscope.metrics.kernels.names import short_name

    return short_name(clean(str(name)), 60)


def slower_beyond(frame, pct: float | None, label: str) -> list[str]:
    """Labels of the items slower beyond noise (and by more than `pct` % when given)."""
    return [str(r[label]) for _, r in frame.iterrows() if noise.beyond(r["verdict"], r["slowdown"], pct)]
