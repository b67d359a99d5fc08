"""A job read back from a real Prometheus (Debian's package, tests/prometheus_server.py) agrees
with a recording of the same job made at the same time.

Prometheus scrapes, every second, `gpuscope collect --serve --demo` (simulated GPUs: their values
are a function of the sample count, so two gpuscope processes started together see the same
numbers) while `gpuscope record --demo` records for 25 s, both scoped to a real Slurm job that
keeps a core busy and holds 300 MB when the test cluster can run (tests/slurm_cluster.py), else
to the node; then `report --prometheus` over the recording's span must say what
`report --recording` says, within what one sample can change.
A second target serves a dcgm-exporter exposition built from its documented default counters
(one GPU labelled with the job by `hpc_job`, one not), read through the dcgm map."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpuscope.parsers.recording import read as recording
from gpuscope.tui.cli.main import main
from prometheus_server import prometheus  # noqa: F401 (the fixture)
from slurm_cluster import slurm_cluster  # noqa: F401 (the fixture, asked for when it can run)

GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
SCENARIO = "h100x8-llm"  # Hopper: GPM activity too
SECONDS = 25
BURN = """exec python3 -c '
import time
held = b"x" * (300 << 20)
end = time.time() + 120
while time.time() < end:
    pass
'"""
"""The Slurm job: one busy core and 300 MB, ending by itself if nobody cancels it."""
DCGM_NODE = "dcgm-node"
DCGM_JOB = "4242"


def dcgm_exposition(now: float) -> str:
    """dcgm-exporter's default counters (etc/default-counters.csv) for two H100s: GPU 0 is job
    4242's (hpc_job, from a job-mapping directory), GPU 1 nobody's; the energy counter grows at
    400 W (GPU 0) and 100 W (GPU 1)."""
    rows = {"DCGM_FI_DEV_GPU_UTIL": ("gauge", (87, 3)), "DCGM_FI_DEV_MEM_COPY_UTIL": ("gauge", (41, 0)),
            "DCGM_FI_DEV_FB_USED": ("gauge", (40960, 1)), "DCGM_FI_DEV_FB_FREE": ("gauge", (40000, 80959)),
            "DCGM_FI_DEV_POWER_USAGE": ("gauge", (400.0, 100.0)), "DCGM_FI_DEV_GPU_TEMP": ("gauge", (61, 33)),
            "DCGM_FI_DEV_SM_CLOCK": ("gauge", (1980, 345)), "DCGM_FI_DEV_MEM_CLOCK": ("gauge", (2619, 2619)),
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("counter", (int(now * 400_000), int(now * 100_000))),
            "DCGM_FI_PROF_SM_ACTIVE": ("gauge", (0.75, 0.0)), "DCGM_FI_PROF_SM_OCCUPANCY": ("gauge", (0.4, 0.0)),
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", (0.5, 0.0)), "DCGM_FI_PROF_DRAM_ACTIVE": ("gauge", (0.3, 0.0))}
    lines = []
    for name, (kind, values) in rows.items():
        lines += [f"# HELP {name} {name}.", f"# TYPE {name} {kind}"]
        for gpu, value in enumerate(values):
            job = f',hpc_job="{DCGM_JOB}"' if gpu == 0 else ""
            lines.append(f'{name}{{gpu="{gpu}",UUID="GPU-dcgm-{gpu}",device="nvidia{gpu}",modelName="NVIDIA H100 80GB HBM3",'
                         f'Hostname="{DCGM_NODE}",DCGM_FI_DRIVER_VERSION="550.54.15"{job}}} {value}')
    return "\n".join(lines) + "\n"


class _Dcgm(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = dcgm_exposition(time.time()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def dcgm_exporter() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Dcgm)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """`gpuscope report ARGV --format json`, in this process (a subprocess would add seconds of start-up)."""
    code = main(["report", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, err
    return json.loads(out)


def _by_gpu(report: dict[str, Any], table: str) -> dict[str, dict[str, Any]]:
    return {str(row["gpu"]): row for row in report.get(table, ()) if row.get("gpu") not in (None, "")}


def _slurm_job(request: pytest.FixtureRequest) -> tuple[Any, str | None]:
    """(the cluster, a running job's id), or (None, None) where a test Slurm cannot run here."""
    try:
        cluster = request.getfixturevalue("slurm_cluster")
    except pytest.skip.Exception:
        return None, None
    job = cluster.submit(BURN, cpus=2, mem="500M")
    cluster.wait_running(job)
    time.sleep(2)  # its program started and holding its memory
    return cluster, job


@pytest.mark.slow
@pytest.mark.xdist_group("slurm")  # with the Slurm tests: one test cluster per worker
def test_report_from_prometheus_agrees_with_a_recording_made_at_the_same_time(prometheus, dcgm_exporter: str, tmp_path: Path,  # noqa: F811
                                                                             capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> None:
    cluster, job = _slurm_job(request)
    try:
        _agree(prometheus, dcgm_exporter, tmp_path, capsys, job)
    finally:
        if cluster is not None:
            cluster.cancel(job)


def _agree(prometheus, dcgm_exporter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], job: str | None) -> None:  # noqa: F811
    scope = ["--job", job] if job else []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = prometheus([{"job_name": "gpuscope", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]},
                         {"job_name": "dcgm", "static_configs": [{"targets": [dcgm_exporter]}]}], interval_s=1.0)
    serve = subprocess.Popen([GPUSCOPE, "collect", "--serve", f"127.0.0.1:{port}", "--demo", SCENARIO, "--interval", "1", *scope],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rec_path = tmp_path / "job.gsrec"
    record = subprocess.Popen([GPUSCOPE, "record", "--demo", SCENARIO, "--interval", "1", "--duration", str(SECONDS), "-o", str(rec_path), *scope],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = record.communicate(timeout=SECONDS + 30)
        assert record.returncode == 0, err
        time.sleep(2)  # the last sample scraped
    finally:
        for proc in (record, serve):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=20)
    rec = recording.read(rec_path)
    times, node = rec.times, rec.snapshot(0).host.hostname
    window = ["--nodes", node, "--start", f"{times[0]:.3f}", "--end", f"{times[-1]:.3f}", "--prometheus", server.url]
    mine = _report(capsys, "--recording", str(rec_path))
    theirs = _report(capsys, *window, *scope, "--metric-map", "gpuscope")
    n = len(times)
    if job:  # the job's busy cores and memory peak, from its own series (gpuscope_job_*)
        [mine_node], [their_node] = mine["job_efficiency_per_node"], theirs["job_efficiency_per_node"]
        assert their_node["cpus"] == mine_node["cpus"] == 2
        assert abs(their_node["busy_cores_mean"] - mine_node["busy_cores_mean"]) <= 2 / n, (their_node, mine_node)
        assert their_node["memory_peak_gib"] == pytest.approx(mine_node["memory_peak_gib"], rel=0.05)
    assert ("gpus" in mine) == ("gpus" in theirs) == (job is None)  # a job given no GPU has none in its report
    gpus_rec, gpus_prom = _by_gpu(mine, "gpus"), _by_gpu(theirs, "gpus")
    assert set(gpus_prom) == set(gpus_rec) == (set() if job else {str(i) for i in range(8)})
    for gpu, row in gpus_rec.items():
        # a mean over n samples moves at most 100 % / n when one sample differs
        assert abs(gpus_prom[gpu]["util_mean"] - row["util_mean"]) <= 100 / n, (gpu, gpus_prom[gpu], row)
        assert gpus_prom[gpu]["memory_total_gib"] == row["memory_total_gib"]
        assert gpus_prom[gpu]["simulated"] == "yes"
    energy_rec, energy_prom = _by_gpu(mine, "energy"), _by_gpu(theirs, "energy")
    for gpu, row in energy_rec.items():
        if row["what"] != "GPU":
            continue
        one_sample_kwh = row["mean_w"] * 1.5 / 3.6e6  # a sample's energy (1 s, with margin for the scrape's phase)
        assert abs(energy_prom[gpu]["energy_kwh"] - row["energy_kwh"]) <= one_sample_kwh, (gpu, energy_prom[gpu], row)
        assert energy_prom[gpu]["source"] == "energy counter"
    assert ("gpu_activity" in mine) == ("gpu_activity" in theirs)
    activity_rec, activity_prom = _by_gpu(mine, "gpu_activity"), _by_gpu(theirs, "gpu_activity")
    assert job or any(row["sm_active_mean"] is not None for row in activity_rec.values())
    for gpu, row in activity_rec.items():  # GPM series read back (a ratio series, scaled back to %)
        if row["sm_active_mean"] is not None:
            assert abs(activity_prom[gpu]["sm_active_mean"] - row["sm_active_mean"]) <= 100 / n, (gpu, activity_prom[gpu], row)

    dcgm = _report(capsys, "--prometheus", server.url, "--job", DCGM_JOB, "--nodes", DCGM_NODE, "--start", f"{times[0]:.3f}",
                   "--end", f"{times[-1]:.3f}", "--metric-map", "dcgm")
    gpus = _by_gpu(dcgm, "gpus")
    assert list(gpus) == ["0"]  # the job's GPU by its hpc_job label, not the other one
    assert gpus["0"]["util_mean"] == pytest.approx(87) and gpus["0"]["memory_peak_gib"] == pytest.approx(40)
    assert gpus["0"]["memory_total_gib"] == pytest.approx((40960 + 40000) / 1024)
    energy = _by_gpu(dcgm, "energy")["0"]
    assert energy["source"] == "energy counter" and energy["mean_w"] == pytest.approx(400, rel=0.05)
    activity = _by_gpu(dcgm, "gpu_activity")["0"]
    assert activity["sm_active_mean"] == pytest.approx(75) and activity["tensor_active_mean"] == pytest.approx(50)
    assert re.fullmatch(r"[\d.]+", str(gpus["0"]["util_peak"]))
