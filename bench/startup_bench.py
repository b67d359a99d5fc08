"""Start-up benchmark: every print command on `examples/` against a bare `python -c "import pandas"`.

    python bench/startup_bench.py [--repeat 7] [--only NAME ...] [--imports]

Each round runs the baseline and every command once, in that order, as new processes (output to
/dev/null, stdout not a terminal: the commands print, no screen opens); the medians over
`--repeat` rounds are printed with each command's ratio to the baseline's median. The baseline is
measured in the same run because the absolute times depend on the machine and on what else runs
on it; the ratio says what gpuscope adds on top of pandas, which every command needs. Target:
ratio <= TARGET for every command; exit 1 when one is over. Each process's CPU time (user +
system, from `RUSAGE_CHILDREN`) is printed beside its wall time, with its own ratio: on a shared
machine the wall clock also counts the time spent waiting for a core, the CPU time does not.

`--imports` also prints, per command, the modules that took the most time to import (from
`python -X importtime`, one extra run each): where to look when a command is over.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.6
"""Most a command may take, as a multiple of `python -c "import pandas"`."""
BASELINE = ("import pandas", [sys.executable, "-c", "import pandas"])
COMMANDS = {
    "magma": ["magma", "examples/magma", "--exclude", "attempt-1", "--format", "text"],
    "kernels": ["kernels", "examples/profiles", "--gpu", "A100", "--top", "10", "--format", "text"],
    "scaling": ["scaling", "examples/scaling", "--format", "text", "--width", "120"],
    "browse": ["browse", "examples", "--format", "text"],
    "check": ["check", "examples"],
    "report": ["report", "--recording", "examples/recording/demo.gsrec"],
    "watch": ["watch", "--demo", "--once", "--format", "text"],
}
"""The README's example of each command that prints (replay is a screen only: its text is `report`)."""


def gpuscope() -> list[str]:
    """The installed `gpuscope` script beside this Python (what a user runs), else `-m`."""
    script = Path(sys.executable).parent / "gpuscope"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpuscope.tui.cli.main"]


def run_once(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit status) of one run as a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.returncode


def slowest_imports(argv: list[str], top: int = 8) -> list[tuple[float, str]]:
    """The modules with the most cumulative import time (seconds), outermost first among equals."""
    cmd = [sys.executable, "-X", "importtime", *argv[1:]] if argv[0] == sys.executable else [sys.executable, "-X", "importtime", *argv]
    done = subprocess.run(cmd, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = len(name) - len(name.lstrip())
            if depth <= 3:  # top-level imports and their first children: the ones to act on
                rows.append((int(parts[1]) / 1e6, name.strip()))
    return sorted(rows, reverse=True)[:top]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds (default 7); the medians are reported")
    parser.add_argument("--only", nargs="+", choices=sorted(COMMANDS), help="only these commands")
    parser.add_argument("--imports", action="store_true", help="also print each command's slowest imports")
    args = parser.parse_args(argv)
    names = args.only or list(COMMANDS)
    base = gpuscope()
    runs = {name: [*base, *COMMANDS[name]] for name in names}
    times: dict[str, list[float]] = {BASELINE[0]: [], **{name: [] for name in names}}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    codes: dict[str, set[int]] = {name: set() for name in names}
    run_once(BASELINE[1])  # warm the file cache and the compiled modules before timing
    for argv_ in runs.values():
        run_once(argv_)
    for _ in range(args.repeat):
        for name, argv_ in [(BASELINE[0], BASELINE[1]), *runs.items()]:
            seconds, cpu_seconds, code = run_once(argv_)
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            if name in codes:
                codes[name].add(code)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {load:.1f}, {time.strftime('%Y-%m-%d %H:%M')}; median of {args.repeat} rounds")
    baseline, baseline_cpu = statistics.median(times[BASELINE[0]]), statistics.median(cpu[BASELINE[0]])
    print(f"{'command':<10} {'median s':>9} {'ratio':>6} {'cpu s':>7} {'ratio':>6}  verdict (on the wall-clock ratio)")
    print(f"{'pandas':<10} {baseline:>9.3f} {1.0:>6.2f} {baseline_cpu:>7.3f} {1.0:>6.2f}  baseline: python -c \"import pandas\"")
    over = []
    for name in names:
        median, median_cpu = statistics.median(times[name]), statistics.median(cpu[name])
        ratio = median / baseline
        verdict = "ok" if ratio <= TARGET else f"OVER {TARGET}x"
        if ratio > TARGET:
            over.append(name)
        exits = ",".join(str(c) for c in sorted(codes[name]))
        print(f"{name:<10} {median:>9.3f} {ratio:>6.2f} {median_cpu:>7.3f} {median_cpu / baseline_cpu:>6.2f}  "
              f"{verdict} (exit {exits}): gpuscope {' '.join(COMMANDS[name])}")
    if args.imports:
        for name, argv_ in runs.items():
            print(f"\n{name}: slowest imports (cumulative s)")
            for seconds, module in slowest_imports(argv_):
                print(f"  {seconds:6.3f}  {module}")
    if over:
        print(f"over {TARGET}x the pandas import: {', '.join(over)}")
        return 1
    print(f"every command within {TARGET}x the pandas import")
    return 0


if __name__ == "__main__":
    sys.exit(main())
