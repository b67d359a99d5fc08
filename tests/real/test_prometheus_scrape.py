"""A real Prometheus (Debian's package, tests/prometheus_server.py) scrapes `gpuscope collect
--serve --demo` at 1 s, and its HTTP API returns gpuscope's series with the values served."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from prometheus_server import prometheus  # noqa: F401 (the fixture)

GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))


@pytest.mark.xdist_group("prometheus")
def test_prometheus_scrapes_collect_serve(prometheus) -> None:  # noqa: F811
    proc = subprocess.Popen([GPUSCOPE, "collect", "--serve", "127.0.0.1:0", "--demo", "h100x8-llm", "--interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"serving http://(127\.0\.0\.1:\d+)/metrics", line)
        assert found, line
        server = prometheus([{"job_name": "gpuscope", "static_configs": [{"targets": [found.group(1)]}]}], interval_s=1.0)
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
