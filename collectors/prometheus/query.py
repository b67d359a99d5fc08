"""Provides the reading side's HTTP client: Prometheus' `query_range` API, bounded in time and bytes.

    client = Client("http://prom:9090", timeout=5.0)
    series = client.query_range('DCGM_FI_DEV_GPU_UTIL{Hostname="n1"}', start, end, step)
    series[0].labels, series[0].times, series[0].values      # numpy arrays, NaN where "NaN"

Every request shares one deadline (`timeout` seconds from the client's creation), so a slow or
silent Prometheus costs at most that long in all, however many families are asked for; the
reply is read in chunks against the deadline and against `max_bytes`, so a server that trickles
or sends gigabytes is cut off, never waited for or held. Anything that goes wrong is a
`PrometheusError` whose message says what and where, in one line: `fatal` when asking again
is pointless (down, refused, 401/403, the deadline passed), so the caller stops and shows what
did load. No shell, no proxy, no redirects followed (a redirect is said).
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuscope.metrics.safe_text import clean

if TYPE_CHECKING:
    import numpy as np

MAX_POINTS = 11_000
"""Prometheus refuses a range query whose series would exceed this many points."""
MAX_BYTES = 256 * 1024**2
"""The most bytes one reply may take (a 24 h, 16-node, 8-GPU family at 15 s is ~40 MB of JSON)."""
TOKEN_ENV = "GPUSCOPE_PROMETHEUS_TOKEN"
"""A bearer token for a Prometheus behind an authenticating proxy (or user:password@ in the URL)."""
_CHUNK = 1 << 20


class PrometheusError(Exception):
    """What went wrong asking Prometheus, as one line. `fatal`: no further query can succeed."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(clean(message))
        self.fatal = fatal


@dataclass
class Series:
    """One series of a reply: its labels, and its samples' times (s) and values (NaN: none)."""

    labels: dict[str, str]
    times: np.ndarray
    values: np.ndarray


def step_for(start: float, end: float, scrape_s: float | None = None) -> float:
    """The step of a range query over [start, end]: at most MAX_POINTS points a series, never
    finer than the scrape interval when it is known (finer would repeat samples), whole seconds."""
    span = max(0.0, end - start)
    step = max(1.0, math.ceil(span / (MAX_POINTS - 1))) if span else 1.0
    if scrape_s is not None and scrape_s > step:
        step = float(math.ceil(scrape_s))
    return step


_LOADING = threading.Lock()
"""Held while the parser's modules load: one package imported by two threads at once can deadlock
(pyarrow and pandas import each other)."""


def load_parser() -> None:
    """Imports what `parse_reply` uses (numpy, pandas, pyarrow: most of a second), once, on the
    calling thread while any other waits: a caller loads them while Prometheus answers what it
    asked, instead of before asking. The client itself needs none of them."""
    with _LOADING:
        import numpy  # noqa: F401
        import pandas  # noqa: F401 - pyarrow loads it (and its pandas_compat) at its first conversion to numpy
        import pyarrow.compute  # noqa: F401 - fill_null's
        import pyarrow.csv  # noqa: F401
        import pyarrow.pandas_compat  # noqa: F401


_KEY = b'"values"'
"""A series' samples list's key: inside a JSON string every `"` is escaped, so only a key (or a
string that is the whole word) reads so."""
_LIST = re.compile(rb"\s*:\s*\[")
_TO_ROWS = bytes.maketrans(b"]", b"\n")
_NOT_IN_ROWS = b'[" \t\r\n'
"""[[t,"v"],[t,"v"]] -> t,v LF ,t,v LF LF once `]` is a line end and `[`, `"` and spaces are gone:
a row per sample after a leading comma, read in one pass by Arrow's CSV reader instead of a
Python object per number (a day of 16 nodes x 8 GPUs at 15 s is 737,000 points a family)."""


def parse_reply(body: bytes) -> list[Series]:
    """A `query_range` reply's series. PrometheusError (not fatal) for anything that is not a
    successful reply of a matrix: an error reply says Prometheus' own words.

    Each series' samples list is cut out of the body and read by Arrow's CSV reader; the rest
    (status, labels: a few KB) is parsed as JSON with each list replaced by its number, so that
    every series is known to have its own list. A samples list holds no `}` and, as Prometheus
    (and the servers speaking its API) write a series, comes after its labels: it ends at the
    last `]` before the series' closing brace."""
    load_parser()
    import numpy as np

    spans: list[tuple[int, int]] = []
    at = 0
    while (key := body.find(_KEY, at)) >= 0:
        at = key + len(_KEY)
        if (colon := _LIST.match(body, at)) is None:  # a label's value "values"
            continue
        start = colon.end() - 1
        brace = body.find(b"}", start)
        end = body.rfind(b"]", start, brace) + 1
        if brace < 0 or not end or body[end:brace].strip():
            raise PrometheusError("a series' samples list in the reply does not end its series (cut off?)")
        spans.append((start, end))
        at = end
    skeleton, at = [], 0
    for k, (a, b) in enumerate(spans):
        skeleton += [body[at:a], b"%d" % k]
        at = b
    skeleton.append(body[at:])
    reply = _json_reply(b"".join(skeleton))
    out, no_points = [], np.empty(0)
    for number, item in enumerate(reply):
        if not isinstance(item, dict) or not isinstance(item.get("metric", {}), dict):
            raise PrometheusError("a series in the reply is not one (no labels)")
        if type(item.get("values")) is not int or item["values"] != number:  # its own list's number (True == 1: not a bool)
            raise PrometheusError("a series in the reply has no samples list of [time, value] pairs")
        labels = {clean(k): clean(v) for k, v in item.get("metric", {}).items() if isinstance(k, str) and isinstance(v, str)}
        out.append(Series(labels, no_points, no_points))
    if len(out) != len(spans):
        raise PrometheusError("a series in the reply has no samples list of [time, value] pairs")  # a list outside the series
    _read_points(body, spans, out)
    return out


def _json_reply(text: bytes) -> list[Any]:
    """The `result` list of a successful matrix reply (its samples lists cut out)."""
    try:
        reply = json.loads(text)
    except (ValueError, RecursionError) as exc:
        head = clean(text[:80].decode("utf-8", "replace"))
        raise PrometheusError(f"the reply is not JSON ({type(exc).__name__}; it starts {head!r}): not a Prometheus API?") from None
    if not isinstance(reply, dict):
        raise PrometheusError(f"the reply is JSON {type(reply).__name__}, not a Prometheus API reply")
    if reply.get("status") != "success":
        kind, error = reply.get("errorType"), reply.get("error")
        if isinstance(error, str):
            raise PrometheusError(f"Prometheus said: {error[:300]}" + (f" ({kind})" if isinstance(kind, str) else ""))
        raise PrometheusError("the reply is not a Prometheus API reply (no status 'success' nor an error)")
    data = reply.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PrometheusError("the reply holds no series (its data is not a matrix)")
    return data["result"]


def _read_points(body: bytes, spans: list[tuple[int, int]], series: list[Series]) -> None:
    """Each series' times and values from its samples list `body[a:b]`, one CSV read for all."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    counts = [body.count(b"]", a, b) - 1 for a, b in spans]  # a `]` ends each sample, and one the list
    if not sum(counts):
        return
    view = memoryview(body)
    text = b",".join([b"", *(view[a:b] for (a, b), n in zip(spans, counts) if n)]).translate(_TO_ROWS, _NOT_IN_ROWS)  # each after a comma
    try:  # one thread: the replies are parsed several at once already
        table = csv.read_csv(pa.py_buffer(text), read_options=csv.ReadOptions(column_names=["_", "t", "v"], use_threads=False),
                             parse_options=csv.ParseOptions(newlines_in_values=False),
                             convert_options=csv.ConvertOptions(column_types={"t": pa.float64(), "v": pa.float64()}, include_columns=["t", "v"]))
    except (pa.ArrowInvalid, ValueError):
        raise PrometheusError("a sample in the reply is not [time, value] (a number and a number's text)") from None
    times = table.column("t").to_numpy()
    values = table.column("v").fill_null(math.nan).to_numpy()  # "NaN" (and an empty text) is Arrow's null
    if len(times) != sum(counts):  # a `]` that ended no sample
        raise PrometheusError("a sample in the reply is not [time, value] (a number and a number's text)")
    if not np.isfinite(times).all():
        raise PrometheusError("a sample in the reply is not [time, value] with a finite time")
    at = 0
    for s, n in zip(series, counts):
        s.times, s.values = times[at:at + n], values[at:at + n]
        at += n


@dataclass
class Client:
    """Prometheus at `url` (http or https; user:password@ for basic auth). Every request shares
    the deadline `timeout` seconds after the client is made; requests may be made from several
    threads at once."""

    url: str
    timeout: float = 5.0
    max_bytes: int = MAX_BYTES
    requests: int = 0
    bytes_read: int = 0
    _deadline: float = field(init=False)
    _parts: urllib.parse.SplitResult = field(init=False)
    _counting: threading.Lock = field(init=False, default_factory=threading.Lock)
    """The counts above are kept right when several threads ask at once."""

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.timeout
        self._parts = urllib.parse.urlsplit(self.url if "://" in self.url else "http://" + self.url)
        if self._parts.scheme not in ("http", "https") or not self._parts.hostname:
            raise PrometheusError(f"--prometheus {self.url!r}: expected http://HOST:PORT or https://HOST[:PORT][/path]", fatal=True)

    @property
    def where(self) -> str:
        """The URL without its credentials, for messages."""
        port = f":{self._parts.port}" if self._parts.port else ""
        return f"{self._parts.scheme}://{self._parts.hostname}{port}{self._parts.path.rstrip('/')}"

    def left(self) -> float:
        return self._deadline - time.monotonic()

    def query_range(self, query: str, start: float, end: float, step: float) -> list[Series]:
        return parse_reply(self.get("/api/v1/query_range", {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}))

    def scrape_interval(self) -> float | None:
        """The shortest scrape interval of the active targets (s), None when not said (a proxy may
        forbid this API while allowing queries); a Prometheus down or slow raises."""
        try:
            reply = json.loads(self.get("/api/v1/targets", {"state": "active"}))
            targets = reply["data"]["activeTargets"]
            seconds = [_duration(t.get("scrapeInterval")) for t in targets if isinstance(t, dict)]
        except PrometheusError as exc:
            if exc.fatal and "401" not in str(exc) and "403" not in str(exc):  # down or slow: so will the queries be
                raise
            return None
        except (ValueError, KeyError, TypeError, RecursionError):
            return None
        known = [s for s in seconds if s]
        return min(known) if known else None

    def get(self, path: str, params: dict[str, str]) -> bytes:
        """The body of a GET of `path` (below the URL's own path), within the deadline and MAX_BYTES."""
        left = self.left()
        if left <= 0:
            raise PrometheusError(f"{self.where}: no answer within --timeout {self.timeout:g} s", fatal=True)
        parts = self._parts
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        extra = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
        conn = kind(parts.hostname, parts.port, timeout=left, **extra)
        headers = {"Accept": "application/json", "User-Agent": "gpuscope"}
        if parts.username is not None:
            pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif os.environ.get(TOKEN_ENV):
            headers["Authorization"] = "Bearer " + os.environ[TOKEN_ENV].strip()
        target = parts.path.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
        with self._counting:
            self.requests += 1
        try:
            conn.request("GET", target, headers=headers)
            response = conn.getresponse()
            body = self._read(conn, response)
        except PrometheusError:
            raise
        except (socket.timeout, TimeoutError):
            raise PrometheusError(f"{self.where}: no answer within --timeout {self.timeout:g} s (Prometheus slow or overloaded?)", fatal=True) from None
        except ConnectionRefusedError:
            raise PrometheusError(f"{self.where}: connection refused (Prometheus not running there?)", fatal=True) from None
        except socket.gaierror as exc:
            raise PrometheusError(f"{self.where}: host not found ({exc.strerror or exc})", fatal=True) from None
        except ssl.SSLError as exc:
            raise PrometheusError(f"{self.where}: TLS failed ({exc.reason or exc})", fatal=True) from None
        except (OSError, http.client.HTTPException) as exc:
            raise PrometheusError(f"{self.where}: {type(exc).__name__} {exc}".rstrip(), fatal=True) from None
        finally:
            conn.close()
        return self._checked(response, body)

    def _read(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> bytes:
        """The body in chunks, the socket's timeout set to what is left each time."""
        length = response.getheader("Content-Length")
        if length and length.isdigit() and int(length) > self.max_bytes:
            raise PrometheusError(f"{self.where}: a reply of {int(length):,} bytes, over the {self.max_bytes:,} read: ask for a shorter span or fewer nodes")
        parts, size = [], 0
        while True:
            left = self.left()
            if left <= 0:
                raise socket.timeout()
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            with self._counting:
                self.bytes_read += len(chunk)
            if size > self.max_bytes:
                raise PrometheusError(f"{self.where}: the reply went past {self.max_bytes:,} bytes: cut off (ask for a shorter span or fewer nodes)")
            parts.append(chunk)
        return b"".join(parts)

    def _checked(self, response: http.client.HTTPResponse, body: bytes) -> bytes:
        status = response.status
        if status in (401, 403):
            how = "wrong credentials" if self._parts.username or os.environ.get(TOKEN_ENV) else f"give user:password@ in the URL or a token in ${TOKEN_ENV}"
            raise PrometheusError(f"{self.where}: {status} {response.reason or ''} ({how})".replace("  ", " "), fatal=True)
        if 300 <= status < 400:
            raise PrometheusError(f"{self.where}: redirected ({status}) to {response.getheader('Location') or '?'}: give that URL", fatal=True)
        if status == 404:
            raise PrometheusError(f"{self.where}: 404 Not Found for the API (not a Prometheus, or its URL needs a path prefix?)", fatal=True)
        if status in (400, 422) or status == 503 and body.startswith(b"{"):
            return body  # Prometheus' own error reply (a bad query, a timeout on its side): parse_reply says its words
        if status >= 400:
            raise PrometheusError(f"{self.where}: HTTP {status} {response.reason or ''}".rstrip(), fatal=status >= 500)
        return body


def _duration(text: Any) -> float | None:
    """Prometheus' duration text ('15s', '1m', '1m30s', '500ms') in seconds."""
    if not isinstance(text, str) or not text:
        return None
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    parts = re.findall(r"(\d+)(ms|[smhdwy])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * units[u] for n, u in parts)
