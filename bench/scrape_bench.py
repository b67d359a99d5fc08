"""Scrape benchmark: the CPU one Prometheus scrape of `gpuscope collect --serve` costs.

    python bench/scrape_bench.py [--gpus 8] [--processes 200] [--scrapes 200] [--repeat 5] [--check]

A fake node (tests/fake_watch.FakeSource: 8 simulated GPUs with energy counters and GPM
activity, 200 processes, alice's Slurm job) is sampled twice, as the sampling loop would, into
the exporter's latest reading. Then, side by side in each round (alternating order), it times
`--scrapes` of each, in process CPU time:
  (a) prometheus-client's generate_latest of an empty registry (the library's floor),
  (b) json.dumps of the snapshot (`watch --once --format json`'s dict: what `collect --stream`
      pays per sample),
  (c) a scrape of gpuscope's registry (the text format a Prometheus server asks for),
  (d) the same with --per-process (a few series per process: 200 more label sets),
  (e) the same as (c) over HTTP from prometheus-client's server in this process (a GET on
      127.0.0.1: the server's thread and the client's CPU both count, so it is an upper bound).
Medians of `--repeat` rounds, per scrape. Target: a scrape < 20 ms CPU with 8 GPUs and 200
processes, (d) included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # FakeSource lives with the tests

from energy_readings import with_energy  # noqa: E402
from fake_watch import FakeSource  # noqa: E402
from prometheus_client import CollectorRegistry, generate_latest, start_http_server  # noqa: E402

from gpuscope.collectors.prometheus.exposition import SnapshotCollector, Tracker, registry_for  # noqa: E402
from gpuscope.metrics.snapshot_tables import snapshot_dict  # noqa: E402

TARGET_MS = 20.0


def cpu_ms(fn: Callable[[], object], n: int) -> float:
    """CPU milliseconds per call of `fn`, over `n` calls."""
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1000.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--processes", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=200, help="scrapes timed per round and kind")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    source = FakeSource(gpus=args.gpus, processes=args.processes)
    snapshots = with_energy([source.poll(), source.poll()])
    tracker = Tracker()
    plain, per_process = SnapshotCollector(), SnapshotCollector(per_process=True)
    for snapshot in snapshots:
        plain.reading = per_process.reading = tracker.update(snapshot)
    registry, registry_pp = registry_for(plain), registry_for(per_process)
    body, body_pp = generate_latest(registry), generate_latest(registry_pp)
    server, _thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    url = f"http://127.0.0.1:{server.server_port}/metrics"

    def over_http() -> bytes:
        with urllib.request.urlopen(url, timeout=10) as reply:  # noqa: S310 (our own server on 127.0.0.1)
            return reply.read()

    empty = CollectorRegistry(auto_describe=False)
    kinds: dict[str, tuple[Callable[[], object], list[float]]] = {
        "empty registry (prometheus-client's floor)": (lambda: generate_latest(empty), []),
        "json.dumps of the snapshot (baseline)": (lambda: json.dumps(snapshot_dict(snapshots[-1]), separators=(",", ":")), []),
        "gpuscope scrape": (lambda: generate_latest(registry), []),
        "gpuscope scrape, --per-process": (lambda: generate_latest(registry_pp), []),
        "gpuscope scrape over HTTP": (over_http, []),
    }
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{args.gpus} simulated GPUs, {len(snapshots[-1].processes)} processes; one scrape {len(body):,} B "
          f"({len(body_pp):,} B with --per-process); {args.scrapes} scrapes per round, medians of {args.repeat} rounds")
    try:
        for i in range(args.repeat):
            order = list(kinds.values())
            for fn, out in order if i % 2 == 0 else order[::-1]:
                out.append(cpu_ms(fn, args.scrapes))
    finally:
        server.shutdown()
        server.server_close()
    medians = {name: statistics.median(out) for name, (_, out) in kinds.items()}
    baseline = medians["json.dumps of the snapshot (baseline)"]
    for name, ms in medians.items():
        print(f"{name:45s} {ms:8.3f} ms CPU per scrape  ({ms / baseline:.2f}x the JSON baseline)")
    worst = max(medians["gpuscope scrape"], medians["gpuscope scrape, --per-process"])
    ok = worst < TARGET_MS
    print(f"a scrape < {TARGET_MS:g} ms CPU with {args.gpus} GPUs and {args.processes} processes (--per-process included): {'PASS' if ok else 'FAIL'}")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
