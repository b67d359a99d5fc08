"""A real Prometheus (Debian's package, tests/prometheus_server.py) scrapes `gpuscope collect
--serve --demo` at 1 s, and its HTTP API returns gpuscope's series with the values served; with
a real Slurm job (tests/slurm_cluster.py), the job's series carry its allocation."""

from __future__ import annotations

import signal
import subprocess

import pytest

from prometheus_server import prometheus, start_serving  # noqa: F401 (the fixture)
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 (the fixture)

def serve(*extra: str) -> tuple[subprocess.Popen[str], str]:
    """`collect --serve` at 1 s: the process and the HOST:PORT Prometheus scrapes."""
    proc, url = start_serving("--interval", "1", *extra)
    return proc, url.removeprefix("http://").removesuffix("/metrics")


def scrape_config(target: str) -> list[dict[str, object]]:
    return [{"job_name": "gpuscope", "static_configs": [{"targets": [target]}]}]


@pytest.mark.xdist_group("prometheus")
def test_prometheus_scrapes_collect_serve(prometheus) -> None:  # noqa: F811
    proc, target = serve("--demo", "h100x8-llm")
    try:
        server = prometheus(scrape_config(target), interval_s=1.0)
        simulated = server.wait_for('gpuscope_simulated{job="gpuscope"}')
        assert simulated[0]["value"][1] == "1"
        power = server.wait_for("gpuscope_gpu_power_watts", ready=lambda r: len(r) == 8)
        assert {s["metric"]["gpu"] for s in power} == {str(i) for i in range(8)}
        assert all(float(s["value"][1]) > 0 for s in power)
        # the counter grows between scrapes: Prometheus' rate() over it is the board's power
        energy = server.wait_for("rate(gpuscope_gpu_energy_joules_total[5s])", ready=lambda r: len(r) == 8, timeout=20)
        assert all(float(s["value"][1]) > 0 for s in energy)
        gpm = server.query("gpuscope_gpu_sm_active_ratio")  # H100s have GPM in this scenario
        assert gpm and all(0 <= float(s["value"][1]) <= 1 for s in gpm)
        up = server.query('up{job="gpuscope"}')
        assert up[0]["value"][1] == "1"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "stopped by SIGTERM" in err, err


def test_a_real_slurm_jobs_series(prometheus, slurm_cluster: SlurmCluster) -> None:  # noqa: F811
    """In the Slurm group (conftest): one test cluster per worker."""
    job = slurm_cluster.submit("sleep 60", cpus=1, mem="100M")
    slurm_cluster.wait_running(job)
    proc, target = serve("--demo", "one-gpu-idle", "--job", job)
    try:
        server = prometheus(scrape_config(target), interval_s=1.0)
        cpus = server.wait_for(f'gpuscope_job_cpus_allocated{{jobid="{job}"}}')
        assert cpus[0]["value"][1] == "1" and set(cpus[0]["metric"]) == {"__name__", "node", "jobid", "instance", "job"}
        memory = server.wait_for(f'gpuscope_job_memory_requested_bytes{{jobid="{job}"}}')
        assert float(memory[0]["value"][1]) == 100 * 1024 * 1024
        assert server.query(f'gpuscope_job_gpus_allocated{{jobid="{job}"}}')[0]["value"][1] == "0"  # asked for none
    finally:
        slurm_cluster.cancel(job)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
