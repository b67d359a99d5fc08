"""Builds a large tree of run logs for the scaling benchmark, from real logs and the seeds' formats.

    python bench/make_scaling_tree.py DEST [--files 10000] [--seed 0] [--mlperf-share 0.1]

Three kinds of log, in fixed shares of `--files` (default: 10 % MLPerf, the rest split evenly):

* MLPerf: the 20 real MLPerf Training v3.1 logs in `../shared/data/scaling/mlperf-training-v3.1`
  (ResNet-50 / MXNet and SSD / PyTorch, 1 and 8 nodes of 8 H100), copied whole, byte for byte,
  except the `time_ms` stamps (shifted to another date and stretched so the time to train
  follows the real 1 -> 8 node speedup, interpolated to 1, 2, 4, 8, 16, 32 nodes, +-2 % noise)
  and the node count of `submission_platform`. Layout as in the source:
  `mlperf/roundNNN/NVIDIA/results/SYSTEM/BENCHMARK/result_N.txt` with
  `systems/SYSTEM.json` (the real system description, `number_of_nodes` changed). A log of
  N <= 2 nodes is made from a 1-node log, one of 4 or more nodes from an 8-node log, so the
  global batch size differs between them as in real submissions; the aborted ResNet run stays
  aborted in its copies. These files are 36-86 kB each: 10 % of 10,000 is about 65 MB.
* seed 002: `seed002/studyNNN/outputs/slurm-JOBID.out` as seed 002's job scripts and
  `src/train.py` print them (`../shared/research/formats-scaling.md` §4.1): the job-script echo
  lines, one ENVIRONMENT INFORMATION block and one TRAINING COMPLETE block per task (under srun
  every task prints them), `Total duration`; 1 GPU, 4 GPUs on 1 node, 2 nodes of 4 GPUs (its three
  job scripts), 3 runs each per study.
* seed 004: the lines `tests/scaling_work.py` prints (mnist_timed.py's formats, §4.2), at 1, 2, 4,
  8, 16 threads, 3 runs each per study; even studies as Slurm jobs (`work-cN-JOBID.out` with the
  SLURM_* lines the program echoes), odd ones as seed 004's own layout (`cN/log.mnist-JOBID`
  with its `submit_mnist.sh`, `#SBATCH -c N`, beside it).

`make_tree` returns what every log holds (`expected`: resources and time), so a test can check
that the reader reads each file as written. Everything random comes from one
`random.Random(seed)`: a seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# Real data lives beside the repository (`../shared`), never at an absolute path.
MLPERF_ROOT = REPO_ROOT.parent / "shared" / "data" / "scaling" / "mlperf-training-v3.1" / "NVIDIA"
MLPERF_NODES = (1, 2, 4, 8, 16, 32)
MLPERF_RUNS = 5
MLPERF_BENCHMARKS = {"resnet": "mxnet", "ssd": "pytorch"}  # benchmark -> framework of its real system
SEED002_CONFIGS = ((1, 1), (1, 4), (2, 4))  # (nodes, GPUs per node): the three job scripts of seed 002
SEED004_THREADS = (1, 2, 4, 8, 16)
REPEATS = 3
TIME_MS = re.compile(r'"time_ms": (\d+)')
PLATFORM = re.compile(r'("key": "submission_platform", "value": ")(\d+)x')


@dataclass
class Tree:
    """What `make_tree` wrote: counts, bytes, and per log (path relative to the tree) what it holds."""

    files: int = 0
    bytes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    expected: dict[str, dict] = field(default_factory=dict)
    """relative path -> {format, kind, resources, time_s, status}."""


def _write(tree: Tree, root: Path, rel: str, text: str, log: dict | None) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(data)
    tree.bytes += len(data)
    if log is not None:
        tree.files += 1
        tree.kinds[log["format"]] = tree.kinds.get(log["format"], 0) + 1
        tree.expected[rel] = log


# ---------------------------------------------------------------- MLPerf
def _mlperf_templates(root: Path = MLPERF_ROOT) -> dict[tuple[str, int], list[tuple[str, int, int]]]:
    """(benchmark, template nodes) -> [(text, start ms, stop ms)] of the real logs."""
    found: dict[tuple[str, int], list[tuple[str, int, int]]] = {}
    for bench, framework in MLPERF_BENCHMARKS.items():
        for nodes, system in ((1, f"eos_ngc23.09_{framework}"), (8, f"eos_n8_ngc23.09_{framework}")):
            folder = root / "results" / system / bench
            logs = sorted(folder.glob("result_*.txt"))
            if not logs:
                raise FileNotFoundError(f"no real MLPerf logs in {folder}")
            for log in logs:
                text = log.read_text()
                start = int(re.search(r'"time_ms": (\d+), "event_type": "INTERVAL_START", "key": "run_start"', text).group(1))
                stop = int(re.search(r'"time_ms": (\d+), "event_type": "INTERVAL_END", "key": "run_stop"', text).group(1))
                found.setdefault((bench, nodes), []).append((text, start, stop))
    return found


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _restamp(text: str, first: int, new_first: int, factor: float) -> str:
    """Every `time_ms` moved to start at new_first, its distance from the first stretched by factor."""
    return TIME_MS.sub(lambda m: f'"time_ms": {new_first + round((int(m.group(1)) - first) * factor)}', text)


def _mlperf_slots(n: int) -> list[tuple[int, str, int, int]]:
    """(round, benchmark, nodes, run index) for n logs, whole rounds first."""
    per_round = [(b, nodes, i) for b in MLPERF_BENCHMARKS for nodes in MLPERF_NODES for i in range(MLPERF_RUNS)]
    return [(k // len(per_round), *per_round[k % len(per_round)]) for k in range(n)]


def _mlperf(tree: Tree, root: Path, n: int, rng: random.Random) -> None:
    templates = _mlperf_templates()
    systems = {name: (MLPERF_ROOT / "systems" / f"{name}.json").read_text() for name in
               [f"eos_ngc23.09_{fw}" for fw in MLPERF_BENCHMARKS.values()] + [f"eos_n8_ngc23.09_{fw}" for fw in MLPERF_BENCHMARKS.values()]}
    scaling_json = {b: (MLPERF_ROOT / "results" / f"eos_ngc23.09_{fw}" / b / "scaling.json") for b, fw in MLPERF_BENCHMARKS.items()}
    # the real speedup from 1 to 8 nodes (median of the successful runs), as a power law in nodes
    exponent = {}
    for bench in MLPERF_BENCHMARKS:
        t1 = _median([(stop - start) / 1000 for text, start, stop in templates[(bench, 1)] if '"status": "success"' in text])
        t8 = _median([(stop - start) / 1000 for text, start, stop in templates[(bench, 8)] if '"status": "success"' in text])
        exponent[bench] = (t1, math.log(t1 / t8) / math.log(8))
    written_systems: set[str] = set()
    for round_no, bench, nodes, index in _mlperf_slots(n):
        framework = MLPERF_BENCHMARKS[bench]
        system = f"eos_ngc23.09_{framework}" if nodes == 1 else f"eos_n{nodes}_ngc23.09_{framework}"
        base = f"mlperf/round{round_no:03d}/NVIDIA"
        if f"{base}/{system}" not in written_systems:
            written_systems.add(f"{base}/{system}")
            template_system = f"eos_ngc23.09_{framework}" if nodes <= 2 else f"eos_n8_ngc23.09_{framework}"
            data = json.loads(systems[template_system])
            data["number_of_nodes"] = str(nodes)
            data["system_name"] = "Eos" if nodes == 1 else f"Eos_n{nodes}"
            _write(tree, root, f"{base}/systems/{system}.json", json.dumps(data, indent=4) + "\n", None)
            if scaling_json[bench].is_file():
                _write(tree, root, f"{base}/results/{system}/{bench}/scaling.json", scaling_json[bench].read_text(), None)
        text, start, stop = templates[(bench, 1 if nodes <= 2 else 8)][index % MLPERF_RUNS]
        t1, alpha = exponent[bench]
        factor = t1 * nodes ** -alpha / ((stop - start) / 1000) * rng.gauss(1.0, 0.02)
        first = int(TIME_MS.search(text).group(1))
        new_first = first + rng.randrange(1, 400) * 86_400_000 + rng.randrange(86_400_000)
        body = PLATFORM.sub(rf"\g<1>{nodes}x", _restamp(text, first, new_first, factor))
        new_start = new_first + round((start - first) * factor)
        new_stop = new_first + round((stop - first) * factor)
        status = "aborted" if '"status": "aborted"' in text else "ok"
        _write(tree, root, f"{base}/results/{system}/{bench}/result_{index}.txt", body,
               {"format": "mlperf", "kind": "gpus", "resources": nodes * 8, "nodes": nodes, "time_s": (new_stop - new_start) / 1000.0, "status": status})


# ---------------------------------------------------------------- seed 002
def _seed002_log(job: int, nodes: int, per_node: int, seconds: list[float], loss: float, startup: float, rng: random.Random) -> str:
    """One slurm-JOBID.out of seed 002: job-script echo, then train.py's blocks once per task."""
    tasks = nodes * per_node
    name = "spiral_mlp_1gpu" if tasks == 1 else (f"spiral_mlp_{per_node}gpus_1node" if nodes == 1 else f"spiral_mlp_{nodes}nodes_{tasks}gpus")
    first = 1000 + rng.randrange(900)
    nodelist = f"ravg{first}" if nodes == 1 else f"ravg[{first}-{first + nodes - 1}]"
    hour = rng.randrange(8, 20)
    out = [f"Job ID: {job}", f"Node(s): {nodelist}", f"Number of nodes: {nodes}"]
    out.append(f"Number of tasks: {tasks}" if nodes == 1 else f"Total GPUs: {tasks}")
    if nodes == 1 and tasks > 1:
        out.append(f"Total CPUs: {18 * tasks}")
    out.append(f"Training started at: Mon Jan 12 {hour:02d}:00:01 CET 2026")
    if nodes > 1:
        out += [f"{g}, NVIDIA A100-SXM4-40GB, 40960 MiB" for _ in range(nodes) for g in range(per_node)]
    env = ["=" * 70, "ENVIRONMENT INFORMATION", "=" * 70, "PyTorch version: 2.5.1", f"Number of GPUs: {per_node}"]
    env += [f"  GPU {g}: NVIDIA A100-SXM4-40GB" for g in range(per_node)]
    env += [f"  SLURM_JOB_ID: {job}", f"  SLURM_JOB_NAME: {name}", f"  SLURM_NODELIST: {nodelist}", f"  SLURM_NNODES: {nodes}",
            f"  SLURM_NTASKS: {tasks}", f"  SLURM_NTASKS_PER_NODE: {per_node if tasks > 1 else 'Not set'}", "  SLURM_CPUS_PER_TASK: 18",
            "  WORLD_SIZE: 1", "Max epochs: 50", "Batch size (per GPU): 32", "", f"Effective batch size (batch_size × num_gpus): {32 * tasks}"]
    for _ in range(tasks):
        out += env
    best_epoch = rng.randrange(35, 50)
    for total in seconds:
        out += ["=" * 70, "TRAINING COMPLETE", "=" * 70,
                f"Total training time: {total:.2f} seconds ({total / 60:.2f} minutes)",
                f"Time per epoch: {total / 50:.2f} seconds",
                f"Best checkpoint: outputs/checkpoints/spiral_mlp-epoch={best_epoch}-val_loss={loss:.4f}.ckpt",
                f"Best validation loss: {loss:.4f}"]
    duration = round(max(seconds) + startup)
    out += [f"Training completed at: Mon Jan 12 {hour:02d}:{duration // 60 % 60:02d}:{duration % 60:02d} CET 2026",
            f"Total duration: {duration} seconds ({duration / 60:.2f} minutes)"]
    return "\n".join(out) + "\n"


def _seed002(tree: Tree, root: Path, n: int, rng: random.Random, jobs: list[int]) -> None:
    per_study = len(SEED002_CONFIGS) * REPEATS
    study_time = serial = 0.0
    for k in range(n):
        study, slot = divmod(k, per_study)
        if slot == 0:
            study_time, serial = rng.uniform(250, 900), rng.uniform(0.02, 0.15)
        nodes, per_node = SEED002_CONFIGS[slot // REPEATS]
        gpus = nodes * per_node
        ideal = study_time * (serial + (1 - serial) / gpus) * (1 + 0.03 * (nodes - 1))
        seconds = [ideal * rng.gauss(1.0, 0.02) for _ in range(gpus)]  # one per task, slightly different
        jobs[0] += rng.randrange(1, 40)
        text = _seed002_log(jobs[0], nodes, per_node, seconds, rng.uniform(0.110, 0.125), rng.uniform(10, 20), rng)
        _write(tree, root, f"seed002/study{study:03d}/outputs/slurm-{jobs[0]}.out", text,
               {"format": "seed002", "kind": "gpus", "resources": gpus, "nodes": nodes, "time_s": max(float(f"{s:.2f}") for s in seconds), "status": "ok"})


# ---------------------------------------------------------------- seed 004 (tests/scaling_work.py's lines)
def _seed004_log(job: int | None, threads: int, epochs: int, total: float, tasks: int, rng: random.Random) -> str:
    """What tests/scaling_work.py prints: SLURM_* echoes under Slurm, then its per-epoch and total lines."""
    out = []
    if job is not None:
        out += [f"SLURM_JOB_ID={job}", "SLURM_JOB_NAME=scaling_work", f"SLURM_CPUS_PER_TASK={threads}", "SLURM_JOB_NUM_NODES=1"]
    text = "".join(line + "\n" for line in out)
    loss = rng.uniform(0.28, 0.31)
    for epoch in range(1, epochs + 1):
        loss += rng.uniform(-0.002, 0.002)
        text += "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}\n".format(epoch, tasks, tasks, 100.0, loss)
        correct = tasks - epoch % 2
        text += "\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n\n".format(loss, correct, tasks, 100.0 * correct / tasks)
    text += "\nTotal Training Time: {} s\nNumber of epochs: {}\nTotal epochs/s: {}\n\n".format(total, epochs, epochs / total)
    return text


SUBMIT_MNIST = "#!/bin/bash\n#SBATCH -p mit_normal\n#SBATCH -c {threads}\n#SBATCH -o log.mnist-%j\n\nexport OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\nmodule load miniforge\npython -u mnist_timed.py\n"
WORK_SCRIPT = "#!/bin/bash\n#SBATCH -J scaling_work\n#SBATCH -c {threads}\n#SBATCH --mem=400M\n#SBATCH -o {folder}/work-c{threads}-%j.out\nexec python tests/scaling_work.py --workers $SLURM_CPUS_PER_TASK\n"


def _seed004(tree: Tree, root: Path, n: int, rng: random.Random, jobs: list[int]) -> None:
    per_study = len(SEED004_THREADS) * REPEATS
    study_time = serial = 0.0
    epochs = 2
    for k in range(n):
        study, slot = divmod(k, per_study)
        if slot == 0:
            study_time, serial, epochs = rng.uniform(0.5, 60.0), rng.uniform(0.01, 0.2), rng.randrange(2, 6)
        threads = SEED004_THREADS[slot // REPEATS]
        total = study_time * epochs * (serial + (1 - serial) / threads) * rng.gauss(1.0, 0.03)
        jobs[0] += rng.randrange(1, 40)
        folder = f"seed004/study{study:03d}"
        log = {"format": "seed004", "kind": "threads", "resources": threads, "time_s": total, "status": "ok"}
        if study % 2 == 0:  # run as Slurm jobs, as tests/test_runlogs_real.py does
            if slot % REPEATS == 0:
                _write(tree, root, f"{folder}/work-c{threads}.sh", WORK_SCRIPT.format(threads=threads, folder=folder), None)
            _write(tree, root, f"{folder}/work-c{threads}-{jobs[0]}.out", _seed004_log(jobs[0], threads, epochs, total, 24, rng), log)
        else:  # seed 004's layout: one folder per -c value, its submit script beside the logs
            if slot % REPEATS == 0:
                _write(tree, root, f"{folder}/c{threads}/submit_mnist.sh", SUBMIT_MNIST.format(threads=threads), None)
            _write(tree, root, f"{folder}/c{threads}/log.mnist-{jobs[0]}", _seed004_log(None, threads, epochs, total, 24, rng), log)


# ---------------------------------------------------------------- the tree
def shares(n_files: int, mlperf_share: float = 0.1) -> tuple[int, int, int]:
    """(MLPerf, seed 002, seed 004) log counts for n_files."""
    mlperf = round(n_files * mlperf_share)
    seed002 = (n_files - mlperf) // 2
    return mlperf, seed002, n_files - mlperf - seed002


def make_tree(dest: Path, n_files: int = 10_000, seed: int = 0, mlperf_share: float = 0.1) -> Tree:
    """Write n_files logs (plus the system descriptions and job scripts beside them) under dest."""
    rng = random.Random(seed)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tree = Tree()
    n_mlperf, n002, n004 = shares(n_files, mlperf_share)
    jobs = [4_200_000]
    _mlperf(tree, dest, n_mlperf, rng)
    _seed002(tree, dest, n002, rng, jobs)
    _seed004(tree, dest, n004, rng, jobs)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mlperf-share", type=float, default=0.1)
    args = parser.parse_args(argv)
    tree = make_tree(args.dest, args.files, args.seed, args.mlperf_share)
    print(f"{tree.files} logs ({', '.join(f'{k} {v}' for k, v in tree.kinds.items())}), {tree.bytes / 1e6:.1f} MB in all, at {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
