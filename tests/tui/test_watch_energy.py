"""The watch's energy and GPU activity: SM / tensor / DRAM in the GPU rows from 120 columns, a
detail line under each GPU at 80, n/a (with why) where there is no GPM, the job panel's energy
since the watch started, and the verdict when utilisation and SM activity disagree."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fake_demo import DemoSource
from fake_watch import FakeSource, poll, watch_app
from gpuscope.metrics.history import History
from gpuscope.metrics.energy import gpu_energy
from gpuscope.tui.model.watch import activity_verdicts, record, scope_gpus
from gpuscope.tui.screens.watch.gpu_pane import GpuPane, GpuRows
from gpuscope.tui.screens.watch.job_panel import JobPanel

GPU_ROW = re.compile(r"^.\s?(\d+) ")


def rows(screen) -> list[str]:  # type: ignore[no-untyped-def]
    return screen.query_one(GpuRows).render().plain.splitlines()


def use_text(screen) -> str:  # type: ignore[no-untyped-def]
    return str(screen.query_one("#job-use").render())


def verdict_text(screen) -> str:  # type: ignore[no-untyped-def]
    return str(screen.query_one("#job-verdicts").render())


# --- the model: what record() keeps, which GPUs a view judges -------------------------------


def test_record_keeps_activity_series_and_energy_since_the_start() -> None:
    source, history = DemoSource("h100x8-llm", scope="node"), History()
    snaps = [source.poll() for _ in range(5)]
    for snap in snaps:
        record(history, snap)
    sm = history.series("gpu6.sm_active")
    assert math.isnan(sm[0]) and 5 < sm[1] < 20  # GPM compares two readings: none on the first
    figure = history.energy.figure(0)
    times = [s.gpus[0].timestamp for s in snaps]
    expected = gpu_energy(times, [s.gpus[0].energy_mj for s in snaps], [s.gpus[0].power_w for s in snaps])
    assert figure.source == "energy counter" and figure.joules == pytest.approx(expected.joules)
    assert figure.mean_w == pytest.approx(np.mean([s.gpus[0].power_w for s in snaps]), rel=0.02)


def test_activity_verdicts_judge_the_views_gpus_on_window_means() -> None:
    node, history = DemoSource("h100x8-llm", scope="node"), History()
    for _ in range(4):
        snap = node.poll()
        record(history, snap)
    found = activity_verdicts(snap, history)
    assert [v.text.split(":")[0] for v in found] == ["GPU 6"] and found[0].severity == "warning"
    assert scope_gpus(snap) == tuple(range(8))
    job, history = DemoSource("h100x8-llm"), History()  # alice's job has GPUs 0-3: GPU 6 is not hers
    for _ in range(4):
        snap = job.poll()
        record(history, snap)
    assert scope_gpus(snap) == (0, 1, 2, 3) and activity_verdicts(snap, history) == ()


# --- the screen ------------------------------------------------------------------------------


async def test_activity_in_the_gpu_rows_from_120_columns() -> None:
    async with watch_app(DemoSource("h100x8-llm", scope="node")).run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot, 3)
        lines = rows(screen)
        assert len(lines) == 8 and all(GPU_ROW.match(line) for line in lines)  # in the rows: no detail lines
        assert all(" SM " in line and " TC " in line and " DRAM " in line for line in lines), lines
        assert re.search(r"SM\s+1\d% TC\s+\d% DRAM\s+\d+%", lines[6]), lines[6]  # the inference server's idle SMs
        assert "activity n/a" not in str(screen.query_one(GpuPane).border_title)
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert all(re.search(r"DRAM\s+\d+%\s+[\d.]+ k?J", line) for line in rows(screen))  # the energy so far, with room


async def test_a_detail_line_under_each_gpu_at_80_columns(tmp_path: Path) -> None:
    async with watch_app(DemoSource("h100x8-llm", scope="node")).run_test(size=(80, 40)) as pilot:
        screen = await poll(pilot, 3)
        lines = rows(screen)
        assert [bool(GPU_ROW.match(line)) for line in lines] == [True, False] * 8, lines
        assert all(re.match(r"^ {4}SM \d+% TC \d+% DRAM \d+% · [\d.]+ k?J$", line) for line in lines[1::2]), lines
        await pilot.resize_terminal(80, 24)  # eight GPUs in the nine lines of a short terminal: one line each
        await pilot.pause()
        lines = rows(screen)
        assert len(lines) == 8 and all(GPU_ROW.match(line) for line in lines)
        assert "zooms" in str(screen.query_one(GpuRows).tooltip)
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"defaults": {"name": "NVIDIA H100 80GB HBM3", "gpm": True, "memory_total_mib": 81559},
                               "gpus": [{"util": {"base": 90}}, {"util": {"base": 40}}]}))
    async with watch_app(DemoSource(str(two), scope="node")).run_test(size=(80, 24)) as pilot:
        screen = await poll(pilot, 3)
        lines = rows(screen)
        assert len(lines) == 4 and lines[1].startswith("    SM 81% TC 45% DRAM 36%"), lines


async def test_without_gpm_activity_is_na_with_the_reason_never_0() -> None:
    async with watch_app(DemoSource("a100x8-training", scope="node")).run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot, 3)
        lines = rows(screen)
        assert not any("SM" in line or "DRAM" in line for line in lines)  # no column of n/a on every row
        assert "activity n/a" in str(screen.query_one(GpuPane).border_title)
        assert "GPU 0-7: activity n/a: no GPM on this GPU (Hopper or later)" in str(screen.query_one(GpuRows).tooltip)
        assert "no GPM" not in verdict_text(screen) and not screen.query_one("#job-verdicts").display


async def test_the_job_panel_says_the_gpus_energy_so_far() -> None:
    source = DemoSource("h100x8-llm")
    async with watch_app(source).run_test(size=(160, 40)) as pilot:
        screen = await poll(pilot, 4)
        text = use_text(screen)
        found = re.search(r"Energy GPUs 0-3: ([\d.]+) kJ so far, (\d+) W mean \(energy counters over 0:03\)", text)
        assert found, text
        watts = [g.power_w for g in screen.snapshot.gpus[:4]]
        assert float(found.group(2)) == pytest.approx(sum(watts), rel=0.05)  # four GPUs near full power
        assert float(found.group(1)) * 1000 == pytest.approx(float(found.group(2)) * 3, rel=0.02)  # 3 s at that mean
        assert "GPU 0: " in str(screen.query_one("#job-use").tooltip)
        for gpu in range(8):  # the driver reloads: every counter restarts near 0
            source.simulated._energy[gpu] = (5_000.0, source.simulated._energy[gpu][1])
        await poll(pilot, 2)
        assert "a counter reset: a lower bound" in use_text(screen)
        assert "reset 1 time(s)" in str(screen.query_one("#job-use").tooltip)


async def test_no_energy_counter_is_integrated_power_said_so() -> None:
    async with watch_app(FakeSource()).run_test(size=(120, 40)) as pilot:
        screen = await poll(pilot, 3)
        assert re.search(r"Energy GPUs 0-3: [\d.]+ kJ so far, \d+ W mean \(integrated power over 0:02: no energy counter\)", use_text(screen))


async def test_the_verdict_when_utilisation_and_activity_disagree() -> None:
    async with watch_app(DemoSource("h100x8-llm", scope="node")).run_test(size=(200, 50)) as pilot:
        screen = await poll(pilot, 3)
        panel = screen.query_one("#job-verdicts")
        assert panel.display  # a whole node has no job verdicts, but this one is about a GPU
        text = verdict_text(screen)
        assert re.search(r"GPU 6: utilization 9\d %, SM active 1\d %: most SMs idle \(kernels too small to fill the GPU\)", text), text
        assert "GPU 0:" not in text and screen.query_one(JobPanel).display
