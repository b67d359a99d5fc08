"""Provides `collect --serve [ADDR:]PORT` and `collect --textfile DIR`: this node's samples for Prometheus.

The sampling loop (live.py's `_samples`, every --interval) replaces the exporter's latest
reading; a scrape of /metrics (prometheus-client's server, in its own thread: text format, or
OpenMetrics when the scraper asks) formats that reading and never samples. `--textfile` writes
the same text to DIR/gpuscope.prom after each sample, atomically, for node_exporter's textfile
collector. Both stop on SIGTERM, SIGINT (Ctrl+C) or SIGHUP, after --count samples, or when the
--job's processes are gone.
"""

from __future__ import annotations

import argparse
import errno
import re
from typing import Any, Callable

from gpuscope.tui.cli.output import say


def parse_address(text: str) -> tuple[str, int] | str:
    """`PORT`, `:PORT`, `ADDR:PORT` or `[IPv6]:PORT` -> (host, port); 127.0.0.1 unless an
    address is given. A string is what is wrong with `text`."""
    host, _, port = text.strip().rpartition(":")
    if re.fullmatch(r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*", host):
        return f"--serve {text!r}: write an IPv6 address in brackets, e.g. [::1]:9400"
    bracketed = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]", host)
    host = bracketed.group(1) if bracketed else host or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not (bracketed or re.fullmatch(r"[A-Za-z0-9.-]+", host)):
        return f"--serve {text!r}: expected [ADDR:]PORT with a port from 0 to 65535 (0: any free port), e.g. 9400 or 0.0.0.0:9400"
    return host, int(port)


def _url(host: str, port: int) -> str:
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/metrics"


def _write(folder: str, registry: Any) -> bool:
    """The textfile from the latest reading; False (said) when the folder went away or filled up."""
    from prometheus_client import generate_latest

    from gpuscope.collectors.prometheus.exposition import write_textfile

    try:
        write_textfile(folder, generate_latest(registry))
    except OSError as exc:
        say(f"--textfile {folder}: {exc.strerror or exc}")
        return False
    return True


def run(args: argparse.Namespace, samples: Callable[..., Any], stop_type: Callable[[], Any]) -> int:
    """Serve and/or write the exposition until stopped; `samples` and `stop_type` are live.py's
    sampling loop and signal guard (passed in: live.py imports this module)."""
    from gpuscope.collectors.prometheus.exposition import SnapshotCollector, Tracker, registry_for, textfile_problem
    from gpuscope.collectors.prometheus.jobs import NodeJobs

    address = parse_address(args.serve) if args.serve is not None else None
    if isinstance(address, str):
        say(address)
        return 2
    if args.textfile is not None and (problem := textfile_problem(args.textfile)) is not None:
        say(problem)
        return 2
    collector = SnapshotCollector(per_process=args.per_process)
    registry = registry_for(collector)
    server = None
    if address is not None:
        from prometheus_client import start_http_server

        host, port = address
        try:
            server, _thread = start_http_server(port, addr=host, registry=registry)
        except OSError as exc:
            busy = exc.errno == errno.EADDRINUSE
            say(f"--serve {host}:{port}: " + ("the port is taken (another program listens there): pick another one" if busy else
                                              f"cannot listen there ({exc.strerror or exc})"))
            return 1
        say(f"serving {_url(host, server.server_port)} every {args.interval:g} s" + (" (simulated GPUs)" if args.demo is not None else ""))
    if args.textfile is not None:
        say(f"writing {args.textfile.rstrip('/')}/gpuscope.prom every {args.interval:g} s")
    tracker, node_jobs = Tracker(), NodeJobs()
    code = 0
    with stop_type() as stop:
        try:
            for snapshot in samples(args, stop, count=args.count):
                # the whole node watched: every Slurm job on it gets its few series; else the --job's
                jobs = node_jobs.update() if snapshot.scope.kind == "node" else None
                collector.reading = tracker.update(snapshot, jobs)
                if args.textfile is not None and not _write(args.textfile, registry):
                    code = 1
                    break
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()
    say(f"{stop.why}; the exporter stopped")
    return code
