"""Scaling read + summary benchmark: gpuscope against a grep-style loop, same 10,000 logs.

    python bench/scaling_bench.py [--files 10000] [--repeat 5] [--mlperf-share 0.1] [--out DIR] [--keep] [--check]

1. builds a tree of run logs (make_scaling_tree.py): by default 10 % full real MLPerf Training
   v3.1 logs (times and node counts varied), 45 % seed 002 logs, 45 % seed 004 logs in the lines
   tests/scaling_work.py prints; without the real MLPerf logs in ../shared it says so and exits 0;
2. times, in this process, side by side, in alternating order, `--repeat` times:
   (a) the baseline, baseline_scaling.py: a Python loop of `re.search` over each file's text
       for the timing line and one resource line, then medians and speedups, and
   (b) gpuscope's stage, `read_runs([tree])` + `scaling.summarize(result.runs)`;
   and (c) the whole command `gpuscope scaling TREE --format text` as a subprocess (or
   "skipped: no scaling subcommand" when this gpuscope has none);
3. prints medians (wall clock, the targets' measure; CPU time beside it, which moves less when
   others load the machine), the ratio of (b) to (a), (b) against < 3 s and (c) against < 4 s,
   and the ratios of each to its target and of (c) to (b).

It reports and exits 0; `--check` exits 1 when a target is missed. When baseline and gpuscope
do not find the same runs it exits 2: the timings would not compare like with like.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TARGET_STAGE_S = 3.0
TARGET_CLI_S = 4.0

sys.path.insert(0, str(BENCH))  # sibling modules, also when imported from elsewhere
from bench_tree import on_tree, timed  # noqa: E402
import baseline_scaling  # noqa: E402
import make_scaling_tree  # noqa: E402


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: on a shared machine it moves less
    than the wall clock (other processes' load shows in the wall time, far less in this)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def gpuscope_stage(tree: Path):
    from gpuscope.metrics.scaling import analysis as scaling
    from gpuscope.parsers.runlogs.read import read_runs

    result = read_runs([tree])
    return result, scaling.summarize(result.runs)


def cli_run(exe: Path, tree: Path) -> subprocess.CompletedProcess:
    # Argument list, no shell; the report goes to /dev/null, errors are kept to show.
    return subprocess.run([str(exe), "scaling", str(tree), "--format", "text"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)


def has_scaling_command(exe: Path) -> bool:
    proc = subprocess.run([str(exe), "scaling", "--help"], capture_output=True, text=True, check=False)
    return proc.returncode == 0


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="log files to generate (default 10000)")
    parser.add_argument("--mlperf-share", type=float, default=0.1, help="share of full MLPerf logs (default 0.1)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--out", type=Path, help="write the tree to DIR/scaling-tree and keep it (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp tree and print where it is")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not make_scaling_tree.MLPERF_ROOT.is_dir():
        print(f"scaling bench: skipped, the real MLPerf logs are not at {make_scaling_tree.MLPERF_ROOT} "
              "(the repository root's sibling shared/data/scaling)")
        return 0
    return on_tree(args, "scaling", bench)


def bench(args, tree: Path) -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpus} usable), load average {load:.2f}")
    seconds, made = timed(make_scaling_tree.make_tree, tree, args.files, args.seed, args.mlperf_share)
    mix = ", ".join(f"{kind} {count}" for kind, count in made.kinds.items())
    on_disk = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
    print(f"generated {made.files} logs ({mix}), {on_disk / 1e6:.1f} MB with the system files and job scripts "
          f"beside them (seed {args.seed}) in {seconds:.1f} s at {tree}")

    # Untimed warm-up round: imports, first touch of the files, and the run-count check.
    base_rows, _ = baseline_scaling.run(tree)
    result, _ = gpuscope_stage(tree)
    print(f"runs: baseline {len(base_rows):,}, gpuscope {len(result.runs):,} "
          f"({int(result.runs['status'].ne('ok').sum()):,} not ok), {len(result.findings):,} findings")
    if not len(base_rows) == len(result.runs) == made.files:
        print(f"scaling bench: the baseline and gpuscope do not both find the {made.files:,} runs written; "
              "the timings would not be comparable")
        return 2
    del base_rows, result

    exe = Path(sys.executable).parent / "gpuscope"
    cli = exe.exists() and has_scaling_command(exe)
    if not exe.exists():
        print(f"no gpuscope console script next to {sys.executable}; skipping the end-to-end run")
    elif cli:
        proc = cli_run(exe, tree)
        if proc.returncode != 0:
            print(f"gpuscope scaling exited {proc.returncode}: {proc.stderr.strip()[-500:]}")

    stages = {
        "baseline": lambda: timed(baseline_scaling.run, tree)[0],
        "gpuscope": lambda: timed(gpuscope_stage, tree)[0],
    }
    cli_codes: list[int] = []

    def cli_stage() -> float:
        seconds, proc = timed(cli_run, exe, tree)
        cli_codes.append(proc.returncode)
        return seconds

    if cli:
        stages["cli"] = cli_stage
    times: dict[str, list[float]] = {name: [] for name in stages}
    cpu: dict[str, list[float]] = {name: [] for name in stages}
    order = list(stages)
    for r in range(args.repeat):
        for name in order if r % 2 == 0 else reversed(order):  # alternate: no side always goes first
            before = cpu_seconds()
            times[name].append(stages[name]())
            cpu[name].append(cpu_seconds() - before)
        print(f"round {r + 1}/{args.repeat}: " + "  ".join(f"{n} {times[n][-1]:.2f} s (cpu {cpu[n][-1]:.2f})" for n in order)
              + f"  load average {os.getloadavg()[0]:.2f}")

    base_s, ours_s = statistics.median(times["baseline"]), statistics.median(times["gpuscope"])
    failed = ours_s >= TARGET_STAGE_S
    print()
    print(f"scaling bench: {made.files} logs ({mix}), {on_disk / 1e6:.1f} MB; medians of {args.repeat}")
    base_cpu, ours_cpu = statistics.median(cpu["baseline"]), statistics.median(cpu["gpuscope"])
    print(f"baseline (re.search loop + medians)       median {base_s:.2f} s   (cpu {base_cpu:.2f} s)")
    print(f"gpuscope read_runs + summarize            median {ours_s:.2f} s   (cpu {ours_cpu:.2f} s)   "
          f"{ours_s / base_s:.1f}x the baseline's time  target <{TARGET_STAGE_S:g} s  {verdict(not failed)}")
    if cli:
        cli_s = statistics.median(times["cli"])
        cli_ok = cli_s < TARGET_CLI_S and not any(cli_codes)  # a failed run is no result
        failed |= not cli_ok
        failed_runs = [code for code in cli_codes if code != 0]
        note = f"   NO RESULT: exited {failed_runs[0]} in {len(failed_runs)} of {len(cli_codes)} runs (error above)" if failed_runs else ""
        print(f"gpuscope scaling TREE --format text       median {cli_s:.2f} s   (cpu {statistics.median(cpu['cli']):.2f} s)   "
              f"target <{TARGET_CLI_S:g} s  {verdict(cli_ok)}{note}")
        print(f"ratios: stage {ours_s / TARGET_STAGE_S:.2f}x its target, command {cli_s / TARGET_CLI_S:.2f}x its target, "
              f"command {cli_s / ours_s:.2f}x the stage (start-up, analysis beyond summarize, printing)")
    elif exe.exists():
        print("gpuscope scaling TREE --format text       skipped: no scaling subcommand")
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
