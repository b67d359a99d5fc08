"""`gpuscope scaling PATH... --format ...` as a user runs it.

The speedups printed for the real MLPerf Training v3.1 logs are checked against times computed
here, independently of the readers, from the logs' own `run_start` / `run_stop` events; the
example logs (tests/scaling_work.py output) and the hand-written fixtures cover the seed
formats; bad input must give a finding, a partial result and an exit code, never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.tui.cli import main as cli
from gpuscope.tui.cli.main import main
from gpuscope.tui.model.scaling_report import TABLES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scaling"
FIXTURES = ROOT / "tests" / "data" / "scaling"
MLPERF = ROOT.parent / "shared" / "data" / "scaling" / "mlperf-training-v3.1"
needs_mlperf = pytest.mark.skipif(not MLPERF.is_dir(), reason="../shared/data/scaling is absent")
GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
CSV_COLUMNS = ("series", "resources", "runs", "time_s_median", "speedup", "efficiency", "karp_flatt")


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([GPUSCOPE, "scaling", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["scaling", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def mlperf_times() -> dict[tuple[str, int], list[float]]:
    """(benchmark, GPUs) -> seconds of the successful runs, from run_start/run_stop alone;
    GPUs from the folder name (eos_n8_* is 8 nodes of 8 GPUs, eos_* one node)."""
    out: dict[tuple[str, int], list[float]] = {}
    for log in sorted(MLPERF.glob("NVIDIA/results/*/*/result_*.txt")):
        events = {}
        for line in log.read_text().splitlines():
            if line.startswith(":::MLLOG "):
                event = json.loads(line[len(":::MLLOG "):])
                if event["key"] in ("run_start", "run_stop"):
                    events[event["key"]] = event
        if events["run_stop"]["metadata"].get("status") != "success":
            continue
        gpus = 64 if "_n8_" in log.parent.parent.name else 8
        seconds = (events["run_stop"]["time_ms"] - events["run_start"]["time_ms"]) / 1000
        out.setdefault((log.parent.name, gpus), []).append(seconds)
    return out


@needs_mlperf
def test_mlperf_speedups_match_the_logs_own_times(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = printed(capsys, str(MLPERF), "--format", "csv")
    assert code == 0, err
    rows = {(r["series"], int(r["resources"])): r for r in csv_rows(out)}
    assert set(CSV_COLUMNS) <= set(csv_rows(out)[0])
    times = mlperf_times()
    for bench in ("resnet", "ssd"):
        t8, t64 = statistics.median(times[(bench, 8)]), statistics.median(times[(bench, 64)])
        row = rows[(f"{bench} (gpus)", 64)]
        assert float(row["time_s_median"]) == pytest.approx(t64, rel=1e-6)
        assert float(row["speedup"]) == pytest.approx(t8 / t64, rel=1e-6)
        assert float(row["efficiency"]) == pytest.approx(t8 / t64 / 8, rel=1e-6)
        p = 8.0
        assert float(row["karp_flatt"]) == pytest.approx((t64 / t8 - 1 / p) / (1 - 1 / p), rel=1e-5)
        assert rows[(f"{bench} (gpus)", 8)]["karp_flatt"] == ""  # n/a at the baseline, never 0
    assert rows[("resnet (gpus)", 8)]["runs"] == "4"  # the aborted run is left out ...
    assert rows[("resnet (gpus)", 8)]["left_out"] == "1 aborted"
    assert "left out (aborted)" in err  # ... and said
    assert "systems/eos_n8_ngc23.09_mxnet.json" in rows[("resnet (gpus)", 64)]["resources_from"]
    code, out, _ = printed(capsys, str(MLPERF), "--format", "csv", "--table", "accuracy")
    held = {(r["series"], r["resources"]): r["quality_verdict"] for r in csv_rows(out)}
    assert held[("resnet (gpus)", "8")] == "baseline" and held[("resnet (gpus)", "64")].startswith("within run-to-run spread")


@needs_mlperf
def test_mlperf_baseline_and_unknown_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = printed(capsys, str(MLPERF), "--format", "csv", "--baseline", "64")
    assert code == 0
    rows = {(r["series"], int(r["resources"])): r for r in csv_rows(out)}
    times = mlperf_times()
    t8, t64 = statistics.median(times[("resnet", 8)]), statistics.median(times[("resnet", 64)])
    assert float(rows[("resnet (gpus)", 64)]["speedup"]) == 1
    assert float(rows[("resnet (gpus)", 8)]["speedup"]) == pytest.approx(t64 / t8, rel=1e-6)
    code, out, err = printed(capsys, str(MLPERF), "--format", "csv", "--baseline", "16")
    assert code == 2 and out == ""
    assert "--baseline 16 matches no configuration" in err and "resnet (gpus): 8, 64" in err


@needs_mlperf
def test_mlperf_text_has_every_table_and_both_plots(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = printed(capsys, str(MLPERF), "--format", "text", "--width", "160")
    assert code == 0
    for title in ("Series overview", "Speedup analysis", "Benchmark results summary", "Config diff", "Accuracy check", "Findings"):
        assert f"\n{title}\n" in f"\n{out}", title
    assert "Speedup" in out and "ideal" in out and "GPUs (log2)" in out
    assert "Parallel efficiency (%)" in out and "75%" in out
    assert "not a pure strong-scaling comparison" in out  # ssd's epoch count and learning rate differ
    lines = out.splitlines()
    plots = lines[next(i for i, line in enumerate(lines) if "┌" in line) - 1:]  # tables have no frame: the plots do
    assert plots[0].strip() == "Speedup" and max(len(line) for line in plots) <= 160  # plots and their notes fit --width


def test_examples_csv_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = printed(capsys, str(EXAMPLES), "--format", "csv")
    assert code == 0
    rows = csv_rows(out)
    assert [int(r["resources"]) for r in rows] == [1, 2, 4, 8] and {r["runs"] for r in rows} == {"3"}
    code, out, _ = printed(capsys, str(EXAMPLES), "--format", "csv", "--table", "runs")
    runs = csv_rows(out)
    assert len(runs) == 12 and {r["resources_from"] for r in runs if r["resources"] == "4"} == {"folder name 'workers-4' (workers-4)"}
    for config in rows:  # the speedup is the ratio of the median times the runs table lists
        t = statistics.median(float(r["time_s"]) for r in runs if r["resources"] == config["resources"])
        t1 = statistics.median(float(r["time_s"]) for r in runs if r["resources"] == "1")
        assert float(config["speedup"]) == pytest.approx(t1 / t, rel=1e-6)
    code, out, _ = printed(capsys, str(EXAMPLES), "--format", "json")
    payload = json.loads(out)
    assert list(payload) == ["series_overview", "speedup_analysis", "benchmark_results_summary", "config_diff", "accuracy_check", "findings"]
    overview = payload["series_overview"][0]
    assert overview["serial_fraction"] is not None and overview["low"] <= overview["serial_fraction"] <= overview["high"]
    assert payload["speedup_analysis"][0]["karp_flatt"] is None  # n/a at the baseline
    assert "quality_p_value" in payload["accuracy_check"][0]
    code, out, _ = printed(capsys, str(EXAMPLES), "--format", "markdown", "--table", "accuracy")
    assert out.startswith("### Accuracy check") and "| series |" in out


def test_table_names_are_the_reports() -> None:
    assert cli.SCALING_TABLES == TABLES


def test_seed_fixtures_speedup(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = printed(capsys, str(FIXTURES / "seed004"), "--format", "csv")
    assert code == 0
    rows = {int(r["resources"]): r for r in csv_rows(out)}
    assert float(rows[2]["speedup"]) == pytest.approx(84.312765 / 44.908122, rel=1e-6)
    assert float(rows[4]["efficiency"]) == pytest.approx(84.312765 / 25.118732 / 4, rel=1e-6)
    assert rows[4]["resources_from"] == "folder name 'threads-4' (threads-4)"
    assert rows[1]["resources_from"] == "#SBATCH -c 1 in submit_mnist.sh"


def test_bad_logs_give_findings_and_a_partial_result(capsys: pytest.CaptureFixture[str]) -> None:
    """No timing line, an unknown unit, two disagreeing units, a run cut by its time limit."""
    code, out, err = printed(capsys, str(FIXTURES / "bad"), "--format", "csv")
    assert code == 0 and "Traceback" not in err
    rows = {(r["series"], int(r["resources"])): r for r in csv_rows(out)}
    assert rows[("seed002 (gpus)", 4)]["time_s_median"] == "95.23"
    assert rows[("seed002 (gpus)", 2)]["time_s_median"] == "" and rows[("seed002 (gpus)", 2)]["left_out"] == "1 no timing"
    assert rows[("seed004 (threads)", 2)]["speedup"] == ""  # n/a, never 0
    for said in ("no timing line", "fortnights", "disagree", "timeout", "no usable run at all"):
        assert said in err, said


def test_one_configuration_only_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = printed(capsys, str(FIXTURES / "bad" / "mixed_units-4gpu.out"), "--format", "csv")
    assert code == 0 and len(csv_rows(out)) == 1
    assert "one configuration (4 GPUs): no scaling to compute" in err


def test_no_usable_run_fails_after_printing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run-2gpu.out").write_text("Number of GPUs: 2\nTRAINING COMPLETE\n")
    code, out, err = printed(capsys, str(tmp_path), "--format", "csv")
    assert code == 1 and "no run has a usable time" in err and "no timing" in out


def test_empty_folder_missing_path_fifo_and_binary_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 20)
    for path, said in ((empty, "no runs found"), (tmp_path / "nope", "no such file or folder"), (fifo, "FIFO"), (binary, "binary")):
        code, out, err = printed(capsys, str(path), "--format", "text")  # a FIFO is never opened: no hang
        assert code == 1 and said in err and out == "", (path, err)
    screen = run(str(tmp_path / "nope"))  # the screen's path: no terminal, but the missing path is said first
    assert screen.returncode == 2 and "no such file or folder" in screen.stderr


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for args, said in ((["--resources", "run-{cores}"], "unknown field {cores}"), (["--resources", "plain"], "needs at least one"),
                       (["--baseline", "0"], "--baseline must be"), (["--series", "nope"], "present: seed004 (processes)")):
        code, out, err = printed(capsys, str(EXAMPLES), "--format", "csv", *args)
        assert code == 2 and out == "" and said in err, (args, err)


def test_resources_pattern_and_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "speedup.csv"
    code, _, err = printed(capsys, str(EXAMPLES), "--resources", "workers-{threads}", "-o", str(target))
    assert code == 0 and "wrote" in err
    rows = csv_rows(target.read_text())
    assert {r["resource_kind"] for r in rows} == {"threads"}


def test_print_path_does_not_import_textual() -> None:
    code = "import sys; from gpuscope.tui.cli.main import main; main(['scaling', sys.argv[1], '--format', 'csv']); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code, str(EXAMPLES)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_non_monotonic_and_single_runs_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "study.csv"
    table.write_text("benchmark,threads,time\nstencil,1,12.0\nstencil,2,6.0\nstencil,4,8.0\n")
    code, out, err = printed(capsys, str(table), "--format", "text", "--width", "200")
    assert code == 0
    assert "speedup falls from 2 at 2 to 1.5 at 4 threads" in err  # a warning: on stderr
    assert "one run at 1, 2, 4" in out  # info: in the findings table


def test_text_shows_the_last_50_runs_and_says_how_many_are_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A study of thousands of runs prints in a few screens: text and markdown show the last 50
    runs with a note; CSV and JSON keep every run."""
    table = tmp_path / "runs.csv"
    rows = [f"{gpus},{100.0 / gpus + i * 0.01:.2f},run{i:03d}" for i in range(60) for gpus in (1, 2, 4) if (i + gpus) % 3 == 0]
    table.write_text("gpus,time_s,name\n" + "\n".join(rows) + "\n")
    assert len(rows) == 60
    code, out, _err = printed(capsys, str(table), "--format", "text", "--table", "runs")
    assert code == 0
    assert "the last 50 of 60 runs; 10 earlier runs are left out here (CSV and JSON keep all: --format csv --table runs)" in out
    assert f"runs.csv:{len(rows) + 1}" in out and "runs.csv:11 " not in out + " " and "runs.csv:12" in out  # rows 12..61 kept
    code, out, _err = printed(capsys, str(table), "--format", "csv", "--table", "runs")
    assert code == 0 and len(list(csv.DictReader(io.StringIO(out)))) == 60 and "left out" not in out
    code, out, _err = printed(capsys, str(table), "--format", "json")
    assert len(json.loads(out)["benchmark_results_summary"]) == 60
