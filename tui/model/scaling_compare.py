"""Provides the compare view's data: the per-epoch curves of chosen runs and their settings side by side.

Seed 002 compares runs in Comet: training curves overlaid, wall-clock time, "confirm only the
GPU count changed". Here the runs are picked by number (`ScalingModel.runs["run"]`); the
curves come from the readers' per-epoch values (loss, accuracy, epoch time, ...) and the
settings table puts every field the logs give next to each other, the differing ones first.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from gpuscope.metrics.scaling.analysis import setting_label
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.tui.model.scaling import ScalingModel

METRIC_LABELS = {"loss": "training loss", "val_loss": "validation loss", "accuracy": "accuracy", "eval_accuracy": "eval accuracy",
                 "epoch_time_s": "epoch time (s)"}
METRIC_ORDER = ("loss", "val_loss", "accuracy", "eval_accuracy", "epoch_time_s")
FIELDS = ("series", "resources", "resources_from", "time_s", "time_from", "status", "quality_name", "quality", "epochs", "samples", "source")
"""Run fields listed before the `set_*` settings in the compare table."""


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def _sources(model: ScalingModel, runs: Sequence[int]) -> dict[int, str]:
    chosen = model.runs[model.runs["run"].isin(list(runs))]
    return {int(r): str(s) for r, s in zip(chosen["run"], chosen["source"])}


def curve_metrics(model: ScalingModel, runs: Sequence[int]) -> list[str]:
    """The per-epoch metrics at least one of `runs` has, in a fixed order (losses first)."""
    curves = model.result.curves
    present = set(curves.loc[curves["source"].isin(list(_sources(model, runs).values())), "metric"].astype(str))
    return [m for m in METRIC_ORDER if m in present] + sorted(present - set(METRIC_ORDER))


def curves_for(model: ScalingModel, runs: Sequence[int], metric: str) -> list[tuple[str, list[int], list[float]]]:
    """(run label, epochs, values) of `metric` for each of `runs` that has it."""
    curves = model.result.curves
    out = []
    for run, source in _sources(model, runs).items():
        rows = curves[(curves["source"] == source) & (curves["metric"] == metric)].sort_values("epoch")
        values = rows["value"].astype(float)
        rows = rows[values.map(math.isfinite)]
        if len(rows):
            out.append((model.run_label(run), rows["epoch"].astype(int).tolist(), rows["value"].astype(float).tolist()))
    return out


def _text(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def settings_table(model: ScalingModel, runs: Sequence[int]) -> ResultTable:
    """One row per field or setting, one column per run; `same?` says whether they agree.
    Settings that differ come first: they are what the comparison is about."""
    chosen = model.runs[model.runs["run"].isin(list(runs))]
    settings = [c for c in chosen.columns if str(c).startswith("set_") and chosen[c].notna().any()]
    rows, labels = [], set()
    for name in (*FIELDS, *settings) if len(chosen) else ():
        label = setting_label(name) if name.startswith("set_") else name
        if name not in chosen or label in labels:  # set_epochs is the epochs field again
            continue
        labels.add(label)
        values = [_text(v) for v in chosen[name]]
        same = ("yes" if len(set(values)) == 1 else "no") if len(values) > 1 else "n/a"  # one run agrees with nothing
        rows.append((label, same, *values))
    rows.sort(key=lambda row: row[1] == "yes")  # stable: differing settings first, each group in its order
    columns = (Column("setting"), Column("same", "same?"), *(Column(f"run_{int(r)}", model.run_label(int(r))) for r in chosen["run"]))
    notes = ("Mark runs with space in the Runs tab (two or more) to compare them.",) if len(chosen) < 2 else ()
    return ResultTable("Compared runs", columns, tuple(rows), notes)
