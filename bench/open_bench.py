"""Opening benchmark: Enter on a small file to its view showing content, and `b` on the watch to
the browser listing a 500-file folder, headless.

    python bench/open_bench.py [--files 500] [--repeat 5] [--out DIR] [--keep] [--check]

1. builds a folder of `--files` files side by side (no subfolders), copies of the small real
   files of `examples/` in turn (a CSV table, a Parquet file, run logs, Markdown, JSON...),
   each under its own name with its extension kept, as a job's output folder holds them;
2. per round, a fresh app at 120x40 (`App.run_test`):
   (a) the browser on the folder, every file recognised and the views imported (the browser
       does it once idle, then exempts its startup objects from garbage collection as
       `gpuscope browse` has it do: `freeze_gc`), the cursor on a small CSV table:
       the time from Enter to the table view showing rows; then on a log: from Enter to the
       log view showing its lines;
   (b) the watch on a fake source (tests/fake_watch.py, one poll applied), started in the
       folder, its startup objects exempted from garbage collection as `gpuscope watch` does
       (`freeze_gc`): the time from `b` to the browser's tree listing every file of the folder;
3. prints the median, min and max of `--repeat` rounds (and the process's CPU time over the
   same span) and the targets, on the wall time: Enter < 0.3 s, `b` < 1 s.

Times are wall clock from the key press to the condition, seen by polling every 5 ms (a
figure includes up to 5 ms of that), and then to the screen drawn with it and every pending
event handled (`pilot.pause(0)`): a view can switch to its content before its first frame. The CPU time is the whole process's, the browser's
recognising thread included. It reports and exits 0; `--check` exits 1 when a target
is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))  # fake_watch: the watch's fake source
from bench_tree import on_tree  # noqa: E402

TARGET_ENTER_S = 0.3
TARGET_B_S = 1.0
SMALL = 256 * 1024
"""Files of examples/ up to this size are copied into the folder."""
CSV = REPO / "examples" / "specmoe" / "research_paper_table.csv"
LOG = REPO / "examples" / "analysis" / "analysis.log"
POLL_S = 0.005


def make_folder(dest: Path, files: int) -> None:
    """`files` copies of the small real files of examples/, in one folder; the CSV table and
    the log the bench opens are among them under their own names."""
    dest.mkdir(parents=True)
    sources = [p for p in sorted((REPO / "examples").rglob("*")) if p.is_file() and p.stat().st_size <= SMALL]
    shutil.copy(CSV, dest / CSV.name)
    shutil.copy(LOG, dest / LOG.name)
    for i in range(files - 2):
        source = sources[i % len(sources)]
        shutil.copy(source, dest / f"{i:04d}-{source.name}")


async def waited(pilot: Any, key: str, condition: Callable[[], Any], guard_s: float = 30.0) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) from pressing `key` until `condition()` holds
    (`guard_s` is a hang guard, not a target). The CPU time moves less than the wall time when
    other work shares the machine."""
    start, cpu = time.perf_counter(), time.process_time()
    await pilot.press(key)
    while not condition():
        if time.perf_counter() - start > guard_s:
            raise TimeoutError(f"{key}: not shown after {guard_s} s")
        await asyncio.sleep(POLL_S)
    await pilot.pause(0)  # drawn, not only switched to
    return time.perf_counter() - start, time.process_time() - cpu


async def until(condition: Callable[[], Any], guard_s: float = 60.0) -> None:
    end = time.perf_counter() + guard_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("not ready")
        await asyncio.sleep(0.02)


def showing(app: Any, kind: type, body: str) -> bool:
    """`app`'s screen is a `kind` whose switcher shows `body` (its content, not the loading state)."""
    from textual.widgets import ContentSwitcher

    screen = app.screen
    return isinstance(screen, kind) and screen.query_one("#view-switch", ContentSwitcher).current == body


async def enter_round(folder: Path) -> list[tuple[float, float]]:
    """(Enter to the table view's rows, Enter to the log view's lines) in one fresh browser."""
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.browse.screen import BrowseScreen
    from gpuscope.tui.screens.views.log import LogViewScreen
    from gpuscope.tui.screens.views.table import TableViewScreen

    app = GpuscopeApp(first_screen=lambda: BrowseScreen(folder, freeze_gc=True), mode="browse")
    async with app.run_test(size=(120, 40)) as pilot:
        browse = app.screen
        await until(lambda: browse.recognition_done)
        # The browser imports the views once idle; a person reads the tree meanwhile.
        await until(lambda: all(w.is_finished for w in app.workers if w.group == "views") and gc.get_freeze_count() > 0)
        figures = []
        for path, kind, body in ((CSV, TableViewScreen, "table-body"), (LOG, LogViewScreen, "log-body")):
            assert await browse.show_path(folder / path.name)
            await pilot.pause()
            figures.append(await waited(pilot, "enter", lambda kind=kind, body=body: showing(app, kind, body)))
            app.pop_screen()
            await pilot.pause()
    return figures


async def b_round(folder: Path, files: int) -> tuple[float, float]:
    """`b` on a polled watch to the browser's tree listing the folder's `files` files."""
    from fake_watch import FakeSource, poll

    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.browse.screen import BrowseScreen
    from gpuscope.tui.screens.browse.tree import BrowseTree
    from gpuscope.tui.screens.watch.screen import WatchScreen

    def listed() -> bool:
        screen = app.screen
        if not isinstance(screen, BrowseScreen):
            return False
        root = screen.query_one(BrowseTree).root
        return root.data is not None and root.data.loaded and len(root.children) == files

    app = GpuscopeApp(first_screen=lambda: WatchScreen(FakeSource(), interval=None, freeze_gc=True), mode="watch")
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(pilot, 1)
        await until(lambda: gc.get_freeze_count() > 0)  # after the first poll is drawn
        return await waited(pilot, "b", listed)


def spread(values: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in values], [c for _, c in values]
    return (f"median {statistics.median(walls) * 1000:.0f} ms (min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f}, "
            f"{len(values)} rounds), CPU {statistics.median(cpus) * 1000:.0f} ms")


def bench(args: argparse.Namespace, folder: Path) -> int:
    make_folder(folder, args.files)
    cwd = os.getcwd()
    tables, logs, bs = [], [], []
    try:
        os.chdir(folder)  # `b` with no job opens the current folder
        for _ in range(args.repeat):
            table_s, log_s = asyncio.run(enter_round(folder))
            tables.append(table_s)
            logs.append(log_s)
            bs.append(asyncio.run(b_round(folder, args.files)))
    finally:
        os.chdir(cwd)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"open_bench · {time.strftime('%Y-%m-%d')} · {platform.node()} · {os.cpu_count()} CPUs · load {load:.1f} · {args.files} files")
    rows = [("Enter on a CSV table to its rows", tables, TARGET_ENTER_S), ("Enter on a log to its lines", logs, TARGET_ENTER_S),
            (f"b on the watch to {args.files} files listed", bs, TARGET_B_S)]
    missed = False
    for what, values, target in rows:
        met = statistics.median(w for w, _ in values) < target
        missed |= not met
        print(f"{what:<40} {spread(values)}  target < {target * 1000:.0f} ms: {'met' if met else 'NOT met'}")
    return 1 if args.check and missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=500, help="files in the folder (default 500)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are printed (default 5)")
    parser.add_argument("--out", type=Path, help="build the folder under DIR and keep it")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return on_tree(parser.parse_args(argv), "open", bench)


if __name__ == "__main__":
    sys.exit(main())
