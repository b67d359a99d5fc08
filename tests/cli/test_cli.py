"""The `gpuscope` command as a user runs it: help, version, magma --format, -o, errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from gpuscope.tui.cli.main import main
from paths import EXAMPLES, SHARED_MAGMA, needs_shared

Cli = Callable[..., subprocess.CompletedProcess[str]]  # the gpuscope_cli fixture: gpuscope run in this process


def test_help_and_version(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("--help")
    assert out.returncode == 0 and "magma" in out.stdout
    assert gpuscope_cli("--version").stdout.startswith("gpuscope 0.")
    magma_help = gpuscope_cli("magma", "--help").stdout
    for option in ("--path-pattern", "--exclude", "--keep-warmup", "--format", "--output", "--pool-nodes"):
        assert option in magma_help


def test_csv_summary_has_the_promised_columns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["magma", str(EXAMPLES), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for column in ("test", "environment", "nodes", "problem_size", "count", "gflops_median", "gflops_q1", "gflops_q3", "time_ms_median"):
        assert column in rows[0]
    eks = [r for r in rows if r["environment"] == "aws/eks/gpu" and r["nodes"] == "4" and r["problem_size"] == "512x512x511"]
    assert eks and eks[0]["count"] == "8"


def test_text_report_has_tables_findings_and_box_plots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["magma", str(EXAMPLES), "--format", "text", "--exclude", "attempt-1", "--test", "dgemm_vbatched", "--pool-nodes"]) == 0
    text = capsys.readouterr().out
    assert "MAGMA summary (Gflop/s, magma)" in text and "Environments compared" in text
    assert "PHYSICALLY IMPOSSIBLE" in text and "Findings" in text
    assert "dgemm_vbatched 512x512x511: Gflop/s" in text and "┤" in text  # a plotext box plot
    assert "\x1b[" not in text


def test_ms_metric_markdown_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["magma", str(EXAMPLES), "--format", "markdown", "--metric", "ms", "--nodes", "4"]) == 0
    text = capsys.readouterr().out
    assert "### MAGMA summary (ms, magma)" in text and "```text" in text
    assert main(["magma", str(EXAMPLES), "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"magma_summary", "environments_compared", "findings", "runs"}  # stable whatever the metric


def test_output_file_and_unwritable_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.csv"
    assert main(["magma", str(EXAMPLES), "-o", str(target)]) == 0
    assert target.read_text().startswith("test,environment,nodes,problem_size,count")
    assert main(["magma", str(EXAMPLES), "-o", str(tmp_path / "no" / "dir.csv")]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_missing_path_and_bad_pattern_are_clear_errors(tmp_path: Path, gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("magma", str(tmp_path / "nope"), "--format", "text")
    assert out.returncode == 1 and "no such file or folder" in out.stderr and "Traceback" not in out.stderr
    bad = gpuscope_cli("magma", str(EXAMPLES), "--path-pattern", "{env/size{nodes}", "--format", "csv")
    assert bad.returncode == 2 and "path-pattern" in bad.stderr and "Traceback" not in bad.stderr
    tui = gpuscope_cli("magma", str(tmp_path / "nope"))
    assert tui.returncode == 2 and "no such file or folder" in tui.stderr


@needs_shared
def test_the_issue_command_on_the_shared_study(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("magma", str(SHARED_MAGMA), "--format", "csv")
    assert out.returncode == 0
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["environment"] for r in rows} == {"aws/eks/gpu", "azure/aks/gpu", "azure/cyclecloud/gpu", "google/gke/gpu", "google/compute-engine/gpu"}
    assert {r["nodes"] for r in rows} == {"4", "8", "16", "32"}


def test_watch_once_text_and_json_without_a_gpu(gpuscope_cli: Cli) -> None:
    text = gpuscope_cli("watch", "--once", "--interval", "0.5")
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert "Scope" in text.stdout and "Host" in text.stdout
    assert "No GPU view:" in text.stdout or "GPUs" in text.stdout  # this machine has no NVIDIA driver
    data = json.loads(gpuscope_cli("watch", "--once", "--interval", "0.5", "--format", "json").stdout)
    assert set(data) >= {"host", "processes", "gpus", "gpu_status", "scope", "verdicts"}
    assert data["scope"]["kind"] == "node" and data["host"]["cpu_count"] >= 1


def test_watch_once_demo_is_labelled_simulated(tmp_path: Path, gpuscope_cli: Cli) -> None:
    target = tmp_path / "snap.json"
    out = gpuscope_cli("watch", "--once", "--demo", "h100x4-mig", "--interval", "0.5", "-o", str(target))
    assert out.returncode == 0, out.stderr
    data = json.loads(target.read_text())
    assert data["gpu_status"]["backend"] == "simulated" and all(g["simulated"] for g in data["gpus"])
    assert any(g["mig"] for g in data["gpus"])


def test_watch_usage_errors_are_clear(gpuscope_cli: Cli) -> None:
    bad = gpuscope_cli("watch", "--once", "--demo", "nope")
    assert bad.returncode == 2 and "unknown demo scenario" in bad.stderr and "a100x8-training" in bad.stderr
    slow = gpuscope_cli("watch", "--once", "--interval", "60")
    assert slow.returncode == 2 and "--interval" in slow.stderr
    both = gpuscope_cli("watch", "--job", "1", "--pid", "2", "--once")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_bare_gpuscope_means_watch(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("--once", "--format", "json", "--interval", "0.5")
    assert out.returncode == 0 and json.loads(out.stdout)["scope"]["kind"] == "node"


def test_replay_errors_are_clear_messages_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuscope.collectors.recorder import Recorder

    (tmp_path / "notes.txt").write_text("not a recording\n")
    with Recorder(tmp_path / "empty.gsrec"):
        pass
    cases = [(tmp_path / "missing.gsrec", "no such file", 2), (tmp_path, "is a folder", 2),  # usage errors
             (tmp_path / "notes.txt", "not a gpuscope recording", 1), (tmp_path / "empty.gsrec", "holds no samples", 1),  # nothing to replay
             (Path(__file__).parent.parent / "data" / "recordings" / "v1.gsrec", "stdout is not a terminal", 2)]  # opens, then wants a screen
    for path, message, code in cases:
        assert main(["replay", str(path)]) == code
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (path, err)
