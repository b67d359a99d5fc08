"""Recording benchmark: the cost of a sample on disk and in CPU, against JSON lines, and the time
to open a 24-hour recording.

    python bench/record_bench.py [--gpus 8] [--processes 200] [--samples 600] [--hours 24] [--only open] [--check]

1. takes `--samples` snapshots of a fake node (tests/fake_watch.FakeSource: 8 simulated GPUs,
   200 processes, changing every sample; every GPU with its energy counter, clock maxima and
   GPM activity and the node with its RAPL counters, as tests/energy_readings.py fills them)
   and writes them, side by side in one run,
   (a) as JSON lines (`watch --once --format json`'s dict per line: the baseline),
   (b) with gpuscope's Recorder (Arrow IPC stream, zstd) in the batches it writes at 1 Hz, and
   (c) with the Recorder, the same samples without the energy, activity and RAPL fields (what
   they cost);
   it reports CPU time per sample (process time, the samples' creation not counted) and bytes
   per sample and per GPU;
2. writes a `--hours` recording at 1 Hz (one batch written again with its times shifted: the
   same bytes a real day would cost at this churn) in batches of as many samples as the
   Recorder puts in one at 1 Hz (its batch_seconds comes before its batch_samples: asked of a
   Recorder on a 1 Hz clock; `--day-batch N` for another size) and times opening it as
   `gpuscope replay` does for its first screen (`open_as_replay`: the replay model's open, the
   first sample with its processes, the panes' and the plots' histories);
3. writes the first `--small-batches` samples one batch each (what `record` leaves when every
   batch times out at once) and the same samples in 60-sample batches, and times `gpuscope
   report` over each (the reader and the per-node reduction), with a tenth of them one batch
   each to show the cost grows linearly with the batches;
4. prints the targets: < 0.5 ms CPU per sample, < 1 KB per GPU per sample, open < 2 s, a
   report over 10,000 one-sample batches < 10 s (`--only write|open|report`: that step alone,
   and its targets).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # FakeSource lives with the tests

from energy_readings import with_energy  # noqa: E402
from fake_watch import FakeSource  # noqa: E402

from gpuscope.collectors.recorder import Recorder  # noqa: E402
from gpuscope.parsers.recording import schema as recording_schema  # noqa: E402
from gpuscope.metrics.snapshot_tables import snapshot_dict  # noqa: E402
from gpuscope.tui.model.replay import ReplayCursor, open_replay  # noqa: E402

TARGET_CPU_MS = 0.5
TARGET_BYTES_PER_GPU = 1024
TARGET_OPEN_S = 2.0
TARGET_LINEAR = 12.0
"""10x the one-sample batches may take at most this many times as long: linear, with room for noise."""


def write_json_lines(path: Path, snapshots) -> float:
    start = time.process_time()
    with open(path, "w", encoding="utf-8") as handle:
        for s in snapshots:
            handle.write(json.dumps(snapshot_dict(s), separators=(",", ":")) + "\n")
    return time.process_time() - start


def write_recording(path: Path, snapshots) -> float:
    """The Recorder as `record` drives it at 1 Hz: its clock moves a second per sample, so it
    cuts its batches where a real recording's are cut (batch_seconds before batch_samples)."""
    now = [0.0]
    start = time.process_time()
    with Recorder(path, clock=lambda: now[0]) as rec:
        for i, s in enumerate(snapshots):
            now[0] = float(i)
            rec.add(s)
    return time.process_time() - start


def batch_at_1hz(path: Path, snapshots) -> int:
    """How many samples the Recorder writes in a batch when a sample comes every second."""
    now = [0.0]
    with Recorder(path, clock=lambda: now[0]) as rec:
        for i, s in enumerate(snapshots):
            now[0] = float(i)
            rec.add(s)
            if rec.batches_written:
                return rec.samples_written
    return len(snapshots)


def write_day(path: Path, snapshots, hours: float, per_batch: int) -> int:
    """`hours` at 1 Hz: the first `per_batch` samples' batch again and again, times shifted."""
    batch = recording_schema.to_batch(snapshots[:per_batch])
    t0 = batch.column("timestamp")
    total = int(hours * 3600)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, recording_schema.SCHEMA, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        for start in range(0, total, per_batch):
            shifted = pc.add(t0, pa.scalar(float(start), pa.float64()))
            arrays = [shifted if name == "timestamp" else batch.column(name) for name in batch.schema.names]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=batch.schema))
    return total


def open_as_replay(path: Path) -> tuple[float, float, int]:
    """What `gpuscope replay FILE` does before its first frame (tui/model/replay.py): the
    recording read without its process lists, the history and the events from the columns, the
    first sample with its processes (decoded from its own batch), the panes' history at the
    cursor and the plots' history of the whole recording: (seconds, CPU seconds, samples)."""
    start, cpu = time.perf_counter(), time.process_time()
    replay = open_replay(path)
    cursor = ReplayCursor(replay)
    first = replay.snapshot(cursor.index)
    replay.history_at(cursor.index, first)
    whole = replay.full_history()
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert replay.samples == len(whole) and first.gpus and first.processes
    replay.close()
    return took, cpu, replay.samples


def time_report(path: Path) -> float:
    """Seconds `gpuscope report --recording PATH` takes to read and reduce the recording."""
    from gpuscope.metrics.job.report import report
    from gpuscope.parsers.recording.usage import usage_per_node
    from gpuscope.parsers.recording import read as recording

    start = time.perf_counter()
    report(usage_per_node(recording.Stream(path).batches()))
    return time.perf_counter() - start


def write_batches(path: Path, snapshots, n: int, batch_samples: int) -> Path:
    """`n` samples (the given ones again, times shifted) in batches of `batch_samples`."""
    import dataclasses

    with Recorder(path, batch_samples=batch_samples) as rec:
        for i in range(n):
            snap = snapshots[i % len(snapshots)]
            rec.add(dataclasses.replace(snap, host=dataclasses.replace(snap.host, timestamp=snap.host.timestamp + i)))
    return path


def step_write(args: argparse.Namespace, snapshots: list, bare: list, tmp: Path) -> list[tuple[str, bool]]:
    """Step 1: CPU and bytes per sample, JSON lines against the Recorder, with and without the energy fields."""
    cpu_json, cpu_rec, cpu_bare, size_json, size_rec, size_bare = [], [], [], 0, 0, 0
    for i in range(args.repeat):
        js, rc, rb = tmp / f"s{i}.jsonl", tmp / f"s{i}.gsrec", tmp / f"b{i}.gsrec"
        order = [(write_json_lines, js, snapshots, cpu_json), (write_recording, rc, snapshots, cpu_rec), (write_recording, rb, bare, cpu_bare)]
        for fn, path, samples, out in order if i % 2 == 0 else order[::-1]:
            out.append(fn(path, samples))
        size_json, size_rec, size_bare = js.stat().st_size, rc.stat().st_size, rb.stat().st_size
    per = lambda xs: statistics.median(xs) / args.samples * 1000  # noqa: E731
    bytes_gpu = size_rec / args.samples / max(1, args.gpus)
    print(f"JSON lines (baseline)   {per(cpu_json):.3f} ms CPU per sample   {size_json / args.samples:,.0f} B per sample")
    print(f"gpuscope recording      {per(cpu_rec):.3f} ms CPU per sample   {size_rec / args.samples:,.0f} B per sample "
          f"({bytes_gpu:,.0f} B per GPU; {size_json / size_rec:.0f}x smaller, {per(cpu_json) / per(cpu_rec):.1f}x less CPU than JSON lines)")
    print(f"  without energy, activity and RAPL: {per(cpu_bare):.3f} ms CPU per sample, {size_bare / args.samples / max(1, args.gpus):,.0f} B per GPU "
          f"(the fields: {per(cpu_rec) / per(cpu_bare):.2f}x the CPU, {size_rec / size_bare:.2f}x the bytes; medians of {args.repeat})")
    return [(f"CPU per sample < {TARGET_CPU_MS} ms", per(cpu_rec) < TARGET_CPU_MS), (f"disk per GPU per sample < {TARGET_BYTES_PER_GPU} B", bytes_gpu < TARGET_BYTES_PER_GPU)]


def step_open(args: argparse.Namespace, snapshots: list, _bare: list, tmp: Path) -> list[tuple[str, bool]]:
    """Step 2: a day at 1 Hz, in the Recorder's batches, opened as the replay opens it."""
    day = tmp / "day.gsrec"
    per_batch = args.day_batch or batch_at_1hz(tmp / "probe.gsrec", snapshots)
    n = write_day(day, snapshots, args.hours, per_batch)
    opens = [open_as_replay(day) for _ in range(args.repeat)]
    took, cpu = statistics.median(o[0] for o in opens), statistics.median(o[1] for o in opens)
    print(f"{args.hours:g} h at 1 Hz: {n:,} samples in {per_batch}-sample batches, {day.stat().st_size / 1e6:.0f} MB; opened as replay in {took:.2f} s "
          f"({cpu:.2f} s CPU; medians of {args.repeat})")
    return [(f"{args.hours:g} h opens < {TARGET_OPEN_S:g} s", took < TARGET_OPEN_S)]


def step_report(args: argparse.Namespace, snapshots: list, _bare: list, tmp: Path) -> list[tuple[str, bool]]:
    """Step 3: the report over one-sample batches, against 60-sample ones, and a tenth of them."""
    n_small = args.small_batches
    few = write_batches(tmp / "few.gsrec", snapshots, n_small // 10, 1)
    small = write_batches(tmp / "small.gsrec", snapshots, n_small, 1)
    big = write_batches(tmp / "big.gsrec", snapshots, n_small, 60)
    t_few, t_small, t_big = ([time_report(p) for _ in range(args.repeat)] for p in (few, small, big))
    small_s = statistics.median(t_small)
    print(f"report over {n_small:,} one-sample batches: {small_s:.2f} s; the same samples in 60-sample batches (baseline): "
          f"{statistics.median(t_big):.2f} s ({small_s / statistics.median(t_big):.1f}x); {n_small // 10:,} one-sample batches: "
          f"{statistics.median(t_few):.2f} s (10x the batches took {small_s / statistics.median(t_few):.1f}x the time; medians of {args.repeat})")
    return [(f"report over one-sample batches linear (10x batches < {TARGET_LINEAR:g}x time)", small_s / statistics.median(t_few) < TARGET_LINEAR)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--processes", type=int, default=200)
    parser.add_argument("--samples", type=int, default=600)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--day-batch", type=int, default=0, help="samples per batch of the day's recording (step 2; default: as the Recorder writes at 1 Hz)")
    parser.add_argument("--small-batches", type=int, default=10_000, help="one-sample batches for the report's time (step 3)")
    parser.add_argument("--only", choices=("write", "open", "report"), help="run that step alone (1, 2 or 3)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    source = FakeSource(gpus=args.gpus, processes=args.processes)
    bare = [source.poll() for _ in range(args.samples)]
    snapshots = with_energy(bare)
    gc.collect()
    gc.freeze()  # the inputs are the bench's, not the recorder's: a recording process holds one batch, not 600 samples
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{args.samples} samples of {args.gpus} simulated GPUs (energy, activity and RAPL filled) and {len(snapshots[0].processes)} processes")
    verdicts: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="record-bench-") as tmp:
        for name, step in (("write", step_write), ("open", step_open), ("report", step_report)):
            if args.only in (None, name):
                verdicts += step(args, snapshots, bare, Path(tmp))
    for label, good in verdicts:
        print(f"{label}: {'PASS' if good else 'FAIL'}")
    ok = [good for _label, good in verdicts]
    return 1 if args.check and not all(ok) else 0


if __name__ == "__main__":
    sys.exit(main())
