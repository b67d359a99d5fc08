"""MAGMA parse + summary benchmark: gpuscope against a user's own script, same files.

    python bench/magma_bench.py [--files 360] [--repeat 5] [--out DIR] [--keep] [--check]

1. builds a result tree from the real study files in `../shared/data/magma` (see
   make_magma_tree.py); without them it says so and exits 0;
2. times, in this process, side by side, in alternating order, `--repeat` times:
   (a) the baselines: baseline_magma.py (regex line loop + pandas groupby) and
       baseline_seed.py (the seed study's own parser, same groupby), and
   (b) gpuscope's stage, `read_tree([tree])` + `summarize(result.rows)`;
   and (c) the whole command `gpuscope magma TREE --format text` as a subprocess, beside
   (d) a bare `python -c "import pandas"` (what every command pays first);
3. prints medians and CPU seconds (the machine may be shared: CPU time is what a busy
   neighbour does not inflate), the ratio of each baseline in (a) to (b), the regex line
   loop's judged against the >= 4x target, and (c) against < 1.0 s, with its ratio to (d)
   and, from one more run of the command's steps in a new process, where its CPU time goes
   (imports, parse, summarise and plot, render).

It reports and exits 0; `--check` exits 1 when a target is missed. A row-count mismatch
between baseline and gpuscope exits 2: the timings would not compare like with like.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO_ROOT = BENCH.parent
SHARED_MAGMA = REPO_ROOT.parent / "shared" / "data" / "magma"
TARGET_RATIO = 4.0
TARGET_CLI_S = 1.0

sys.path.insert(0, str(BENCH))  # sibling modules, also when imported from elsewhere
from bench_tree import on_tree, timed  # noqa: E402
import baseline_magma  # noqa: E402
import baseline_seed  # noqa: E402
import make_magma_tree  # noqa: E402


def gpuscope_stage(tree: Path):
    from gpuscope.metrics.magma import stats as magma_stats
    from gpuscope.parsers.magma import read as magma

    result = magma.read_tree([tree])
    return result, magma_stats.summarize(result.rows)


def cli_run(exe: Path, tree: Path) -> subprocess.CompletedProcess:
    # Argument list, no shell; the report goes to /dev/null, errors are kept to show.
    return subprocess.run([str(exe), "magma", str(tree), "--format", "text"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)


def child_cpu(run, *args):
    """(wall seconds, CPU seconds of the child processes, result) of `run(*args)`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, result = timed(run, *args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, result


def import_pandas() -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import pandas"], check=False)


SPLIT = """
import sys, time
clock = time.process_time
start = clock()
from gpuscope.metrics import export
from gpuscope.metrics.magma import stats
from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.model.magma_report import MagmaOptions, report
from gpuscope.tui.render.boxplot import boxplots_text
imported = clock()
result = read_tree([sys.argv[1]])
parsed = clock()
tables, extra = report(result, MagmaOptions(width=100), "text")
summarised = clock()
export.render(tables, "text", 120, extra)
rendered = clock()
summary = stats.summarize(result.rows)
drawing = clock()
boxplots_text(summary, "gflops", 100)
plots = clock() - drawing
print(f"{imported - start:.2f} {parsed - imported:.2f} {summarised - parsed:.2f} {plots:.2f} {rendered - summarised:.2f}")
"""
"""The command's steps (as tui/cli/studies.py runs them), each timed in CPU seconds; the box
plots (part of the summarising step) once more on their own."""


def cpu_split(tree: Path) -> str:
    """Where the command's CPU time goes, from one run of its steps in a new process."""
    done = subprocess.run([sys.executable, "-c", SPLIT, str(tree)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"(the split could not be measured: {done.stderr.strip()[-300:]})"
    imports, parse, summarise, plots, render = done.stdout.split()
    return f"cpu: imports {imports} s, parse {parse} s, summarise {summarise} s (box plots {plots} s of it), render {render} s"


def explain_mismatch(tree: Path, rows) -> None:
    """Per-file row counts that differ, so a parser bug is visible at once."""
    ours = Counter({str(p.relative_to(tree)): sum(1 for x in open(p, errors="replace") if baseline_magma.ROW.match(x))
                    for p in tree.rglob("*.out")})
    theirs = Counter(rows["file"].astype(str).value_counts().to_dict())
    for name in sorted(set(ours) | set(theirs)):
        if ours[name] != theirs[name]:
            print(f"  {name}: baseline {ours[name]}, gpuscope {theirs[name]}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=360, help="result files to generate (default 360)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--out", type=Path, help="write the tree to DIR/magma-tree and keep it (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp tree and print where it is")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not SHARED_MAGMA.is_dir():
        print(f"magma bench: skipped, the real MAGMA files are not at {SHARED_MAGMA} "
              "(the repository root's sibling shared/data/magma)")
        return 0
    return on_tree(args, "magma", bench)


def bench(args, tree: Path) -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpus} usable)")
    seconds, (n_files, n_bytes) = timed(make_magma_tree.make_tree, tree, args.files, args.seed)
    print(f"generated {n_files} files, {n_bytes / 1e6:.1f} MB (seed {args.seed}) in {seconds:.1f} s at {tree}")

    try:
        import gpuscope.metrics.magma.stats  # noqa: F401
        import gpuscope.parsers.magma.read  # noqa: F401
    except ImportError as exc:
        print(f"gpuscope's MAGMA stage is not importable ({exc}); timing the baseline only")
        times = [timed(baseline_magma.run, tree)[0] for _ in range(args.repeat)]
        print(f"baseline (regex line loop + pandas groupby)  median {statistics.median(times):.2f} s")
        return 0

    # Untimed warm-up round: imports, first-touch of the files, and the row-count check.
    base_rows, _ = baseline_magma.run(tree)
    seed_rows, _ = baseline_seed.run(tree)
    result, _ = gpuscope_stage(tree)
    own = result.rows[result.rows["impl"] == "magma"]  # the baselines read MAGMA's own numbers only
    excluded = int((own["excluded"] != "").sum())
    print(f"rows: baseline {len(base_rows):,}, gpuscope {len(own):,} MAGMA rows ({excluded:,} excluded from statistics; "
          f"{len(result.rows) - len(own):,} rows of other implementations), {result.files_read} files read")
    if not len(base_rows) == len(seed_rows) == len(own):
        print(f"seed-script baseline found {len(seed_rows):,} rows")
        print("magma bench: row counts differ, the timings would not be comparable:")
        explain_mismatch(tree, own)
        return 2
    n_rows = len(base_rows)
    del base_rows, seed_rows, result

    exe = Path(sys.executable).parent / "gpuscope"
    if not exe.exists():
        print(f"no gpuscope console script next to {sys.executable}; skipping the end-to-end run")
    else:
        proc = cli_run(exe, tree)
        if proc.returncode != 0:
            print(f"gpuscope magma exited {proc.returncode}: {proc.stderr.strip()[-500:]}")

    stages = {
        "baseline": lambda: timed(baseline_magma.run, tree)[0],
        "seed": lambda: timed(baseline_seed.run, tree)[0],
        "gpuscope": lambda: timed(gpuscope_stage, tree)[0],
    }
    cli_codes: list[int] = []
    child_cpu_times: dict[str, list[float]] = {"cli": [], "pandas": []}  # a subprocess's CPU is not ours

    def cli_stage() -> float:
        seconds, cpu, proc = child_cpu(cli_run, exe, tree)
        cli_codes.append(proc.returncode)
        child_cpu_times["cli"].append(cpu)
        return seconds

    def pandas_stage() -> float:
        seconds, cpu, _ = child_cpu(import_pandas)
        child_cpu_times["pandas"].append(cpu)
        return seconds

    if exe.exists():
        stages["cli"] = cli_stage
        stages["pandas"] = pandas_stage
    times: dict[str, list[float]] = {name: [] for name in stages}
    cpu_times: dict[str, list[float]] = {name: [] for name in stages if name not in child_cpu_times}
    order = list(stages)
    for r in range(args.repeat):
        for name in order if r % 2 == 0 else reversed(order):  # alternate: no side always goes first
            start = time.process_time()
            times[name].append(stages[name]())
            if name in cpu_times:
                cpu_times[name].append(time.process_time() - start)
        print(f"round {r + 1}/{args.repeat}: " + "  ".join(f"{n} {times[n][-1]:.2f} s" for n in order))

    base_s, ours_s = statistics.median(times["baseline"]), statistics.median(times["gpuscope"])
    seed_s = statistics.median(times["seed"])
    cpu = {name: statistics.median(c) for name, c in cpu_times.items()}
    # The target is against the regex line loop (what a user would write); the seed parser is
    # printed beside it for reference.
    ratio = base_s / ours_s
    failed = ratio < TARGET_RATIO
    print()
    print(f"magma bench: {n_files} files, {n_bytes / 1e6:.1f} MB, {n_rows:,} rows")
    print(f"baseline (regex line loop + pandas groupby)  median {base_s:.2f} s  cpu {cpu['baseline']:.2f} s")
    print(f"seed 000's parser + the same groupby         median {seed_s:.2f} s  cpu {cpu['seed']:.2f} s   "
          f"ratio to gpuscope {seed_s / ours_s:.1f}x (cpu {cpu['seed'] / cpu['gpuscope']:.1f}x)")
    print(f"gpuscope read_tree + summarize               median {ours_s:.2f} s  cpu {cpu['gpuscope']:.2f} s   "
          f"ratio to the regex loop {ratio:.1f}x (cpu {cpu['baseline'] / cpu['gpuscope']:.1f}x)  "
          f"target >={TARGET_RATIO:g}x  {verdict(not failed)}")
    if "cli" in times:
        cli_s, pandas_s = statistics.median(times["cli"]), statistics.median(times["pandas"])
        cli_cpu, pandas_cpu = (statistics.median(child_cpu_times[name]) for name in ("cli", "pandas"))
        cli_ok = cli_s < TARGET_CLI_S and not any(cli_codes)  # a failed run is no result
        failed |= not cli_ok
        print(f"gpuscope magma TREE --format text            median {cli_s:.2f} s  cpu {cli_cpu:.2f} s   "
              f"target <{TARGET_CLI_S:g} s  {verdict(cli_ok)}")
        print(f"python -c 'import pandas' (same rounds)      median {pandas_s:.2f} s  cpu {pandas_cpu:.2f} s   "
              f"the command is {cli_s / pandas_s:.1f}x it (cpu {cli_cpu / pandas_cpu:.1f}x)")
        print(f"  {cpu_split(tree)}")
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
