"""`gpuscope collect --serve / --textfile` as a user runs it: a subprocess with --demo, scraped over HTTP."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from gpuscope.tui.cli.serve import parse_address
from prometheus_server import GPUSCOPE, start_serving

def scrape(url: str, accept: str | None = None) -> tuple[str, str]:
    """(content type, body) once a sample is there (the first scrape may come before it)."""
    deadline = time.monotonic() + 20
    while True:
        request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
        with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 (our own server on 127.0.0.1)
            body = reply.read().decode()
            if "gpuscope_simulated" in body or time.monotonic() > deadline:
                return reply.headers["Content-Type"], body
        time.sleep(0.1)


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    return proc.returncode, err


def test_serve_demo_over_http_text_and_openmetrics() -> None:
    proc, url = start_serving("--demo", "--interval", "0.5", "--per-process")  # without it, no process series: tests/collectors/test_prometheus_export.py
    try:
        kind, body = scrape(url)
        assert kind.startswith("text/plain")
        samples = {s.name: s for f in text_string_to_metric_families(body) for s in f.samples}
        assert samples["gpuscope_simulated"].value == 1
        gpus = [s for f in text_string_to_metric_families(body) for s in f.samples if s.name == "gpuscope_gpu_power_watts"]
        assert len(gpus) == 8 and {s.labels["gpu"] for s in gpus} == {str(i) for i in range(8)}  # a100x8-training
        assert "gpuscope_node_memory_total_bytes" in samples and "gpuscope_gpu_energy_joules_total" in samples
        assert "gpuscope_process_gpu_memory_bytes" in samples  # the scenario's GPU processes
        kind, body = scrape(url, accept="application/openmetrics-text; version=1.0.0; charset=utf-8")
        assert kind.startswith("application/openmetrics-text") and body.rstrip().endswith("# EOF")
        assert {f.name for f in parse_openmetrics(body)} >= {"gpuscope_simulated", "gpuscope_gpu_energy_joules"}
    finally:
        code, err = stop(proc)
    assert code == 0 and "stopped by SIGTERM" in err, err


def test_port_taken_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([GPUSCOPE, "collect", "--serve", str(port), "--demo", "--count", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"--serve 127.0.0.1:{port}: the port is taken" in done.stderr and "Traceback" not in done.stderr


def test_addresses() -> None:
    assert parse_address("9400") == parse_address(":9400") == ("127.0.0.1", 9400)  # never every interface unless asked
    assert parse_address("0.0.0.0:9400") == ("0.0.0.0", 9400)
    assert parse_address("[::1]:0") == ("::1", 0)
    assert parse_address("node7.cluster:80") == ("node7.cluster", 80)
    for bad in ("http://x:1", "70000", "", "a b:1", "[zz]:1", "9400x"):
        assert "expected [ADDR:]PORT" in str(parse_address(bad)), bad
    assert "IPv6 address in brackets" in str(parse_address("::1:9400"))


def test_bad_address_is_a_usage_error() -> None:
    done = subprocess.run([GPUSCOPE, "collect", "--serve", "localhost:99999", "--demo"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expected [ADDR:]PORT" in done.stderr, done.stderr


def test_textfile_writes_a_whole_exposition(tmp_path: Path) -> None:
    done = subprocess.run([GPUSCOPE, "collect", "--textfile", str(tmp_path), "--demo", "one-gpu-idle", "--interval", "0.5", "--count", "2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["gpuscope.prom"]
    samples = {s.name: s.value for f in text_string_to_metric_families((tmp_path / "gpuscope.prom").read_text()) for s in f.samples}
    assert samples["gpuscope_simulated"] == 1 and "gpuscope_gpu_memory_total_bytes" in samples
    assert "2 samples taken" in done.stderr


def test_textfile_folder_missing(tmp_path: Path) -> None:
    done = subprocess.run([GPUSCOPE, "collect", "--textfile", str(tmp_path / "nope"), "--demo"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no such folder" in done.stderr and "Traceback" not in done.stderr


def test_modes_are_one_of_three() -> None:
    done = subprocess.run([GPUSCOPE, "collect", "--demo"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--stream" in done.stderr and "--serve" in done.stderr
    done = subprocess.run([GPUSCOPE, "collect", "--stream", "--per-process", "--demo", "--count", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--per-process goes with --serve or --textfile" in done.stderr


def test_textfile_folder_removed_while_running(tmp_path: Path) -> None:
    folder = tmp_path / "textfile"
    folder.mkdir()
    proc = subprocess.Popen([GPUSCOPE, "collect", "--textfile", str(folder), "--demo", "one-gpu-idle", "--interval", "0.5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (folder / "gpuscope.prom").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (folder / "gpuscope.prom").unlink()
        folder.rmdir()
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and f"--textfile {folder}: No such file or directory" in err and "Traceback" not in err, err
