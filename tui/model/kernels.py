"""Provides the kernels screen's data: what is loaded and derived once, and the view picked.

`build_model` runs in the screen's thread worker and in `gpuscope kernels --format ...`, so the
screen and the printed report show the same numbers. It reads every profile
through the registry (`registry.read_profiles`), chooses each profile's peak (the GPU that profile names, so
profiles of different GPUs read together are each measured against their own), and computes the
summary, the cards, the rankings per kernel, per direction and per op, and the per-run table. `KernelView` is the
user's view state (sort, grouping, name filter); applying it only sorts and filters a ready
frame of a few hundred rows, so key presses never wait for the files. No Textual here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

import pandas as pd

from gpuscope.metrics.kernels import efficiency as ke
from gpuscope.metrics.kernels import table as kernel_metrics
from gpuscope.metrics.kernels import runs as kernel_runs
from gpuscope.metrics.kernels import timeline as kernel_timeline
from gpuscope.metrics.kernels import transfers as kernel_transfers
from gpuscope.metrics.kernels import profiler_metrics
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.kernels.peaks import find_peak
from gpuscope.metrics.kernels.peak_choice import ChosenPeak, choose_peak, per_profile
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers import registry
from gpuscope.parsers.profilers.runs import ProfileRuns

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
    short: str = ""
    """The title where a card is too narrow for it (80 columns): never cut to 'Compute e…'."""


@dataclass(frozen=True)
class KernelsModel:
    """Everything the screen and the report need, computed once off the main thread."""

    paths: tuple[str, ...]
    peak: ChosenPeak
    summary: ResultTable
    cards: tuple[Card, ...]
    rankings: Mapping[str, pd.DataFrame]
    """Per grouping in GROUPS that has values: `kernel_metrics.kernel_table` output, the group's
    value in column `kernel`, longest total time first (`Rankings`)."""
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
    transfers: ResultTable | None = None
    """memcpy/memset time, bytes and share of GPU time, beside the kernels; None when there are none."""
    profiler_metrics: ResultTable | None = None
    """nvprof `--metrics` per kernel: FLOPs, bytes and the profiler's own efficiencies; None without."""
    _filtered: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict, compare=False, repr=False)
    """Filtered groupings already computed (see `_filtered_ranking`)."""

    @property
    def empty(self) -> bool:
        return self.rankings["kernel"].empty and self.profiler_metrics is None

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
        from gpuscope.metrics.magma import stats as magma_stats  # the findings table's one home

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
    ranked: Sequence[str] | None = None,
) -> KernelsModel:
    """Read and derive everything. Raises ValueError for a bad flag (peak, pattern, group field)
    with a message for the user; problems in files become findings, never exceptions.
    `ranked`: the groupings ranked now, the others when first asked for; None ranks them all
    now (the screen builds the model off the main thread, so a key press never waits for one)."""
    flags = {"gpu": gpu, "peak_tflops": peak_tflops, "peak_gbs": peak_gbs, "precision": precision}
    choose_peak(**flags)  # flags first: fail before reading
    loaded = registry.read_profiles(paths, name_pattern=name_pattern, markers=markers, want_fields=bool(name_pattern or group_by))
    local = functools.cache(local_gpu_meta)  # NVML at most once
    own_peaks = [choose_peak(**flags, meta=profile_meta(run.meta, run.kernels, flags, local)) for run in loaded.runs]
    run_peaks = same_roofs(own_peaks)
    peak = per_profile(run_peaks) if run_peaks else choose_peak(**flags, meta=profile_meta(loaded.meta, loaded.kernels, flags, local))
    kernels = loaded.kernels
    if len({(p.tflops, p.gbs) for p in run_peaks}) > 1:  # GPUs with different peaks: each launch its own
        kernels = with_launch_peaks(kernels, {run.file: p for run, p in zip(loaded.runs, run_peaks)})
    findings = list(loaded.findings)
    moved = kernel_transfers.transfer_sums(loaded.everything)
    findings.extend(kernel_transfers.dominance(moved))
    sums = ke.sums(kernels)
    findings.extend(sums.findings)
    rows = [{"file": run.file, **run.fields, **kernel_runs.peak_fields(own.gpu, own.tflops, own.gbs),
             **kernel_runs.run_efficiencies(run.kernels, p.tflops, p.gbs, run.batch_s)}
            for run, p, own in zip(loaded.runs, run_peaks, own_peaks)]
    runs = kernel_runs.runs_frame(rows)
    fields = tuple(dict.fromkeys(k for run in loaded.runs for k in run.fields))
    grouped = kernel_runs.grouped_table(runs, list(group_by)) if group_by else None
    labels = device_labels(kernels)
    timeline = _timeline(kernels, labels)  # kernels only: the card compares it with kernel time
    limits = overall_peaks(kernels, peak)
    totals = _totals(sums, runs)
    return KernelsModel(
        paths=tuple(map(str, paths)), peak=peak, summary=_summary(loaded, sums, moved, totals, peak, limits, _devices(kernels, labels, timeline), findings),
        cards=_cards(sums, totals, peak, limits, timeline), rankings=Rankings(kernels, peak, ranked), launches=_launches(kernels), runs=runs, fields=fields,
        group_by=tuple(group_by), grouped=grouped, markers_found=loaded.markers_found, findings=tuple(findings),
        transfers=_transfers(loaded.everything, moved), profiler_metrics=profiler_metrics.metrics_table(loaded.metrics),
    )


SAME_ROOF = 0.01
"""Peaks within this relative difference are one roof: an nsys export's measured 1555.2 GB/s
and the table's 1555 GB/s for the same A100 are not 'GPUs with different peaks'."""


def same_roofs(peaks: Sequence[ChosenPeak]) -> list[ChosenPeak]:
    """`peaks`, each replaced by the first earlier one with the same precision and figures
    within `SAME_ROOF`, so profiles of one GPU model share one roof (and one roofline)."""
    def close(a: float | None, b: float | None) -> bool:
        return a == b or (a is not None and b is not None and abs(a - b) <= SAME_ROOF * max(abs(a), abs(b)))

    out: list[ChosenPeak] = []
    for peak in peaks:
        out.append(next((p for p in out if p.precision == peak.precision and close(p.tflops, peak.tflops) and close(p.gbs, peak.gbs)), peak))
    return out


def profile_meta(meta: Mapping[str, Any], kernels: pd.DataFrame, flags: Mapping[str, Any],
                 local: Callable[[], dict[str, str]] | None = None) -> dict[str, Any]:
    """What one profile says about its GPU, for `choose_peak`: the file's own facts (nsys
    TARGET_INFO_GPU, a torch trace's device properties), else the GPU its rows' device column
    names, else this machine's GPU (`local`). Flags that fix both peaks need none of it."""
    if flags.get("gpu") is not None or (flags.get("peak_tflops") is not None and flags.get("peak_gbs") is not None) \
            or meta.get("gpu_name"):
        return dict(meta)
    return {**meta, **(device_column_meta(kernels) or (local or local_gpu_meta)())}


def with_launch_peaks(kernels: pd.DataFrame, peaks: Mapping[str, ChosenPeak]) -> pd.DataFrame:
    """`kernels` with each launch's peak (columns `ke.PEAK_COLUMNS`, from its file's peak), for
    profiles of GPUs with different peaks: the rankings then measure each launch against its own."""
    files = kernels["file"].astype("string")
    tflops = {f: p.tflops for f, p in peaks.items()}
    gbs = {f: p.gbs for f, p in peaks.items()}
    return kernels.assign(peak_tflops=files.map(tflops).astype("Float64"), peak_gbs=files.map(gbs).astype("Float64"))


@dataclass(frozen=True)
class Limits:
    """The peaks the whole kernel time is measured against (`overall_peaks`)."""

    tflops: float | None
    gbs: float | None
    per_launch: bool
    """True when the profiles' GPUs have different peaks and these are time-weighted means."""


def overall_peaks(kernels: pd.DataFrame, peak: ChosenPeak) -> Limits:
    """The peaks the whole of the kernel time is measured against: the peak, or, with a peak per
    launch, the launches' time-weighted mean peak, so that an efficiency is the work done over
    what the GPUs could do in the time (Σ duration x peak); None where a launch has no peak."""
    if not any(name in kernels for name in ke.PEAK_COLUMNS):
        return Limits(peak.tflops, peak.gbs, per_launch=False)
    duration = pd.to_numeric(kernels["duration_ns"], errors="coerce").astype("float64")
    used = duration.notna() & (duration > 0)
    out = []
    for name in ke.PEAK_COLUMNS:
        per_launch = kernels[name].astype("float64")[used]
        known = used.any() and not per_launch.isna().any()
        out.append(float((per_launch * duration[used]).sum() / duration[used].sum()) if known else None)
    return Limits(out[0], out[1], per_launch=True)


def _transfers(everything: pd.DataFrame, moved: kernel_transfers.TransferSums) -> ResultTable | None:
    """The transfers table, its totals first in the notes (the summary shows them too)."""
    if not moved.transfer_calls:
        return None
    return kernel_transfers.to_result_table(kernel_transfers.transfer_table(everything), moved)


def transfer_rows(moved: kernel_transfers.TransferSums) -> list[tuple[str, object]]:
    """The summary's transfer lines: always there when a profile has copies or memsets."""
    if not moved.transfer_calls:
        return []
    gb = None if moved.transfer_bytes is None else moved.transfer_bytes / 1e9
    return [("transfers (memcpy/memset)", moved.transfer_calls), ("transfer ms", moved.transfer_ns / 1e6),
            ("transfer GB", gb if gb is not None else "n/a: no byte counts in this format"),
            ("transfer share of GPU time %", moved.share_pct)]


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
    from gpuscope.collectors import nvml  # pynvml: only when no --gpu and the profile names no GPU

    names = nvml.local_gpu_names()
    if not names:
        return {}
    of = f" of {len(names)}" if len(names) > 1 else ""
    return {"gpu_name": names[0], "peak_source": f"NVML (this machine's GPU 0{of}; the profile names no GPU)"}


class Rankings(Mapping[str, pd.DataFrame]):
    """The ranking per grouping: per kernel always, per direction and per op when the launches
    have two values or more of it (nsys: op 'kernel' everywhere ranks nothing). Each is computed
    when first asked for and kept: `gpuscope kernels --format text` prints one of them."""

    def __init__(self, kernels: pd.DataFrame, peak: ChosenPeak, ranked: Sequence[str] | None = None) -> None:
        self._kernels: pd.DataFrame | None = kernels
        self._peak = peak
        self._groups = ("kernel", *(g for g in ("direction", "op")
                                    if g in kernels and kernels[g].astype(pd.StringDtype()).dropna().nunique() >= 2))
        self._done: dict[str, pd.DataFrame] = {}
        for group in self._groups if ranked is None else [g for g in ranked if g in self._groups]:
            self._rank(group)

    def _rank(self, group: str) -> pd.DataFrame:
        if group not in self._done:
            assert self._kernels is not None
            self._done[group] = kernel_metrics.kernel_table(self._kernels, self._peak) if group == "kernel" \
                else group_ranking(self._kernels, group, self._peak)
            if len(self._done) == len(self._groups):
                self._kernels = None  # every ranking made: the launches are not kept for them
        return self._done[group]

    def __getitem__(self, group: str) -> pd.DataFrame:
        if group not in self._groups:
            raise KeyError(group)
        return self._rank(group)

    def __contains__(self, group: object) -> bool:  # Mapping's own would make the ranking to answer
        return group in self._groups

    def __iter__(self) -> Iterator[str]:
        return iter(self._groups)

    def __len__(self) -> int:
        return len(self._groups)


def group_ranking(kernels: pd.DataFrame, group: str, peak: ChosenPeak) -> pd.DataFrame:
    """`kernel_metrics.kernel_table` with one row per value of `group` (unknown: NO_VALUE)."""
    labels = kernels[group].astype("string").fillna(NO_VALUE).astype("category")
    return kernel_metrics.kernel_table(kernels[_metric_columns(kernels)].assign(kernel=labels), peak)


def _metric_columns(kernels: pd.DataFrame) -> list[str]:
    """The columns `kernel_table` reads besides the name: times, counts, calls, per-launch peaks."""
    return [c for c in ("duration_ns", "flops", "bytes", "calls", *ke.PEAK_COLUMNS) if c in kernels]


def _launches(kernels: pd.DataFrame) -> pd.DataFrame | None:
    """The columns a filtered grouping needs; None when there is nothing to group by."""
    groups = [g for g in ("direction", "op") if g in kernels]
    if not groups or "kernel" not in kernels:
        return None
    return kernels[["kernel", *groups, *_metric_columns(kernels)]]


def device_labels(table: pd.DataFrame) -> pd.Series:
    """Each launch's device as the summary names it: the device column ('?' when the format names
    none), prefixed with its profile's short name when several profiles are read (runs have their
    own clocks: never merge them; two `trace.csv` in different folders stay two)."""
    device = table["device"].astype("string").fillna("?") if "device" in table else pd.Series("?", index=table.index, dtype="string")
    if "file" in table and table["file"].nunique() > 1:
        names = kernel_runs.short_names([str(f) for f in table["file"].unique()])
        device = table["file"].astype(str).map(names).astype("string") + " / " + device
    return device


def _timeline(table: pd.DataFrame, labels: pd.Series) -> pd.DataFrame | None:
    if "start_ns" not in table or not table["start_ns"].notna().any():
        return None
    return kernel_timeline.summarize(table.assign(device=labels))


def _devices(table: pd.DataFrame, labels: pd.Series, timeline: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device label: summed kernel time of all its launches (a summary row holds the
    total of its instances), and busy time and idle gaps from the timeline (null for a device
    whose launches have no start times)."""
    duration = pd.to_numeric(table["duration_ns"], errors="coerce").astype("float64") if "duration_ns" in table else pd.Series(dtype="float64")
    used = duration.notna() & (duration > 0)
    out = duration[used].groupby(labels[used], sort=True).sum().rename("summed_ns").rename_axis("device").reset_index()
    if timeline is not None:  # a device none of whose launches has a start time has no busy time
        timed = timeline[timeline["intervals"] > 0]
        out = out.merge(timed[["device", "busy_ns", "gaps"]].astype({"device": "string"}), on="device", how="left")
    else:
        out = out.assign(busy_ns=float("nan"), gaps=float("nan"))
    return out


@dataclass(frozen=True)
class Totals:
    """The seed's figures for everything read (`kernel_efficiency`), None where unknown."""

    compute_pct: float | None
    tflops: float | None
    gbs: float | None
    notes: tuple[tuple[str, str], ...]
    """Summary lines saying why a figure is n/a."""


def _totals(s: ke.KernelSums, runs: pd.DataFrame) -> Totals:
    """Compute efficiency, TFLOP/s and GB/s of all profiles together. When only some of several
    profiles count FLOPs (bytes), the others' kernel time would count as time without work: the
    FLOP (byte) figures are n/a then, and the runs table has each profile's own."""
    def without(column: str) -> int:  # profiles with kernel time whose `column` is unknown
        return int((runs[column].isna() & (runs["launches"] > 0)).sum()) if len(runs) > 1 else 0

    no_flops, no_bytes = without("tflops_per_s"), without("bandwidth_gbs")
    tflops, gbs = ke.tflops_per_s(s), ke.bandwidth_gbs(s)
    notes = tuple((f"{what} figures of all profiles together", f"n/a: {count} of {len(runs)} profiles have no {what} counts (see Runs)")
                  for what, count, known in (("FLOP", no_flops, tflops), ("byte", no_bytes, gbs)) if count and known is not None)
    return Totals(None if no_flops else ke.compute_efficiency_pct(s), None if no_flops else tflops,
                  None if no_bytes else gbs, notes)


def _summary(loaded: ProfileRuns, s: ke.KernelSums, moved: kernel_transfers.TransferSums, totals: Totals, peak: ChosenPeak, limits: Limits,
             devices: pd.DataFrame, findings: list[Finding]) -> ResultTable:
    kernels = loaded.kernels
    rows: list[tuple[str, object]] = [("peak used", peak.source_text), ("kernel launches", int(ke.launch_counts(kernels).sum())),
                                      ("distinct kernels", len(s.names))]
    if len(loaded.runs) > 1:
        rows.insert(1, ("profiles read", len(loaded.runs)))
    rows += transfer_rows(moved)
    tflops_peak, gbs_peak = limits.tflops, limits.gbs
    if s.used_rows:
        tflops, gbs = totals.tflops, totals.gbs
        rows.append(("GPU compute efficiency % (seed 001)", totals.compute_pct))
        rows.append(("FLOPS efficiency %", _pct(tflops, tflops_peak)))
        rows.append(("achieved TFLOP/s", tflops))
        rows.append(("bandwidth efficiency %", _pct(gbs, gbs_peak)))
        rows.append(("achieved GB/s", gbs))
        rows += totals.notes
        if limits.per_launch:  # a peak per profile: say what the % are of
            rows.append(("peak TFLOPS, time-weighted over the profiles", tflops_peak))
            rows.append(("peak GB/s, time-weighted over the profiles", gbs_peak))
        for value, limit, unit in ((tflops, tflops_peak, "TFLOPS"), (gbs, gbs_peak, "GB/s")):
            if value is not None and limit is not None and value > limit:
                findings.append(Finding("warning", "impossible", f"measured {value:.4g} {unit} is above the {limit:g} {unit} peak: wrong peak or broken counts"))
    for record in devices.to_dict("records"):
        device, busy, gaps = record["device"], record["busy_ns"], record["gaps"]
        rows += [(f"device {device}: GPU busy ms (union of kernels)", None if busy != busy else busy / 1e6),
                 (f"device {device}: summed kernel ms", record["summed_ns"] / 1e6),
                 (f"device {device}: idle gaps", None if gaps != gaps else int(gaps))]
    if devices["busy_ns"].isna().any():
        rows.append(("GPU busy time and idle gaps", "n/a where the format has no kernel start times"))
    return ResultTable("Kernel efficiency", (Column("item"), Column("value", missing=kernel_metrics.NA)),
                       tuple((k, show(v)) for k, v in rows))


def _pct(value: float | None, peak: float | None) -> float | None:
    return None if value is None or not peak else value / peak * 100


def show(value: object) -> str | None:
    """Mixed values in one column: formatted here, so the column stays readable text; a value
    that cannot be computed stays None (n/a on screen and in text, null in JSON)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"


def _cards(s: ke.KernelSums, totals: Totals, peak: ChosenPeak, limits: Limits,
           timeline: pd.DataFrame | None) -> tuple[Card, ...]:
    tflops, gbs = totals.tflops, totals.gbs
    tflops_peak, gbs_peak = limits.tflops, limits.gbs
    # No row with FLOPs (nsys, nvprof traces), or only some profiles with FLOPs: n/a, and say why.
    why = "no FLOPs in profile" if s.null_flops == s.used_rows else ("not all count FLOPs" if totals.compute_pct is None else "kernels with FLOPs")
    # Cards are ~20 columns wide at 120: short words, the numbers first.
    cards = [
        Card("Compute eff.", _pct_text(totals.compute_pct), why, "Compute"),
        Card("FLOPS eff.", _pct_text(_pct(tflops, tflops_peak)), f"{_num(tflops, '.3g')}/{_num(tflops_peak, 'g')} TFLOP/s", "FLOPS"),
        Card("Bandwidth eff.", _pct_text(_pct(gbs, gbs_peak)), f"{_num(gbs, '.3g')}/{_num(gbs_peak, 'g')} GB/s", "Bandwidth"),
    ]
    timeline = None if timeline is None else timeline[timeline["intervals"] > 0]  # devices with start times
    if timeline is None or timeline.empty:
        cards.append(Card("Busy / summed", "n/a", "no start times", "Busy/sum"))
    else:
        busy, summed = float(timeline["busy_ns"].sum()) / 1e6, float(timeline["summed_ns"].sum()) / 1e6
        devices = f"{len(timeline)} GPUs, " if len(timeline) > 1 else ""
        cards.append(Card("Busy / summed", f"{busy:,.4g}/{summed:,.4g} ms", f"{devices}{int(timeline['gaps'].sum())} idle gaps", "Busy/sum"))
    if limits.per_launch:  # each profile against its own GPU
        cards.append(Card(f"Peak {peak.precision}", "per profile", "its own GPU's; see Runs"))
    elif peak.tflops is None and peak.gbs is None:
        cards.append(Card("Peak", "none", "--gpu or --peak-*"))
    else:
        cards.append(Card(f"Peak {peak.precision}", f"{_num(peak.tflops, 'g')} TFLOPS",
                          f"{_num(peak.gbs, 'g')} GB/s {peak.gpu or '(flags)'}"))
    return tuple(cards)


def _pct_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} %"


def _num(value: float | None, fmt: str) -> str:
    return "?" if value is None else format(value, fmt)

