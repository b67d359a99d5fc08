"""Provides the tables `gpuscope kernels PATH...` prints: the peak used, the seed notebook's
three efficiencies, GPU busy versus summed kernel time, the per-kernel ranking with roofline
verdicts, and the findings. (The interactive kernels screen is not built yet.)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from gpuscope.metrics import kernel_efficiency, kernel_metrics, kernel_timeline, magma_stats
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.peak_choice import ChosenPeak, choose_peak
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers.kernel_table import KERNEL_COLUMNS
from gpuscope.parsers.kernels import read_any, sniff

SORTS = {"time": "total_ns", "flops": "flops_eff_pct", "bandwidth": "bw_eff_pct"}


def _files(paths: list[str]) -> tuple[list[Path], list[Finding]]:
    """Files as given, and every profiler export found under given folders."""
    found: list[Path] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for folder, dirs, names in os.walk(path):
                dirs.sort()
                found.extend(Path(folder) / n for n in sorted(names) if sniff(Path(folder) / n))
        elif path.exists():
            found.append(path)
        else:
            findings.append(Finding("error", "missing", "no such file or folder", str(path)))
    return found, findings


def load(paths: list[str]) -> tuple[pd.DataFrame, list[Finding], dict]:
    files, findings = _files(paths)
    tables, meta = [], {}
    for path in files:
        result = read_any(path)
        findings.extend(result.findings)
        if len(result.table):
            tables.append(result.table.assign(file=str(path)))
        for key, value in result.meta.items():
            meta.setdefault(key, value)
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(KERNEL_COLUMNS))
    return table, findings, meta


def _summary(table: pd.DataFrame, peak: ChosenPeak, findings: list[Finding]) -> ResultTable:
    kernels = table[table["op"].isna() | ~table["op"].isin(["memcpy", "memset"])] if "op" in table else table
    rows: list[tuple[str, object]] = [("peak used", peak.source_text), ("kernel launches", len(kernels)),
                                      ("distinct kernels", int(kernels["kernel"].nunique()) if len(kernels) else 0)]
    if peak.complete and len(kernels):
        eff = kernel_efficiency.efficiency(kernels, peak_tflops=peak.tflops, peak_gbs=peak.gbs)  # type: ignore[arg-type]
        findings.extend(eff.findings)
        rows += [("GPU compute efficiency % (seed 001)", eff.compute_efficiency_pct),
                 ("FLOPS efficiency %", eff.flops_efficiency_pct), ("achieved TFLOP/s", eff.tflops_per_s),
                 ("bandwidth efficiency %", eff.bandwidth_efficiency_pct), ("achieved GB/s", eff.bandwidth_gbs)]
    if "start_ns" in table and table["start_ns"].notna().any():
        for record in kernel_timeline.summarize(table).to_dict("records"):
            device = record.get("device")
            rows += [(f"device {device}: GPU busy ms (union of kernels)", record["busy_ns"] / 1e6),
                     (f"device {device}: summed kernel ms", record["summed_ns"] / 1e6),
                     (f"device {device}: idle gaps", record["gaps"])]
    else:
        rows.append(("GPU busy vs summed time", "n/a: this format has no kernel start times"))
    return ResultTable("Kernel efficiency", (Column("item"), Column("value")), tuple((k, _show(v)) for k, v in rows))


def _show(value: object) -> str:
    """Mixed values in one column: formatted here, so the column stays readable text."""
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"


def report(args: argparse.Namespace) -> tuple[list[ResultTable], list[Finding]]:
    """Tables for the chosen format. Raises ValueError for a bad peak flag (clear message)."""
    table, findings, meta = load(args.paths)
    peak = choose_peak(gpu=args.gpu, peak_tflops=args.peak_tflops, peak_gbs=args.peak_gbs, precision=args.precision, meta=meta)
    kernels = table[table["op"].isna() | ~table["op"].isin(["memcpy", "memset"])] if "op" in table else table
    ranking = kernel_metrics.kernel_table(kernels, peak)
    if len(ranking):
        ranking = ranking.sort_values(SORTS[args.sort], ascending=False, na_position="last", kind="stable")
        ranking = ranking.head(args.top) if args.top else ranking
    tables = [_summary(table, peak, findings), kernel_metrics.to_result_table(ranking, peak)]
    if findings:
        tables.append(magma_stats.findings_table(findings, limit=40))
    return tables, findings
