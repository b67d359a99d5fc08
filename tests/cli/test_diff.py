"""`gpuscope diff BASE NEW` as a user runs it, on real pairs: profiles of one program (several
runs a side made from a real PyProf export, one kernel slowed), two environments' MAGMA runs,
MLPerf runs of two systems, the seed's scaling logs, recordings, tables; the verdict line
first, --fail-if-slower's exit status, every format, and bad input."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from gpuscope.tui.cli.main import main
from gpuscope.tui.model.diff import DiffOptions, diff_paths, render
from paths import ROOT

PROFILE = ROOT / "examples/profiles/run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
MAGMA = ROOT / "examples/magma"
SHARED = ROOT.parent / "shared/data"
MLPERF_OTHERS = SHARED / "scaling/mlperf-training-v3.1-others"
SHARED_PYPROF = SHARED / "pyprof/data/pcm/pyprof_kernels"
SLOWED = "cudnn::detail::implicit_convolve_sgemm"


def runs(folder: Path, count: int, slow: float = 1.0, seed: int = 0) -> Path:
    """`count` runs of the real PyProf export, each launch's time jittered by up to ±2 %, and
    SLOWED's launches `slow` times longer."""
    folder.mkdir(parents=True)
    rows = list(csv.reader(PROFILE.open()))
    at = rows[0].index("Sil(ns)")
    rng = random.Random(seed)
    for run in range(count):
        out = [rows[0]]
        for row in rows[1:]:
            factor = rng.uniform(0.98, 1.02) * (slow if row[0] == SLOWED else 1.0)
            out.append([*row[:at], str(round(float(row[at]) * factor)), *row[at + 1:]])
        with (folder / f"run_{run}_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv").open("w", newline="") as handle:
            csv.writer(handle, quoting=csv.QUOTE_ALL).writerows(out)
    return folder


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["diff", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_kernels_several_runs_slower_beyond_noise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, new = runs(tmp_path / "base", 6), runs(tmp_path / "new", 6, slow=1.3, seed=1)
    code, out, err = cli(capsys, base, new, "--fail-if-slower", "10")
    assert code == 1
    verdict = out.splitlines()[1]
    assert verdict.startswith("1 kernel slower beyond noise (p < 0.05, Holm-corrected), largest +3")
    assert SLOWED in verdict
    assert f"slower beyond noise and by more than 10 %: {SLOWED}" in err
    report = diff_paths(base, new, DiffOptions(fail_if_slower=50))
    assert report.slower_beyond == []  # beyond noise, not beyond 50 %
    rows = {r["kernel"]: r for r in csv.DictReader(io.StringIO(render(report, "csv")))}
    assert rows[SLOWED]["verdict"] == "slower beyond noise"
    assert 0.25 < float(rows[SLOWED]["slowdown"]) < 0.35
    assert float(rows[SLOWED]["p_value"]) < 0.05
    assert all(r["verdict"].startswith("within noise") for k, r in rows.items() if k != SLOWED)


def test_kernels_single_run_has_no_noise_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, new = runs(tmp_path / "base", 1), runs(tmp_path / "new", 1, slow=2.0)
    code, out, err = cli(capsys, base, new, "--fail-if-slower", "1")
    assert code == 0  # nothing is beyond noise without a noise estimate, and the command says so
    assert "--fail-if-slower 1: nothing could be judged against noise" in err
    assert out.splitlines()[1].startswith("single run on each side: no noise estimate; largest change +")
    assert "beyond noise" not in out.splitlines()[1]
    code, out, err = cli(capsys, base, base)
    assert out.splitlines()[1] == "single run on each side: no noise estimate; no value changed"  # not "largest change +0.0 %"


@pytest.mark.skipif(not SHARED_PYPROF.is_dir(), reason="../shared/data/pyprof is absent")
def test_kernels_two_configurations_of_resnet(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's two PyProf profiles (1 and 8 nodes): kernels each lacks are new or vanished."""
    files = sorted(SHARED_PYPROF.glob("*.gzip"))
    report = diff_paths(files[0], files[1])
    assert report.kind == "kernels" and report.compared
    table = report.tables[0]
    matches = {r[table.keys.index("match")] for r in table.rows}
    assert "same" in matches and table.rows
    assert report.verdict.startswith("single run on each side: no noise estimate")


def test_magma_two_environments(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, MAGMA / "aws/eks", MAGMA / "google/gke", "--format", "json")
    assert code == 0
    got = json.loads(out)
    assert got["verdict"][0]["kind"] == "magma"
    assert got["verdict"][0]["verdict"].startswith("15 sizes slower beyond noise (p < 0.05, Holm-corrected), largest +17 %")
    rows = got["magma_base_against_new"]
    slower = [r for r in rows if r["verdict"] == "slower beyond noise"]
    assert len(slower) == 15 and all(r["nodes"] == "4" and r["metric"] == "gflops" for r in slower)
    assert all(r["ratio"] < 1 for r in slower)  # Gflop/s fell: slower
    assert any(r["verdict"] == "no trusted rows on the new side" for r in rows)  # gke's 8-node runs are untrusted


def test_scaling_seed_logs_against_themselves(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, ROOT / "examples/scaling", ROOT / "examples/scaling", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["resources"] for r in rows] == ["1", "2", "4", "8"]
    assert all(float(r["ratio"]) == 1 and r["verdict"].startswith("within noise (p = 1; 3 and 3 values cannot reach") for r in rows)


@pytest.mark.skipif(not MLPERF_OTHERS.is_dir(), reason="../shared/data/scaling is absent")
def test_mlperf_two_systems(capsys: pytest.CaptureFixture[str]) -> None:
    """Krai's 2 RTX A5000 against Dell's 4 H100, ten BERT runs each: paired though the counts differ."""
    report = diff_paths(MLPERF_OTHERS / "Krai", MLPERF_OTHERS / "Dell")
    assert report.kind == "scaling"
    row = dict(zip(report.tables[0].keys, report.tables[0].rows[0]))
    assert row["match"] == "resources differ (2 → 4)" and row["verdict"] == "faster beyond noise"
    assert row["base_runs"] == row["new_runs"] == 10 and row["ratio"] < 0.05


def test_recordings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, ROOT / "examples/recording/demo.gsrec", ROOT / "examples/recording/slurm-job.gsrec", "--format", "markdown")
    assert code == 0
    assert out.startswith("**gpuscope diff** (recording)")
    assert "single run on each side: no noise estimate" in out.splitlines()[0]
    assert "| GPU energy (J) | n/a on the new side |" in out  # the real job had no GPU: n/a, never 0
    assert "SIMULATED" in out


def test_tables_keys_guessed_and_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ROOT / "examples/specmoe/comprehensive_summary.csv"
    lines = base.read_text().splitlines()
    head = lines[0].split(",")
    at = head.index("inference_latency_ms_mean")
    changed = lines[4].split(",")
    changed[at] = str(float(changed[at]) * 1.5)
    new = tmp_path / "new.csv"
    new.write_text("\n".join([lines[0], *lines[1:4], ",".join(changed), *lines[6:]]) + "\n")
    report = diff_paths(base, new)
    assert report.verdict.startswith("24 rows matched on strategy, strategy_name, batch_size; one value per cell: no noise estimate; "
                                     "largest change +50 % `inference_latency_ms_mean at")
    assert report.verdict.endswith("; 1 vanished")
    code, _, err = cli(capsys, base, new, "--key", "nope")
    assert code == 2 and "key column 'nope' is not in the base table" in err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, MAGMA, ROOT / "examples/profiles")
    assert (code, out) == (2, "")
    assert "base is MAGMA outputs (magma), new is profiles (kernels)" in err
    code, _, err = cli(capsys, MAGMA, tmp_path / "missing")
    assert code == 2 and "no such file or folder" in err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02\x1b[31m" * 100)
    code, _, err = cli(capsys, junk, junk)
    assert code == 2 and "\x1b" not in err


def test_empty_and_truncated_sides_never_raise(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    cut = tmp_path / "run_0_config_1_2_ib_nvprof_2_x_ret_0_0.csv"
    cut.write_text(PROFILE.read_text()[:150])
    escapes = [tmp_path / "a\x1b[31m.csv", tmp_path / "b.csv"]
    escapes[0].write_text("name\x1b[31m,val\nk\x1b]0;title\x07,1\n")
    escapes[1].write_text("name\x1b[31m,val\nk\x1b]0;title\x07,3\n")
    for base, new in ((empty, empty), (cut, PROFILE), (PROFILE, cut), tuple(escapes)):
        report = diff_paths(base, new)
        assert report.verdict
        for fmt in ("text", "markdown", "csv", "json"):
            assert "\x1b" not in render(report, fmt)


NVIDIA = SHARED / "scaling/mlperf-training-v3.1/NVIDIA/results"


@pytest.mark.skipif(not NVIDIA.is_dir(), reason="../shared/data/scaling is absent")
def test_mlperf_one_node_against_eight() -> None:
    """NVIDIA's SSD on 1 node (8 H100) against 8 nodes (64), five runs each: the speedup the
    candidate gets over the baseline and its efficiency against the 8x the counts allow."""
    report = diff_paths(NVIDIA / "eos_ngc23.09_pytorch", NVIDIA / "eos_n8_ngc23.09_pytorch")
    row = dict(zip(report.tables[0].keys, report.tables[0].rows[0]))
    assert row["match"] == "resources differ (8 → 64)" and row["verdict"] == "faster beyond noise"
    assert row["over_base_speedup"] == pytest.approx(row["base_time_s"] / row["new_time_s"])
    assert row["over_base_efficiency"] == pytest.approx(row["over_base_speedup"] / 8)
    assert 5 < row["over_base_speedup"] < 7 and report.judged == 1
    assert report.verdict.endswith("; 1 faster beyond noise, largest -83 % `ssd (gpus) at 64`")


def test_a_side_read_in_part_is_said_before_the_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile cut by the decoded-data budget compares only what was read: the verdict line
    says so first, naming the side, rather than reporting kernels as vanished or slower."""
    import pandas as pd

    from gpuscope.parsers import parquet_read

    whole = tmp_path / "whole.parquet"
    pd.read_csv(PROFILE).to_parquet(whole)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes())
    assert "read in part" not in diff_paths(whole, cut).verdict
    monkeypatch.setattr(parquet_read, "MAX_DECODED", 1500)  # over the row group as stored (1.1 KB), under the columns a diff reads, decoded
    report = diff_paths(whole, cut)
    assert report.verdict.startswith("base and new read in part (read the first "), report.verdict
    assert "only what was read is compared" in report.verdict
