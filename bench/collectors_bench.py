"""Benchmark: how much one refresh of the process table and host pane costs, against psutil.

Starts N sleeping child processes (default 300) so the scan has a realistic node's worth of
rows, times 50 full scans of `ProcessCollector.sample()` and of `psutil.process_iter` asking
for the same fields (median of each), and one `HostCollector.sample()` against psutil's
host calls. Children are killed by pid at the end, also on Ctrl-C.

    python bench/collectors_bench.py [--children 300] [--scans 50]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import time

import psutil

from gpuscope.collectors.host import HostCollector
from gpuscope.collectors.processes import ProcessCollector

PSUTIL_FIELDS = [
    "pid", "ppid", "username", "uids", "status", "cpu_percent", "memory_info",
    "num_threads", "create_time", "cmdline", "name", "cpu_num",
]


def median_ms(fn, scans: int, clock=time.perf_counter) -> float:
    """Median time of `fn()` in ms, after one untimed call (primes CPU % and caches)."""
    fn()
    times = []
    for _ in range(scans):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times) * 1000


def cpu_ms(fn, scans: int) -> float:
    """Mean CPU time of `fn()` in ms: what a refresh costs the node, less noisy than wall time
    on a busy machine (the median of process_time is too coarse on some kernels)."""
    fn()
    start = time.process_time()
    for _ in range(scans):
        fn()
    return (time.process_time() - start) * 1000 / scans


def psutil_scan() -> int:
    return sum(1 for _ in psutil.process_iter(PSUTIL_FIELDS))


def psutil_host() -> None:
    psutil.cpu_percent(percpu=True)
    psutil.getloadavg()
    psutil.virtual_memory()
    psutil.swap_memory()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=300)
    parser.add_argument("--scans", type=int, default=50)
    args = parser.parse_args()

    children: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(args.children):
            children.append(subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL))
        time.sleep(0.2)
        procs = ProcessCollector()
        rows = len(procs.sample())
        ours = median_ms(procs.sample, args.scans)
        theirs = median_ms(psutil_scan, args.scans)
        print(f"processes: {rows} rows, {args.scans} scans (median)")
        print(f"  gpuscope ProcessCollector.sample  {ours:7.2f} ms/scan  {ours * 1000 / rows:6.1f} us/process")
        print(f"  psutil.process_iter (same fields) {theirs:7.2f} ms/scan  {theirs * 1000 / rows:6.1f} us/process")
        print(f"  psutil / gpuscope = {theirs / ours:.1f}x (wall)")
        ours_cpu, theirs_cpu = cpu_ms(procs.sample, args.scans), cpu_ms(psutil_scan, args.scans)
        print(f"  CPU time per scan: gpuscope {ours_cpu:.2f} ms, psutil {theirs_cpu:.2f} ms ({theirs_cpu / ours_cpu:.1f}x)")
        scoped = [c.pid for c in children[:50]]
        print(f"  scoped to 50 pids: {median_ms(lambda: procs.sample(scoped), args.scans):.2f} ms/scan")
        print(f"  descendants(this pid): {median_ms(lambda: procs.descendants(os.getpid()), args.scans):.2f} ms")
        host = HostCollector()
        host_ours = median_ms(host.sample, args.scans)
        host_theirs = median_ms(psutil_host, args.scans)
        print(f"host: gpuscope {host_ours:.3f} ms/sample, psutil {host_theirs:.3f} ms ({host_theirs / host_ours:.1f}x)")
    finally:
        for child in children:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for child in children:
            child.wait()


if __name__ == "__main__":
    main()
