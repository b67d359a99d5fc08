"""Provides the kernels screen's data: what is loaded and derived once, and the view picked.

`build_model` runs in the screen's thread worker and in `gpuscope kernels --format ...`, so the
screen and the printed report show the same numbers. It reads every profile
(`parsers.profile_runs.read_runs`), chooses the peak, and computes the summary, the cards, the
rankings per kernel, per direction and per op, and the per-run table. `KernelView` is the
user's view state (sort, grouping, name filter); applying it only sorts and filters a ready
frame of a few hundred rows, so key presses never wait for the files. No Textual here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from gpuscope.collectors import nvml
from gpuscope.metrics import kernel_efficiency as ke
from gpuscope.metrics import kernel_metrics, kernel_runs, kernel_timeline, magma_stats
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.gpu_peaks import find_peak
from gpuscope.metrics.peak_choice import ChosenPeak, choose_peak
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers.profile_runs import ProfileRuns, read_runs

GROUPS = ("kernel", "direction", "op")
GROUP_TITLES = {"kernel": "Kernel", "direction": "Direction", "op": "Op"}
SORTS = {"time": "total_ns", "flops": "flops_eff_pct", "bandwidth": "bw_eff_pct"}
SORT_LABELS = {"time": "total time", "flops": "FLOPS efficiency", "bandwidth": "bandwidth efficiency"}
NO_VALUE = "(none)"
"""Label of launches whose direction or op is unknown, when grouping by it."""


@dataclass(frozen=True)
class KernelView:
    """What the ranking shows: sort key, grouping, a name filter and an optional row limit."""

    sort: str = "flops"
    group: str = "kernel"
    filter: str = ""
    top: int = 0


@dataclass(frozen=True)
class Card:
    """One summary card: a title, one big value, one line of detail."""

    title: str
    value: str
    detail: str


@dataclass(frozen=True)
class KernelsModel:
    """Everything the screen and the report need, computed once off the main thread."""

    paths: tuple[str, ...]
    peak: ChosenPeak
    summary: ResultTable
    cards: tuple[Card, ...]
    rankings: Mapping[str, pd.DataFrame]
    """Per grouping in GROUPS that has values: `kernel_metrics.kernel_table` output, the group's
    value in column `kernel`, longest total time first."""
    runs: pd.DataFrame
    """One row per profile read: file, config fields, efficiencies (`metrics.kernel_runs`)."""
    fields: tuple[str, ...]
    group_by: tuple[str, ...] = ()
    grouped: ResultTable | None = None
    markers_found: int = 0
    findings: tuple[Finding, ...] = field(default=())
    launches: pd.DataFrame | None = None
    """Kernel launches (name, direction, op, time, FLOPs, bytes): a name filter with a grouping
    re-ranks the matching launches, so `sgemm` grouped by direction is sgemm's time per direction."""
    _filtered: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict, compare=False, repr=False)
    """Filtered groupings already computed (see `_filtered_ranking`)."""

    @property
    def empty(self) -> bool:
        return self.rankings["kernel"].empty

    @property
    def groups(self) -> tuple[str, ...]:
        """The groupings offered: per kernel always, direction and op only when present."""
        return tuple(g for g in GROUPS if g in self.rankings)

    @property
    def show_runs(self) -> bool:
        """The runs table says something beyond the summary: several runs, markers, or grouping."""
        return len(self.runs) > 1 or self.markers_found > 0 or bool(self.group_by)

    def rows(self, view: KernelView) -> pd.DataFrame:
        """The ranking of `view.group`, filtered by name (case-insensitive substring), sorted, cut."""
        group = view.group if view.group in self.rankings else "kernel"
        frame = self.rankings[group]
        if view.filter and group != "kernel" and self.launches is not None:
            frame = self._filtered_ranking(group, view.filter)
        elif view.filter:
            frame = frame[frame["kernel"].str.contains(view.filter, case=False, regex=False, na=False)]
        if view.sort != "time":  # rankings are stored longest first: ties keep that order
            frame = frame.sort_values(SORTS[view.sort], ascending=False, na_position="last", kind="stable")
        frame = frame.reset_index(drop=True)
        return frame.head(view.top) if view.top else frame

    def _filtered_ranking(self, group: str, text: str) -> pd.DataFrame:
        """`group`'s ranking of the launches whose kernel name contains `text`, kept per (group,
        text): the screen asks for it at each key press and again for the bars and the roofline,
        and a regrouping walks every launch."""
        key = (group, text.lower())
        if key not in self._filtered:
            assert self.launches is not None
            names = self.launches["kernel"].astype("category")
            hit = names.cat.categories.str.contains(text, case=False, regex=False)
            self._filtered[key] = group_ranking(self.launches[hit[names.cat.codes] & (names.cat.codes >= 0)], group, self.peak)
        return self._filtered[key]

    def ranking_table(self, view: KernelView) -> ResultTable:
        group = view.group if view.group in self.rankings else "kernel"
        rows = self.rows(view)
        title = "Kernels" if group == "kernel" else f"Kernels by {group}"
        table = kernel_metrics.to_result_table(rows, self.peak, title)
        notes = list(table.notes)
        total = len(self.rankings[group])
        if view.filter and group != "kernel":
            notes.append(f"Filter {view.filter!r}: launches of kernels whose name contains it, per {group} "
                         f"({len(rows)} of {total} {group} value(s)); share % is of those launches")
        elif view.filter:
            notes.append(f"Filter {view.filter!r}: {len(rows)} of {total} {GROUP_TITLES[group].lower()} name(s)")
        if group != "kernel":  # CSV/JSON key says what the first column holds
            columns = (Column(group, GROUP_TITLES[group]), *table.columns[1:])
            return replace(table, columns=columns, notes=tuple(notes))
        return replace(table, notes=tuple(notes))

    def runs_table(self, compact: bool = True) -> ResultTable:
        return kernel_runs.runs_table(self.runs, self.fields, compact)

    def findings_table(self, limit: int | None = 40) -> ResultTable:
        return magma_stats.findings_table(list(self.findings), limit=limit)


def build_model(
    paths: Sequence[str],
    *,
    gpu: str | None = None,
    peak_tflops: float | None = None,
    peak_gbs: float | None = None,
    precision: str = "fp32",
    name_pattern: str | None = None,
    group_by: Sequence[str] = (),
    markers: Sequence[str] = (),
) -> KernelsModel:
    """Read and derive everything. Raises ValueError for a bad flag (peak, pattern, group field)
    with a message for the user; problems in files become findings, never exceptions."""
    choose_peak(gpu=gpu, peak_tflops=peak_tflops, peak_gbs=peak_gbs, precision=precision)  # flags first: fail before reading
    loaded = read_runs(paths, name_pattern=name_pattern, markers=markers, want_fields=bool(name_pattern or group_by))
    meta = loaded.meta
    if gpu is None and (peak_tflops is None or peak_gbs is None) and not meta.get("gpu_name"):
        meta = {**meta, **(device_column_meta(loaded.kernels) or local_gpu_meta())}
    peak = choose_peak(gpu=gpu, peak_tflops=peak_tflops, peak_gbs=peak_gbs, precision=precision, meta=meta)
    findings = list(loaded.findings)
    sums = ke.sums(loaded.kernels)
    findings.extend(sums.findings)
    rows = [{"file": run.file, **run.fields, **kernel_runs.run_efficiencies(run.kernels, peak.tflops, peak.gbs, run.batch_s)}
            for run in loaded.runs]
    runs = kernel_runs.runs_frame(rows)
    fields = tuple(dict.fromkeys(k for run in loaded.runs for k in run.fields))
    grouped = kernel_runs.grouped_table(runs, list(group_by)) if group_by else None
    timeline = _timeline(loaded.kernels)  # kernels only: the card compares it with kernel time
    return KernelsModel(
        paths=tuple(map(str, paths)), peak=peak, summary=_summary(loaded, sums, peak, timeline, findings),
        cards=_cards(sums, peak, timeline), rankings=_rankings(loaded.kernels, peak), launches=_launches(loaded.kernels), runs=runs, fields=fields,
        group_by=tuple(group_by), grouped=grouped, markers_found=loaded.markers_found, findings=tuple(findings),
    )


def device_column_meta(kernels: pd.DataFrame) -> dict[str, str]:
    """The GPU named in the rows' device column (nsys traces: `NVIDIA A100-SXM4-40GB (0)`) when
    every row names the same model and the peak table knows it; else nothing."""
    if "device" not in kernels or not len(kernels):
        return {}
    names = {re.sub(r"\s*\(\d+\)$", "", str(d)).strip() for d in kernels["device"].dropna().unique()}
    if len(names) != 1:
        return {}
    (name,) = names
    return {"gpu_name": name, "peak_source": "the profile's device column"} if find_peak(name) else {}


def local_gpu_meta() -> dict[str, str]:
    """This machine's GPU 0 as the peak's source, for a profile that does not name its GPU and
    no --gpu: NVML's name, looked up in the peak table. The source line says it is this
    machine's GPU, so a profile taken elsewhere is not measured against it unnoticed."""
    names = nvml.local_gpu_names()
    if not names:
        return {}
    of = f" of {len(names)}" if len(names) > 1 else ""
    return {"gpu_name": names[0], "peak_source": f"NVML (this machine's GPU 0{of}; the profile names no GPU)"}


def _rankings(kernels: pd.DataFrame, peak: ChosenPeak) -> dict[str, pd.DataFrame]:
    out = {"kernel": kernel_metrics.kernel_table(kernels, peak)}
    for group in ("direction", "op"):
        if group not in kernels:
            continue
        if kernels[group].astype("string").dropna().nunique() < 2:  # one value (nsys: op 'kernel' everywhere) ranks nothing
            continue
        out[group] = group_ranking(kernels, group, peak)
    return out


def group_ranking(kernels: pd.DataFrame, group: str, peak: ChosenPeak) -> pd.DataFrame:
    """`kernel_metrics.kernel_table` with one row per value of `group` (unknown: NO_VALUE)."""
    labels = kernels[group].astype("string").fillna(NO_VALUE).astype("category")
    return kernel_metrics.kernel_table(kernels[[c for c in ("duration_ns", "flops", "bytes", "calls") if c in kernels]].assign(kernel=labels), peak)


def _launches(kernels: pd.DataFrame) -> pd.DataFrame | None:
    """The columns a filtered grouping needs; None when there is nothing to group by."""
    groups = [g for g in ("direction", "op") if g in kernels]
    if not groups or "kernel" not in kernels:
        return None
    return kernels[["kernel", *groups, "duration_ns", "flops", "bytes", *(["calls"] if "calls" in kernels else [])]]


def _timeline(table: pd.DataFrame) -> pd.DataFrame | None:
    if "start_ns" not in table or not table["start_ns"].notna().any():
        return None
    if "file" in table and table["file"].nunique() > 1:  # runs have their own clocks: never merge them
        names = table["file"].map(lambda f: Path(str(f)).name)
        table = table.assign(device=names + " / " + table["device"].astype("string").fillna("?"))
    return kernel_timeline.summarize(table)


def _summary(loaded: ProfileRuns, s: ke.KernelSums, peak: ChosenPeak, timeline: pd.DataFrame | None,
             findings: list[Finding]) -> ResultTable:
    kernels = loaded.kernels
    rows: list[tuple[str, object]] = [("peak used", peak.source_text), ("kernel launches", int(ke.launch_counts(kernels).sum())),
                                      ("distinct kernels", len(s.names))]
    if len(loaded.runs) > 1:
        rows.insert(1, ("profiles read", len(loaded.runs)))
    if s.used_rows:
        tflops, gbs = ke.tflops_per_s(s), ke.bandwidth_gbs(s)
        rows.append(("GPU compute efficiency % (seed 001)", ke.compute_efficiency_pct(s)))
        rows.append(("FLOPS efficiency %", _pct(tflops, peak.tflops)))
        rows.append(("achieved TFLOP/s", tflops))
        rows.append(("bandwidth efficiency %", _pct(gbs, peak.gbs)))
        rows.append(("achieved GB/s", gbs))
        for value, limit, unit in ((tflops, peak.tflops, "TFLOPS"), (gbs, peak.gbs, "GB/s")):
            if value is not None and limit is not None and value > limit:
                findings.append(Finding("warning", "impossible", f"measured {value:.4g} {unit} is above the {limit:g} {unit} peak: wrong peak or broken counts"))
    if timeline is not None:
        for record in timeline.to_dict("records"):
            device = record.get("device")
            rows += [(f"device {device}: GPU busy ms (union of kernels)", record["busy_ns"] / 1e6),
                     (f"device {device}: summed kernel ms", record["summed_ns"] / 1e6),
                     (f"device {device}: idle gaps", record["gaps"])]
    else:
        rows.append(("GPU busy vs summed time", "n/a: this format has no kernel start times"))
    return ResultTable("Kernel efficiency", (Column("item"), Column("value")), tuple((k, show(v)) for k, v in rows))


def _pct(value: float | None, peak: float | None) -> float | None:
    return None if value is None or not peak else value / peak * 100


def show(value: object) -> str:
    """Mixed values in one column: formatted here, so the column stays readable text."""
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"


def _cards(s: ke.KernelSums, peak: ChosenPeak, timeline: pd.DataFrame | None) -> tuple[Card, ...]:
    tflops, gbs = ke.tflops_per_s(s), ke.bandwidth_gbs(s)
    compute = ke.compute_efficiency_pct(s)
    # Cards are ~20 columns wide at 120: short words, the numbers first.
    cards = [
        # The seed's rule gives 0 % when no row has FLOPs (nsys, nvprof traces): say why.
        Card("Compute eff.", _pct_text(compute), "kernels with FLOPs" if s.null_flops < s.used_rows else "no FLOPs in profile"),
        Card("FLOPS eff.", _pct_text(_pct(tflops, peak.tflops)), f"{_num(tflops, '.3g')}/{_num(peak.tflops, 'g')} TFLOP/s"),
        Card("Bandwidth eff.", _pct_text(_pct(gbs, peak.gbs)), f"{_num(gbs, '.3g')}/{_num(peak.gbs, 'g')} GB/s"),
    ]
    if timeline is None or timeline.empty:
        cards.append(Card("Busy / summed", "n/a", "no start times"))
    else:
        busy, summed = float(timeline["busy_ns"].sum()) / 1e6, float(timeline["summed_ns"].sum()) / 1e6
        devices = f"{len(timeline)} GPUs, " if len(timeline) > 1 else ""
        cards.append(Card("Busy / summed", f"{busy:,.4g}/{summed:,.4g} ms", f"{devices}{int(timeline['gaps'].sum())} idle gaps"))
    if peak.tflops is None and peak.gbs is None:
        cards.append(Card("Peak", "none", "--gpu or --peak-*"))
    else:
        cards.append(Card(f"Peak {peak.precision}", f"{_num(peak.tflops, 'g')} TFLOPS",
                          f"{_num(peak.gbs, 'g')} GB/s {peak.gpu or '(flags)'}"))
    return tuple(cards)


def _pct_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} %"


def _num(value: float | None, fmt: str) -> str:
    return "?" if value is None else format(value, fmt)

