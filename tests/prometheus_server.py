"""A real Prometheus server for tests and benches (Debian's `prometheus` package).

`start_prometheus(scrape_configs, tmp)` writes a prometheus.yml into `tmp`, starts
`prometheus` on a free 127.0.0.1 port as our child and returns a `PromServer` once `/-/ready`
answers: `.url`, `.pid`, `.query(expr)`, `.query_range(...)`, `.wait_for(expr)`, `.stop()`
(by pid: TERM, then KILL). `storage=` starts it over an existing TSDB folder, e.g. blocks made
with `create_blocks(openmetrics_file, folder)` (promtool tsdb create-blocks-from openmetrics).

From a test module: `from prometheus_server import prometheus  # noqa: F401`; the fixture yields
the `start_prometheus` function with `tmp` filled in and stops every server it started. Tests
are skipped, with the reason, when GPUSCOPE_SKIP_PROMETHEUS=1 or when `prometheus` is missing
and cannot be installed (apt-get, as root only).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import pytest

from apt_packages import apt_install

SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/usr/sbin"])


def _which(name: str) -> str | None:
    return shutil.which(name, path=SEARCH_PATH)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _install() -> str | None:
    """apt-get prometheus; None on success, else why not (the tests are then skipped)."""
    why = apt_install(["prometheus"])
    return why if why is not None or _which("prometheus") else "apt-get ran but prometheus is still missing"


GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))


def start_serving(*args: str) -> tuple[subprocess.Popen[str], str]:
    """`gpuscope collect --serve 127.0.0.1:0 ARGS...` (port 0: a free one): the process and the
    /metrics URL it says on stderr. Stop it with SIGTERM (or kill) by its pid."""
    proc = subprocess.Popen([GPUSCOPE, "collect", "--serve", "127.0.0.1:0", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"serving (http://127\.0\.0\.1:\d+/metrics)", line)
    if not found:
        proc.kill()
        pytest.fail(f"no serving line: {line!r} {proc.communicate(timeout=10)}")
    return proc, found.group(1)


def prometheus_missing() -> str | None:
    """Why a real Prometheus cannot run here (installing it when possible), or None."""
    if os.environ.get("GPUSCOPE_SKIP_PROMETHEUS") == "1":
        return "GPUSCOPE_SKIP_PROMETHEUS=1"
    if _which("prometheus"):
        return None
    return _install()


class PromServer:
    def __init__(self, folder: Path, port: int, proc: subprocess.Popen[bytes], log: IO[bytes]) -> None:
        self.folder = folder
        self.url = f"http://127.0.0.1:{port}"
        self.proc = proc
        self._log = log

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def log_path(self) -> Path:
        return self.folder / "prometheus.log"

    def log_tail(self, lines: int = 20) -> str:
        return _tail(self.log_path, lines)

    def get(self, path: str, params: dict[str, Any] | None = None, timeout: float = 10) -> Any:
        """GET an API path; the decoded JSON reply (an HTTP error's JSON body too)."""
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310 (our own http://127.0.0.1 server)
                return json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return json.loads(err.read() or b"{}")

    def query(self, expr: str) -> list[dict[str, Any]]:
        """/api/v1/query: the result list (each {"metric": labels, "value": [t, "v"]})."""
        reply = self.get("/api/v1/query", {"query": expr})
        if reply.get("status") != "success":
            raise AssertionError(f"query {expr!r} failed: {reply}")
        return list(reply["data"]["result"])

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        reply = self.get("/api/v1/query_range", {"query": expr, "start": start, "end": end, "step": step})
        if reply.get("status") != "success":
            raise AssertionError(f"query_range {expr!r} failed: {reply}")
        return list(reply["data"]["result"])

    def wait_for(self, expr: str, timeout: float = 15, ready: Callable[[list[dict[str, Any]]], bool] = bool) -> list[dict[str, Any]]:
        """Poll an instant query until `ready(result)` (default: any series), else fail with the log."""
        deadline = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if ready(result):
                return result
            time.sleep(0.25)
        targets = self.get("/api/v1/targets").get("data", {}).get("activeTargets", [])
        health = [(t.get("scrapeUrl"), t.get("health"), t.get("lastError")) for t in targets]
        raise AssertionError(f"{expr!r} gave {result} after {timeout} s; targets {health}\n{self.log_tail()}")

    def stop(self) -> None:
        """TERM our prometheus by pid, KILL it if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


def start_prometheus(scrape_configs: list[dict[str, Any]], tmp: Path, interval_s: float = 1.0,
                     storage: Path | None = None, timeout: float = 30) -> PromServer:
    """Start prometheus scraping `scrape_configs` (prometheus.yml's list, as dicts) every
    `interval_s`, its data in `storage` (default tmp/data). Waits until /-/ready answers."""
    binary = _which("prometheus")
    if binary is None:
        raise RuntimeError("prometheus is not installed (the fixture `prometheus` installs it or skips)")
    tmp.mkdir(parents=True, exist_ok=True)
    interval = f"{max(1, round(interval_s * 1000))}ms"
    config = {"global": {"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval},
              "scrape_configs": scrape_configs}
    config_path = tmp / "prometheus.yml"
    config_path.write_text(json.dumps(config, indent=1))  # JSON is YAML
    data = storage if storage is not None else tmp / "data"
    port = _free_port()
    argv = [binary, f"--config.file={config_path}", f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=3650d"]  # pre-made blocks of past jobs are kept, not deleted
    log = open(tmp / "prometheus.log", "wb")  # closed in stop()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    server = PromServer(tmp, port, proc, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(server.url + "/-/ready", timeout=2) as reply:  # noqa: S310
                if reply.status == 200:
                    return server
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"prometheus did not become ready in {timeout} s (exit {proc.returncode})\n{server.log_tail()}")


def create_blocks(openmetrics: Path, storage: Path, timeout: float = 300) -> None:
    """`promtool tsdb create-blocks-from openmetrics FILE DIR`: TSDB blocks for start_prometheus(storage=).
    The file must end with `# EOF`, samples in seconds and in time order per series."""
    promtool = _which("promtool")
    if promtool is None:
        raise RuntimeError("promtool is not installed (Debian: package prometheus)")
    storage.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(storage)],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"promtool create-blocks-from failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-1000:]}")


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Callable[..., PromServer]]:
    """`prometheus(scrape_configs, interval_s=1.0, storage=None) -> PromServer`, each server in its
    own folder under tmp_path, all stopped after the test."""
    why = prometheus_missing()
    if why:
        pytest.skip(f"no real Prometheus: {why}")
    started: list[PromServer] = []

    def start(scrape_configs: list[dict[str, Any]], interval_s: float = 1.0, storage: Path | None = None) -> PromServer:
        server = start_prometheus(scrape_configs, tmp_path / f"prometheus{len(started)}", interval_s=interval_s, storage=storage)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in reversed(started):
            server.stop()
