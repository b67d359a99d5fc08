"""Real parallel work at N workers, printing seed 004's lines (mnist_timed.py's formats).

    python tests/scaling_work.py --workers 2 [--epochs 2] [--size 160] [--tasks 24]

A fixed problem: each epoch multiplies `tasks` pairs of size x size matrices and sums the
results, split over `workers` processes (multiprocessing, one BLAS thread each, so the count
is the only parallelism). The work per epoch is the same at every worker count (strong
scaling). Prints `Train Epoch: ... Loss:` and `Test set:` lines per epoch, then
`Total Training Time: X s` (the time.perf_counter() wall time of the epochs, as mnist_timed.py
measures it), `Number of epochs:`, `Total epochs/s:`, and the SLURM_* variables of a job.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: workers are the only parallelism

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ECHOED = ("SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_NTASKS", "SLURM_CPUS_PER_TASK", "SLURM_JOB_NUM_NODES")


def _chunk(args: tuple[int, int, int, int]) -> float:
    """Multiply `count` matrix pairs (seeded by their index: the same work whoever does it)."""
    first, count, size, epoch = args
    total = 0.0
    for task in range(first, first + count):
        rng = np.random.default_rng(task * 1000 + epoch)
        a = rng.standard_normal((size, size))
        b = rng.standard_normal((size, size))
        for _ in range(4):
            a = np.tanh(a @ b / np.sqrt(size))
        total += float(np.abs(a).mean())
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--size", type=int, default=160)
    parser.add_argument("--tasks", type=int, default=24)
    args = parser.parse_args()
    for name in ECHOED:
        if name in os.environ:
            print(f"{name}={os.environ[name]}", flush=True)
    per = [args.tasks // args.workers + (1 if i < args.tasks % args.workers else 0) for i in range(args.workers)]
    starts = [sum(per[:i]) for i in range(args.workers)]
    total_time = 0.0
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        pool.map(_chunk, [(0, 1, 8, 0)] * args.workers)  # start the workers before timing
        for epoch in range(1, args.epochs + 1):
            epoch_start = time.perf_counter()
            parts = pool.map(_chunk, [(s, n, args.size, epoch) for s, n in zip(starts, per)])
            total_time += time.perf_counter() - epoch_start
            loss = sum(parts) / args.tasks
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(epoch, args.tasks, args.tasks, 100.0, loss), flush=True)
            correct = args.tasks - epoch % 2
            print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(loss, correct, args.tasks, 100.0 * correct / args.tasks), flush=True)
    print("\nTotal Training Time: {} s\nNumber of epochs: {}\nTotal epochs/s: {}\n".format(total_time, args.epochs, args.epochs / total_time), flush=True)


if __name__ == "__main__":
    main()
