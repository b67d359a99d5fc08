"""The scaling figures draw a comparison only where there is one: a series measured at one
configuration (speedup 1 and efficiency 100 % against itself, by definition) gets no ideal line
and no efficiency bar; it keeps its single point on the speedup chart and is named in the note.
Real data: Krai's 2x A5000 and Dell's 4x H100 BERT runs beside NVIDIA's 8 -> 64 GPU resnet and
ssd curves in ../shared/data/scaling (skipped when absent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from gpuscope.metrics.scaling import analysis as scaling
from gpuscope.parsers.runlogs.read import read_runs
from gpuscope.tui.model.scaling import build_model
from gpuscope.tui.render.scaling_plots import as_text, draw_efficiency, draw_speedup
from runs_table import make_runs

SCALING = Path(__file__).resolve().parents[3] / "shared" / "data" / "scaling"


class Recorder:
    """Stands in for a plotext figure: keeps every call, draws nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))

    def labels(self, name: str) -> list[Any]:
        return [kwargs.get("label") for call, _args, kwargs in self.calls if call == name]


def test_one_configuration_gets_no_ideal_line_and_no_bar() -> None:
    # series `one` at 2 GPUs only; series `two` at 8 and 64 GPUs
    runs = pd.concat([make_runs([2, 2], [500, 510], series="one"), make_runs([8, 64], [800, 150], series="two")], ignore_index=True)
    summary = scaling.summarize(runs)
    plt = Recorder()
    note = draw_speedup(plt, summary, scaling.fits(runs, summary))
    ideal = [args for call, args, kwargs in plt.calls if call == "plot" and kwargs.get("color") == "white"]
    assert len(ideal) == 1 and ideal[0][0] == [3.0, 6.0]  # from two's baseline (8 = 2^3) to 64, not from one's 2 GPUs
    assert "one" in plt.labels("plot")  # its single measured point is still shown
    assert "one: one configuration, nothing to scale against (no ideal line)" in note
    plt = Recorder()
    note = draw_efficiency(plt, summary)
    assert plt.labels("bar") == ["two"]
    assert note == "one configuration, no efficiency: one"


def test_only_one_configuration_series_draw_no_comparison() -> None:
    runs = make_runs([2, 2], [500, 510])
    summary = scaling.summarize(runs)
    plt = Recorder()
    draw_speedup(plt, summary, scaling.fits(runs, summary))
    assert not [c for c in plt.calls if c[0] == "plot" and c[2].get("color") == "white"]
    plt = Recorder()
    note = draw_efficiency(plt, summary)
    assert not plt.labels("bar") and "no efficiency to draw" in note and "one configuration, no efficiency: s" in note
    assert "one configuration, no efficiency: s" in as_text(draw_efficiency, summary)  # the text export says why too


@pytest.mark.skipif(not (SCALING / "mlperf-training-v3.1-others").is_dir(), reason="../shared/data/scaling is absent")
def test_real_round_bert_machines_are_points_not_curves() -> None:
    model = build_model(read_runs([str(SCALING)]))
    plt = Recorder()
    note = draw_speedup(plt, model.summary, model.fits)
    ideal = [args for call, args, kwargs in plt.calls if call == "plot" and kwargs.get("color") == "white"]
    assert len(ideal) == 2 and all(args[0] == [3.0, 6.0] for args in ideal)  # resnet and ssd: 8 -> 64 GPUs
    assert "bert · A5000 (gpus): one configuration" in note and "bert · H100 (gpus): one configuration" in note
    plt = Recorder()
    note = draw_efficiency(plt, model.summary)
    assert plt.labels("bar") == ["resnet (gpus)", "ssd (gpus)"]
    assert note == "one configuration, no efficiency: bert · A5000 (gpus), bert · H100 (gpus)"
