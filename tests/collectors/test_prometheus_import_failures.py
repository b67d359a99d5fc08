"""Reading a job back from a Prometheus that misbehaves: a tiny HTTP server on 127.0.0.1 (a
thread of this test) that is down, slow, refuses (401/403), answers garbage, a huge reply or a
bad query, or stops answering halfway. Each is one clear line within --timeout, what loaded is
kept, and nothing prints a traceback."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gpuscope.collectors.prometheus.maps import builtin, builtin_maps
from gpuscope.collectors.prometheus.query import Client, PrometheusError
from gpuscope.collectors.prometheus.to_recording import ASK_AT_ONCE, Window, import_job
from gpuscope.tui.cli.main import main

START, END = 1_700_000_000.0, 1_700_000_060.0


class FakePrometheus(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = "ok"
        self.answered = 0
        """query_range requests answered before `mode` 'partial' stops answering."""
        self.good_answers = 3
        self.release = threading.Event()
        self.queries: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakePrometheus

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def reply(self, status: int, body: bytes, length: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(url.query))
        mode, server = self.server.mode, self.server
        if url.path == "/api/v1/query_range":
            server.queries.append(params.get("query", ""))
        if mode == "slow" or mode == "partial" and url.path == "/api/v1/query_range" and server.answered >= server.good_answers:
            server.release.wait(10)
            return
        if mode in ("401", "403"):
            return self.reply(int(mode), b"denied")
        if mode == "garbage":
            return self.reply(200, b"\x00\xff\x1b[2J not json at all")
        if mode == "huge-length":
            self.send_response(200)
            self.send_header("Content-Length", str(10 * 1024**3))
            self.end_headers()
            return
        if mode == "huge":
            self.reply(200, b"", length=False)
            try:
                for _ in range(64):
                    self.wfile.write(b'{"status": "success", "data": ' + b" " * (1 << 20))
            except OSError:  # the client hung up: as it should
                pass
            return
        if mode == "not-prometheus":
            return self.reply(404, b"<html>no</html>")
        if url.path == "/api/v1/targets":
            return self.reply(200, json.dumps({"status": "success", "data": {"activeTargets": [{"scrapeInterval": "15s"}]}}).encode())
        if url.path != "/api/v1/query_range":
            return self.reply(404, b"{}")
        query = params["query"]
        if mode == "bad-query" and "memory" in query:
            return self.reply(400, json.dumps({"status": "error", "errorType": "bad_data", "error": "1:5: parse error: unexpected \x1b[31m"}).encode())
        server.answered += 1
        start, end, step = float(params["start"]), float(params["end"]), float(params["step"])
        times = [start + k * step for k in range(int((end - start) / step) + 1)]
        result = []
        if query.startswith(("gpuscope_gpu_utilization_ratio", "gpuscope_gpu_power_watts")):
            result = [{"metric": {"node": "n1", "gpu": str(g)}, "values": [[t, str((50 + g) / 100)] for t in times]} for g in range(2)]
        elif query.startswith("gpuscope_node_cpus"):
            result = [{"metric": {"node": "n1"}, "values": [[t, "8"] for t in times]}]
        self.reply(200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode())


@pytest.fixture
def fake() -> Iterator[FakePrometheus]:
    server = FakePrometheus()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def report(capsys: pytest.CaptureFixture[str], url: str, *extra: str) -> tuple[int, str, str]:
    code = main(["report", "--prometheus", url, "--nodes", "n1", "--start", str(START), "--end", str(END), "--timeout", "1", *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_prometheus_that_answers_gives_the_report_and_says_what_was_found(fake: FakePrometheus, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = report(capsys, fake.url, "--table", "gpus")
    assert code == 0
    assert "every 15 s (the scrape interval is 15 s)" in err
    assert "gpu util_gpu: gpuscope, 2 series" in err
    assert 'gpu temperature_c: n/a: gpuscope_gpu_temperature_celsius{node=~"(n1)' in err and "found nothing" in err
    assert "node cpu_count: gpuscope, 1 series" in err and 'node memory_total: n/a: gpuscope_node_memory_total_bytes{node=~"(n1)' in err
    assert "job: n/a: no map has job queries that work without a job id" in err
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("n1")]
    assert [(r[1], r[-6]) for r in rows] == [("0", "50.0"), ("1", "51.0")]  # GPU, util mean %


def test_prometheus_down_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = report(capsys, f"http://127.0.0.1:{port}")
    assert code == 1 and out == ""
    assert f"http://127.0.0.1:{port}: connection refused (Prometheus not running there?)" in err


@pytest.mark.parametrize("mode, said", [
    ("slow", "no answer within --timeout 1 s"),
    ("401", "401 Unauthorized (give user:password@ in the URL or a token in $GPUSCOPE_PROMETHEUS_TOKEN)"),
    ("403", "403 Forbidden"),
    ("not-prometheus", "404 Not Found for the API (not a Prometheus, or its URL needs a path prefix?)"),
])
def test_a_prometheus_that_will_not_answer_is_one_line_and_exit_1(fake: FakePrometheus, capsys: pytest.CaptureFixture[str], mode: str, said: str) -> None:
    fake.mode = mode
    code, out, err = report(capsys, fake.url)
    assert code == 1 and out == "" and said in err
    assert len(fake.queries) <= ASK_AT_ONCE  # stopped at the first refusal: only those asked together with it went out


def test_garbage_is_said_per_query_and_never_printed_raw(fake: FakePrometheus, capsys: pytest.CaptureFixture[str]) -> None:
    fake.mode = "garbage"
    code, out, err = report(capsys, fake.url, "--metric-map", "gpuscope")
    assert code == 1
    assert "the reply is not JSON" in err and "not a Prometheus API?" in err and "\x1b" not in err
    assert "Prometheus has nothing of this job" in err


def test_a_bad_query_is_that_family_n_a_with_prometheus_words(fake: FakePrometheus, capsys: pytest.CaptureFixture[str]) -> None:
    fake.mode = "bad-query"
    code, out, err = report(capsys, fake.url, "--table", "gpus")
    assert code == 0 and "util mean" in out
    assert "gpu memory_used: n/a: gpuscope_gpu_memory_used_bytes" in err and "Prometheus said: 1:5: parse error: unexpected" in err
    assert "\x1b" not in err


def test_what_loaded_before_prometheus_stopped_answering_is_shown(fake: FakePrometheus, capsys: pytest.CaptureFixture[str]) -> None:
    fake.mode, fake.good_answers = "partial", 2
    code, out, err = report(capsys, fake.url, "--table", "gpus", "--metric-map", "gpuscope")
    assert code == 0
    assert "no answer within --timeout 1 s" in err and "what loaded before is shown" in err
    assert "gpu util_gpu: gpuscope, 2 series" in err and "util mean" in out


def test_a_huge_reply_is_cut_off_at_the_cap(fake: FakePrometheus) -> None:
    fake.mode = "huge"
    client = Client(fake.url, timeout=5, max_bytes=4 * 1024**2)
    with pytest.raises(PrometheusError, match="went past 4,194,304 bytes: cut off") as caught:
        client.query_range("x", START, END, 15)
    assert not caught.value.fatal and client.bytes_read <= 4 * 1024**2 + (1 << 20)
    fake.mode = "huge-length"
    with pytest.raises(PrometheusError, match="a reply of 10,737,418,240 bytes"):
        client.query_range("x", START, END, 15)


def test_one_deadline_for_all_queries(fake: FakePrometheus) -> None:
    fake.mode = "slow"
    client = Client(fake.url, timeout=0.3)
    imported = import_job(client, Window("5", ("n1",), START, END), builtin_maps())
    assert imported.table is None and "no answer within --timeout 0.3 s" in (imported.problem or "")
    assert client.requests == 1  # the targets' scrape interval, then nothing more


def test_credentials_in_the_url_are_sent_and_never_said(fake: FakePrometheus, capsys: pytest.CaptureFixture[str]) -> None:
    fake.mode = "401"
    url = fake.url.replace("http://", "http://alice:s3cret@")
    code, out, err = report(capsys, url)
    assert code == 1 and "wrong credentials" in err and "s3cret" not in err


@pytest.mark.parametrize("argv, said", [
    (["report", "--prometheus", "ftp://x", "--nodes", "n1", "--start", "0", "--end", "10"], "expected http://HOST:PORT"),
    (["report", "--prometheus", "http://x", "--nodes", "n1", "--start", "yesterday", "--end", "10"], "--start 'yesterday': expected ISO 8601"),
    (["report", "--prometheus", "http://x", "--nodes", "n1", "--start", "20", "--end", "10"], "is not after the start"),
    (["report", "--prometheus", "http://x", "--nodes", "n1"], "the job's start and end are not known"),
    (["report", "--recording", "x.gsrec", "--nodes", "n1"], "--nodes goes with --prometheus URL"),
    (["report", "--recording", "x.gsrec", "--prometheus", "http://x"], "two sources of the same samples"),
    (["report", "--prometheus", "http://x", "--start", "0", "--end", "9", "--timeout", "0"], "--timeout must be between 0 and 600"),
    (["replay"], "replay needs a recording FILE, or --prometheus URL"),
    (["replay", "x.gsrec", "--job", "3"], "--job goes with --prometheus URL"),
    (["replay", "x.gsrec", "--prometheus", "http://x"], "two sources of the same samples"),
])
def test_usage_errors_are_said_before_asking(capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert said in err and "Traceback" not in err


def test_a_site_map_with_an_error_is_a_usage_error(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "site.toml"
    path.write_text("[gpu]\nutil = 'x'\n")
    assert main(["report", "--prometheus", "http://x", "--nodes", "n1", "--start", "0", "--end", "9", "--metric-map", str(path)]) == 2
    assert f"metric map {path}: [gpu] has no field 'util' (did you mean 'util_gpu'?)" in capsys.readouterr().err


def test_the_dcgm_map_falls_back_to_node_and_time_when_no_series_has_the_job(fake: FakePrometheus) -> None:
    class Dcgm(Handler):
        def do_GET(self) -> None:  # noqa: N802
            params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            query = params.get("query", "")
            result = []
            if "DCGM_FI_DEV_GPU_UTIL" in query and "hpc_job" not in query:
                result = [{"metric": {"Hostname": "n1", "gpu": "0"}, "values": [[START, "70"], [START + 15, "80"]]}]
            self.reply(200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode())

    fake.RequestHandlerClass = Dcgm
    imported = import_job(Client(fake.url, timeout=2), Window("9", ("n1",), START, END), [builtin("dcgm")], step=15)
    assert imported.table is not None and imported.maps == {"gpu": "dcgm-exporter"}
    assert any('no series labelled hpc_job="9"' in line and "node figure" in line for line in imported.said)
