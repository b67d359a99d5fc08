"""Prometheus import benchmark: a 24-hour, 16-node job at 15 s read back from a real Prometheus
and reported, side by side with the same samples read from a recording.

    python bench/prometheus_bench.py [--nodes 16] [--gpus 8] [--hours 24] [--step 15] [--repeat 3] [--check]

1. builds the job's series in gpuscope's exposition names (collectors/prometheus/exposition.py)
   from real recordings' values, repeated over the day and across the nodes: each GPU's
   utilisation, memory and power from tests/data/recordings/v4.gsrec (its two GPUs, simulated:
   the only GPU values the repository holds), its energy counter the power integrated, and the
   node's and the job's CPU and memory from examples/recording/slurm-job.gsrec (a real Slurm job);
   writes them as OpenMetrics and makes TSDB blocks with `promtool tsdb create-blocks-from
   openmetrics` (kept under --cache, so a second run starts at once);
2. starts Debian's `prometheus` over those blocks on 127.0.0.1 (tests/prometheus_server.py);
3. writes the very table the import makes as a recording (.gsrec, zstd, 3,600-sample batches):
   the baseline, the same samples read from a file;
4. times, alternating, in new processes: `gpuscope report --prometheus URL --job ID --nodes ...
   --start --end --format json` and `gpuscope report --recording day.gsrec --format json`: wall
   clock and CPU time (the child's; Prometheus' own CPU is its process's, printed apart), medians;
5. target: the Prometheus report < 3 s wall clock.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the real Prometheus helper lives with the tests

from prometheus_server import create_blocks, prometheus_missing, start_prometheus  # noqa: E402

from gpuscope.collectors.prometheus.maps import builtin  # noqa: E402
from gpuscope.collectors.prometheus.query import Client  # noqa: E402
from gpuscope.collectors.prometheus.to_recording import Window, import_job  # noqa: E402
from gpuscope.parsers.recording import read as recording  # noqa: E402
from gpuscope.parsers.recording import schema as recording_schema  # noqa: E402

GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
TARGET_S = 3.0
JOB = "4242"
START = 1_790_000_000.0  # a fixed past day: the blocks can be reused


def _cycle(values: np.ndarray, n: int) -> np.ndarray:
    values = values[~np.isnan(values)] if np.isnan(values).any() else values
    return np.resize(values, n) if values.size else np.full(n, np.nan)


def source_values(points: int) -> dict[str, np.ndarray]:
    """The recordings' values, each repeated to `points` samples."""
    gpu_rec = recording.read(REPO / "tests/data/recordings/v4.gsrec")
    job_rec = recording.read(REPO / "examples/recording/slurm-job.gsrec")
    gpus = [gpu_rec.snapshot(i).gpus for i in range(gpu_rec.samples)]
    out = {}
    for g in range(len(gpus[0])):
        out[f"util{g}"] = _cycle(np.array([s[g].util_gpu for s in gpus], float), points) / 100
        out[f"mem{g}"] = _cycle(np.array([s[g].memory_used for s in gpus], float), points)
        out[f"power{g}"] = _cycle(np.array([s[g].power_w for s in gpus], float), points)
        out[f"total{g}"] = np.full(points, float(gpus[0][g].memory_total))
    snaps = [job_rec.snapshot(i) for i in range(job_rec.samples)]
    out["busy"] = _cycle(np.array([sum(p.cpu_percent or 0 for p in s.processes if p.pid in s.scope.pids) / 100 for s in snaps]), points)
    out["node_busy"] = _cycle(np.array([sum(s.host.cpu_percent) / 100 for s in snaps]), points)
    out["node_used"] = _cycle(np.array([s.host.memory.used for s in snaps], float), points)
    out["node_total"] = np.full(points, float(snaps[0].host.memory.total))
    out["cpus"] = np.full(points, float(snaps[0].host.cpu_count))
    out["alloc"] = np.full(points, float(snaps[-1].scope.cpus_allocated or 2))
    out["limit"] = np.full(points, float(snaps[-1].scope.memory_limit or 240 << 20))
    return out


def write_openmetrics(path: Path, nodes: list[str], gpus: int, times: np.ndarray, step: float) -> int:
    """The job's series as OpenMetrics (a family's samples together, each series in time order); returns the samples written."""
    v = source_values(len(times))
    per_source = sum(1 for k in v if k.startswith("util"))
    stamps = [f"{t:.0f}" for t in times]
    written = 0

    def series(f, name: str, labels: str, values: np.ndarray) -> None:
        nonlocal written
        f.writelines(f"{name}{{{labels}}} {x:.6g} {t}\n" for x, t in zip(values.tolist(), stamps))
        written += len(stamps)

    gpu_families = [("gpuscope_gpu_utilization_ratio", "gauge", "util"), ("gpuscope_gpu_memory_used_bytes", "gauge", "mem"),
                    ("gpuscope_gpu_memory_total_bytes", "gauge", "total"), ("gpuscope_gpu_power_watts", "gauge", "power"),
                    ("gpuscope_gpu_energy_joules", "counter", "energy")]
    with open(path, "w") as f:
        for family, kind, key in gpu_families:
            f.write(f"# TYPE {family} {kind}\n")
            for n, node in enumerate(nodes):
                for g in range(gpus):
                    source = (g + n) % per_source
                    values = np.cumsum(v[f"power{source}"] * step) + 3.6e6 * (g + 1) if key == "energy" else np.roll(v[f"{key}{source}"], 37 * n + g)
                    name = family + ("_total" if kind == "counter" else "")
                    series(f, name, f'node="{node}",gpu="{g}",uuid="GPU-{node}-{g}",name="NVIDIA A100-SXM4-80GB"', values)
        node_families = [("gpuscope_node_cpu_busy_seconds", "counter", None), ("gpuscope_node_cpus", "gauge", "cpus"),
                         ("gpuscope_node_memory_total_bytes", "gauge", "node_total"), ("gpuscope_node_memory_used_bytes", "gauge", "node_used")]
        for family, kind, key in node_families:
            f.write(f"# TYPE {family} {kind}\n")
            for n, node in enumerate(nodes):
                values = np.cumsum(v["node_busy"] * step) if key is None else np.roll(v[key], 11 * n)
                series(f, family + ("_total" if kind == "counter" else ""), f'node="{node}"', values)
        job_families = [("gpuscope_job_cpus_busy", "busy"), ("gpuscope_job_cpus_allocated", "alloc"), ("gpuscope_job_memory_requested_bytes", "limit")]
        for family, key in job_families:
            f.write(f"# TYPE {family} gauge\n")
            for n, node in enumerate(nodes):
                series(f, family, f'node="{node}",jobid="{JOB}"', np.roll(v[key], 5 * n))
        f.write("# EOF\n")
    return written


def blocks(cache: Path, nodes: list[str], gpus: int, hours: float, step: float) -> Path:
    """TSDB blocks of the job's series under `cache` (made once per shape)."""
    folder = cache / f"tsdb-{len(nodes)}n-{gpus}g-{hours:g}h-{step:g}s"
    if (folder / "done").exists():
        return folder
    times = START + step * np.arange(int(hours * 3600 / step) + 1)
    text = cache / "job.om"
    began = time.perf_counter()
    samples = write_openmetrics(text, nodes, gpus, times, step)
    print(f"setup: {samples:,} samples, {text.stat().st_size / 1e6:.0f} MB of OpenMetrics in {time.perf_counter() - began:.1f} s", flush=True)
    began = time.perf_counter()
    create_blocks(text, folder, timeout=1800)
    text.unlink()
    (folder / "done").write_text("")
    print(f"setup: promtool tsdb create-blocks-from openmetrics in {time.perf_counter() - began:.1f} s", flush=True)
    return folder


def run(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of a new gpuscope process; its output checked."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([GPUSCOPE, *argv], capture_output=True, text=True, timeout=300, check=False)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or '"gpus"' not in done.stdout:
        raise SystemExit(f"gpuscope {' '.join(argv[:3])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def proc_cpu(pid: int) -> float:
    """CPU seconds a process has used (/proc/PID/stat utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    parser.add_argument("--hours", type=float, default=24)
    parser.add_argument("--step", type=float, default=15, help="the scrape interval the series were written at")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gpuscope-prometheus-bench")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    if (why := prometheus_missing()) is not None:
        print(f"skipped: no real Prometheus ({why})")
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    nodes = [f"gpu{n:03d}" for n in range(args.nodes)]
    storage = blocks(args.cache, nodes, args.gpus, args.hours, args.step)
    end = START + args.hours * 3600
    work = Path(tempfile.mkdtemp(prefix="prom-bench-"))
    server = start_prometheus([], work / "prometheus", interval_s=args.step, storage=storage)
    try:
        imported = import_job(Client(server.url, timeout=60), Window(JOB, tuple(nodes), START, end), [builtin("gpuscope")], step=args.step)
        if imported.table is None:
            raise SystemExit(f"nothing imported: {imported.problem}\n" + "\n".join(imported.said))
        rows = imported.table.num_rows
        baseline = work / "day.gsrec"
        with pa.OSFile(str(baseline), "wb") as sink, pa.ipc.new_stream(sink, recording_schema.SCHEMA,
                                                                       options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
            for batch in imported.table.to_batches(max_chunksize=3600):
                writer.write_batch(batch)
        print(f"job: {len(nodes)} nodes x {args.gpus} GPUs, {args.hours:g} h at {args.step:g} s: {rows:,} samples "
              f"({rows // len(nodes):,} a node); the same as a recording: {baseline.stat().st_size / 1e6:.1f} MB", flush=True)
        window = ["--nodes", ",".join(nodes), "--start", f"{START:.0f}", "--end", f"{end:.0f}", "--step", f"{args.step:g}", "--timeout", "60"]
        commands = {"report --prometheus": ["report", "--prometheus", server.url, "--job", JOB, *window, "--metric-map", "gpuscope", "--format", "json"],
                    "report --recording (baseline)": ["report", "--recording", str(baseline), "--format", "json"]}
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        prom_cpu: list[float] = []
        for r in range(args.repeat):
            for name in (list(commands) if r % 2 == 0 else list(commands)[::-1]):
                cpu_before = proc_cpu(server.pid)
                figures[name].append(run(commands[name]))
                if name.startswith("report --prometheus"):
                    prom_cpu.append(proc_cpu(server.pid) - cpu_before)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    medians = {name: (statistics.median(w for w, _ in f), statistics.median(c for _, c in f)) for name, f in figures.items()}
    for name, (wall, cpu) in medians.items():
        print(f"{name:32s} wall {wall:6.2f} s   cpu {cpu:6.2f} s   ({args.repeat} rounds, medians)")
    print(f"{'prometheus answering':32s}             cpu {statistics.median(prom_cpu):6.2f} s   (its own process, per report)")
    (prom_wall, prom_c), (base_wall, base_c) = medians.values()
    print(f"ratio: {prom_wall / base_wall:.2f}x the recording's wall clock, {prom_c / base_c:.2f}x its CPU")
    met = prom_wall < TARGET_S
    print(f"target: report --prometheus < {TARGET_S:g} s: {'met' if met else 'NOT met'} ({prom_wall:.2f} s; load {os.getloadavg()[0]:.1f})")
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
