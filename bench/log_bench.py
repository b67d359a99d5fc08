"""Bench: the log view opens a 2 GB log at its tail, and follows a log growing 1,000 lines/s.

    python bench/log_bench.py [--gb 2] [--seconds 20] [--rate 1000] [--rounds 1] [--against REV]

1. Builds a log of `--gb` GB of real bytes (the plain logs of examples/ repeated, no sparse
   holes) in a temporary folder, and times, in a fresh process each round, the log view from
   the app's start until its first screen shows the file's last line (headless; the imports
   are timed apart, before the clock starts), against two baselines: `tail -n 50` as a
   subprocess, and Python reading the last 64 KB.
2. Starts the log view in a child process following a new log, lets it settle (the rest of
   opening is not following), appends `--rate` lines/s for `--seconds` s from this process,
   and reads the child's own CPU time (`resource.getrusage` in the child, over the writing
   window only) and its peak RSS.

`--against REV` runs both measures on the code of git revision REV too (`git archive` into a
temporary folder, imported from there), alternating with the working tree round by round, so
before and after are measured the same way under the same load.

Targets: open < 1 s; following < 3 % of a core and < 100 MB RSS. Prints the load average (the
figures move with it on a shared machine). The 2 GB file is deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TAIL = 64 * 1024
SETTLE_S = 1.0
"""How long the follow child runs after its first screen before the writing starts."""


def real_lines() -> bytes:
    """The lines of every plain log in examples/ (about what a job's output holds)."""
    data = b"".join(p.read_bytes() for p in sorted(EXAMPLES.rglob("*")) if p.suffix in (".out", ".log", ".err") and p.is_file())
    return b"".join(line + b"\n" for line in data.splitlines() if line.strip() and b"\x00" not in line)


def build(path: Path, size: int) -> None:
    block = real_lines()
    block = block * max(1, (4 * 1024 * 1024) // len(block))
    with path.open("wb") as handle:
        written = 0
        while written < size:
            handle.write(block)
            written += len(block)
        handle.write(b"THE LAST LINE OF THE BENCH LOG\n")


async def open_view(path: Path) -> tuple[float, float, int]:
    """Seconds from the app's start, and from the app running, to a first screen showing the
    last line; bytes read."""
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.views.log import LogViewScreen
    from gpuscope.tui.widgets.log_lines import LogLines

    start = time.perf_counter()
    screen = LogViewScreen(path, follow=False)
    app = GpuscopeApp(first_screen=lambda: screen)
    async with app.run_test(size=(120, 40)) as pilot:
        running = time.perf_counter()
        while True:
            if screen.ready:
                lines = screen.query_one(LogLines)
                height = lines.scrollable_content_region.height
                shown = "".join(s.text for y in range(height) for s in lines.render_line(y))
                if "THE LAST LINE OF THE BENCH LOG" in shown:
                    break
            await pilot.pause(0.005)
        took, after_start = time.perf_counter() - start, time.perf_counter() - running
        read = screen.document.bytes_read
        app.exit()
    return took, after_start, read


def open_child(path: Path) -> None:
    """One cold open in this fresh process: prints the imports' seconds, the open's seconds
    (from the app's start, and once it runs), the CPU seconds of the open and the KB read."""
    start = time.perf_counter()
    from gpuscope.tui.app import GpuscopeApp  # noqa: F401  (imported before the clock, as a command has)
    from gpuscope.tui.screens.views.log import LogViewScreen  # noqa: F401

    imports = time.perf_counter() - start
    cpu = time.process_time()
    took, after_start, read = asyncio.run(open_view(path))
    print(f"{imports:.3f} {took:.3f} {after_start:.3f} {time.process_time() - cpu:.3f} {read / 1024:.0f}", flush=True)


def baselines(path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    subprocess.run(["tail", "-n", "50", str(path)], check=True, stdout=subprocess.DEVNULL)
    tail = time.perf_counter() - start
    start = time.perf_counter()
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - TAIL))
        handle.read(TAIL)
    python = time.perf_counter() - start
    return tail, python


def follow_child(path: Path, ready: Path, seconds: float) -> None:
    """The followed screen alone in this process: prints its CPU seconds over the writing
    window (from `ready` being written to `seconds` later), its peak RSS and what it saw."""
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.views.log import LogViewScreen

    screen = LogViewScreen(path, follow=True)
    app = GpuscopeApp(first_screen=lambda: screen)

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            while not screen.ready:
                await pilot.pause(0.05)
            await pilot.pause(SETTLE_S)  # the rest of opening (the footer's keys, the counts) is not following
            ready.write_text("ready")
            before = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            await asyncio.sleep(seconds)
            after = resource.getrusage(resource.RUSAGE_SELF)
            wall = time.perf_counter() - start
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(f"{cpu:.3f} {wall:.3f} {after.ru_maxrss} {screen.document.line_count} {screen.paused}", flush=True)
            app.exit()

    asyncio.run(run())


def child_env(tree: Path | None) -> dict[str, str]:
    """The environment of a child that imports gpuscope from `tree` (a folder holding
    `gpuscope/`), or from the working tree (None)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def open_once(path: Path, tree: Path | None) -> tuple[float, ...]:
    out = subprocess.run([sys.executable, __file__, "--open-child", str(path)], env=child_env(tree),
                         check=True, capture_output=True, text=True).stdout
    return tuple(float(x) for x in out.split()[-5:])


def follow(folder: Path, seconds: float, rate: int, tree: Path | None) -> tuple[float, float, int, int]:
    """CPU % of a core, peak RSS MB, lines written and lines the screen saw."""
    path = folder / "growing.log"
    lines = real_lines().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2000]))
    ready = folder / "ready"
    ready.unlink(missing_ok=True)
    child = subprocess.Popen([sys.executable, __file__, "--follow-child", str(path), str(ready), str(seconds + 1)],
                             stdout=subprocess.PIPE, text=True, env=child_env(tree))
    while not ready.exists():
        if child.poll() is not None:
            sys.exit(f"the follow child ended: {child.returncode}")
        time.sleep(0.05)
    written, start, batch = 0, time.perf_counter(), max(1, rate // 100)
    with path.open("ab", buffering=0) as handle:
        while (now := time.perf_counter() - start) < seconds:
            due = int(now * rate)
            if due > written:
                handle.write(b"".join(lines[(written + i) % len(lines)] for i in range(min(due - written, 10 * batch))))
                written = min(due, written + 10 * batch)
            time.sleep(0.01)
    out, _ = child.communicate(timeout=120)
    cpu, wall, rss_kb, seen, _paused = out.split()[-5:]
    return 100 * float(cpu) / float(wall), int(rss_kb) / 1024, written, int(seen) - 2000


def archive(rev: str, folder: Path) -> Path:
    """The code of git revision `rev`, as a folder holding `gpuscope/`."""
    tree = folder / f"rev-{rev}"
    tree.mkdir()
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--prefix=gpuscope/", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=data, check=True)
    return tree


def median(rows: list[tuple[float, ...]], i: int) -> float:
    return statistics.median(row[i] for row in rows)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--follow-child":
        follow_child(Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--open-child":
        open_child(Path(sys.argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0, help="size of the log opened at its tail (default 2)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the log grows while followed (default 20)")
    parser.add_argument("--rate", type=int, default=1000, help="lines appended a second (default 1000)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each measure; medians are printed (default 1)")
    parser.add_argument("--against", metavar="REV", help="also measure git revision REV, alternating with the working tree")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="gpuscope-log-bench-") as tmp:
        folder = Path(tmp)
        trees: dict[str, Path | None] = {"working tree": None}
        if args.against:
            trees = {args.against: archive(args.against, folder), **trees}
        big = folder / "big.log"
        start = time.perf_counter()
        build(big, int(args.gb * 1024 ** 3))
        print(f"built {big.stat().st_size / 1024 ** 3:.2f} GB of real log lines in {time.perf_counter() - start:.1f} s")
        tail, python = baselines(big)
        print(f"baselines: tail -n 50 {tail:.3f} s, Python last 64 KB {python * 1000:.2f} ms")
        opened: dict[str, list[tuple[float, ...]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                opened[name].append(open_once(big, tree))
        for name, rows in opened.items():
            print(f"open at tail, {name}: {median(rows, 1):.3f} s from the app's start to a first screen with the last line "
                  f"({median(rows, 2):.3f} s once the app runs; imports before it {median(rows, 0):.2f} s; the child's CPU {median(rows, 3):.2f} s, its count of the file included; "
                  f"{median(rows, 4):.0f} KB read); target < 1 s")
        big.unlink()
        followed: dict[str, list[tuple[float, ...]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                followed[name].append(follow(folder, args.seconds, args.rate, tree))
        for name, rows in followed.items():
            print(f"follow, {name}: {median(rows, 2):,.0f} lines written in {args.seconds:.0f} s, the screen saw {median(rows, 3):,.0f}; "
                  f"CPU {median(rows, 0):.1f} % of a core (target < 3 %; rounds {', '.join(f'{r[0]:.1f}' for r in rows)}); "
                  f"peak RSS {median(rows, 1):.0f} MB (target < 100 MB)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
