"""Browser benchmark: recognising a 10,000-file result tree, against plain baselines, and the
browser screen's first frame and key latency while it recognises.

    python bench/browse_bench.py [--files 10000] [--repeat 3] [--out DIR] [--keep] [--check]

1. builds a tree of `--files` files in 100 folders by hard-linking (or copying) every real file
   of `examples/` and `../shared/data/` in turn (MAGMA outputs, profiler exports, run logs,
   CSV / JSON / Parquet tables, Markdown, images...), so recognition meets real heads of
   every kind; a FIFO and a symlink loop are added, as result folders have them;
2. times, side by side in alternating order, `--repeat` times:
   (a) a plain Python walk that opens each file and reads its first 8 KB (what any recogniser
       must at least do), (b) `file --mime-type` over the same files (argument lists of 500
       paths, no shell), and (c) gpuscope: `registry.walk(tree)` + `registry.recognise()` of
       every file;
3. opens the browser screen headless (`App.run_test`, 120x40) on the tree: the time until the
   first frame shows the tree, the time until recognition has finished for every file, and
   the key-to-frame latency (p50 / p95) of `down` presses made while recognition runs;
4. prints medians, the ratio of (c) to (a), and the targets: first screen < 1 s, every file
   recognised < 3 s, keys p95 < 50 ms, and the bytes read (/proc/self/io) to recognise a 4 MB
   log: at most `HEAD_BYTES`.

It reports and exits 0; `--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))  # sibling modules, also when imported from elsewhere
from bench_tree import on_tree, timed  # noqa: E402
SHARED_DATA = REPO.parent / "shared" / "data"
TARGET_FIRST_S = 1.0
TARGET_ALL_S = 3.0
TARGET_KEY_P95_MS = 50.0
FOLDERS = 100
HEAD = 8192


def sources() -> list[Path]:
    """Every real file of examples/ and ../shared/data (when present), sorted."""
    roots = [REPO / "examples", SHARED_DATA]
    found = []
    for root in roots:
        if root.is_dir():
            found += [p for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()]
    return found


def make_tree(dest: Path, files: int) -> dict[str, int]:
    """`files` files in FOLDERS folders, each a hard link to (or a copy of) a real file, keeping
    its name's suffixes so that name rules meet real names; plus one FIFO and one symlink loop."""
    pool = sources()
    if not pool:
        raise SystemExit("browse bench: no example files found")
    dest.mkdir(parents=True)
    for i in range(files):
        src = pool[i % len(pool)]
        folder = dest / f"run-{i % FOLDERS:03d}"
        folder.mkdir(exist_ok=True)
        target = folder / f"{i:05d}-{src.name}"
        try:
            os.link(src, target)
        except OSError:  # another filesystem: copy
            shutil.copyfile(src, target)
    os.mkfifo(dest / "run-000" / "a-fifo")
    (dest / "run-001" / "loop").symlink_to("loop")
    return {"pool": len(pool), "files": files}


def plain_walk(tree: Path) -> int:
    """Baseline (a): os.walk, open each regular file, read its first 8 KB."""
    n = 0
    for folder, _dirs, names in os.walk(tree):
        for name in names:
            path = os.path.join(folder, name)
            try:
                if not os.path.isfile(path):  # the FIFO would block an open
                    continue
                with open(path, "rb") as handle:
                    handle.read(HEAD)
                n += 1
            except OSError:
                pass
    return n


def file_mime(tree: Path) -> int:
    """Baseline (b): `file --mime-type -b` over every regular file, 500 paths per call."""
    paths = [os.path.join(d, n) for d, _s, names in os.walk(tree) for n in names]
    paths = [p for p in paths if os.path.isfile(p)]
    n = 0
    for i in range(0, len(paths), 500):
        out = subprocess.run(["file", "--mime-type", "-b", "--", *paths[i:i + 500]], capture_output=True, text=True, check=False)
        n += len(out.stdout.splitlines())
    return n


def gpuscope_recognise(tree: Path) -> tuple[int, dict[str, int]]:
    """(c): the registry's walk and recognition of every file; kinds counted."""
    from gpuscope.parsers import registry

    kinds: dict[str, int] = {}
    for path in registry.walk(tree):
        found = registry.recognise(path)
        key = found.kind or ("problem" if found.problem else "unknown")
        kinds[key] = kinds.get(key, 0) + 1
    return sum(kinds.values()), kinds


def rchar() -> int:
    """Bytes this process has read through read(2) and friends so far (/proc/self/io)."""
    with open("/proc/self/io") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("rchar:"))


def bytes_to_recognise(tree: Path) -> int:
    """Bytes read (by the kernel's count) to recognise one 4 MB log: at most HEAD_BYTES
    when recognition reads only a file's head."""
    from gpuscope.parsers import registry

    probe = tree / "probe.log"
    probe.write_bytes(b"INFO step done\n" * (4 << 16))
    try:
        before = rchar()
        overhead = rchar() - before  # reading /proc/self/io counts too
        before = rchar()
        registry.recognise(probe)
        return rchar() - before - overhead
    finally:
        probe.unlink()


async def screen_timings(tree: Path, presses: int) -> dict[str, object]:
    """First frame with the tree, recognition done, and key-to-frame latencies of `down` presses
    made at irregular moments while recognition runs: from `simulate_key` to the first frame
    composed after it that shows the tree's cursor moved (as bench/watch_latency.py measures)."""
    import random

    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.browse.screen import BrowseScreen

    frames: list[tuple[float, object]] = []
    start = time.perf_counter()
    app = GpuscopeApp(first_screen=lambda: BrowseScreen(tree))
    state = [lambda: None]
    real_display = app._display  # every composed frame passes here, headless or not

    def hooked(target, renderable):  # type: ignore[no-untyped-def]
        real_display(target, renderable)
        if renderable is not None:
            frames.append((time.perf_counter(), state[0]()))

    app._display = hooked  # type: ignore[method-assign]
    latencies: list[float] = []
    rng = random.Random(0)
    async with app.run_test(size=(120, 40)):
        screen = app.screen
        first = frames[0][0] - start if frames else float("nan")
        focused = app.focused
        state[0] = lambda: getattr(focused, "cursor_line", None)
        while not screen.recognition_done and time.perf_counter() - start < 60:
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            if len(latencies) >= presses or screen.recognition_done:
                continue
            before = state[0]()
            pressed = time.perf_counter()
            app.simulate_key("down")
            while True:
                hit = next((t for t, s in reversed(frames) if t > pressed and s != before), None)
                if hit is not None or time.perf_counter() - pressed > 5:
                    break
                await asyncio.sleep(0.0005)
            latencies.append((hit or time.perf_counter()) - pressed)
        done = time.perf_counter() - start
    ordered = sorted(latencies)
    p = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000 if ordered else float("nan")  # noqa: E731
    return {"first_s": first, "all_s": done, "presses": len(latencies), "p50_ms": p(0.5), "p95_ms": p(0.95)}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="files to generate (default 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--presses", type=int, default=40, help="key presses while recognising (default 40)")
    parser.add_argument("--out", type=Path, help="write the tree to DIR/browse-tree and keep it (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp tree and print where it is")
    parser.add_argument("--no-screen", action="store_true", help="skip the headless screen timings")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    return on_tree(args, "browse", bench)


def bench(args, tree: Path) -> int:
    load = os.getloadavg()[0]
    print(f"python {platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.2f}")
    made = make_tree(tree, args.files)
    print(f"tree: {made['files']:,} files in {FOLDERS} folders, linked from {made['pool']} real files, plus a FIFO and a symlink loop")
    n_plain, n_mime = plain_walk(tree), file_mime(tree)  # warm-up: page cache, imports
    n_ours, kinds = gpuscope_recognise(tree)
    print(f"files: plain walk {n_plain:,}, file(1) {n_mime:,}, gpuscope {n_ours:,}")
    print("kinds: " + ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))
    times: dict[str, list[float]] = {"plain": [], "mime": [], "ours": []}
    for round_no in range(args.repeat):
        order = ["plain", "mime", "ours"] if round_no % 2 == 0 else ["ours", "mime", "plain"]
        for name in order:
            fn = {"plain": plain_walk, "mime": file_mime, "ours": gpuscope_recognise}[name]
            seconds, _ = timed(fn, tree)
            times[name].append(seconds)
        print(f"round {round_no + 1}/{args.repeat}: " + "  ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))
    med = {k: statistics.median(v) for k, v in times.items()}
    ok = []
    print(f"\nbrowse bench: {args.files:,} files; medians of {args.repeat}")
    print(f"plain walk, open + read 8 KB      {med['plain']:.2f} s")
    print(f"file --mime-type                  {med['mime']:.2f} s")
    print(f"gpuscope walk + recognise         {med['ours']:.2f} s   {med['ours'] / med['plain']:.1f}x the plain walk, "
          f"{med['ours'] / med['mime']:.2f}x file(1)")
    most = bytes_to_recognise(tree)
    from gpuscope.parsers import registry

    ok.append(most <= registry.HEAD_BYTES)
    print(f"bytes read to recognise one 4 MB log: {most:,} (HEAD_BYTES {registry.HEAD_BYTES:,})  {'PASS' if ok[-1] else 'FAIL'}")
    if not args.no_screen:
        shot = asyncio.run(screen_timings(tree, args.presses))
        ok += [shot["first_s"] < TARGET_FIRST_S, shot["all_s"] < TARGET_ALL_S, shot["p95_ms"] < TARGET_KEY_P95_MS]
        print(f"screen: first frame {shot['first_s']:.2f} s (target < {TARGET_FIRST_S:g} s)  {'PASS' if ok[-3] else 'FAIL'}")
        print(f"screen: every file recognised {shot['all_s']:.2f} s (target < {TARGET_ALL_S:g} s)  {'PASS' if ok[-2] else 'FAIL'}")
        print(f"screen: {shot['presses']} key presses while recognising: p50 {shot['p50_ms']:.1f} ms, p95 {shot['p95_ms']:.1f} ms "
              f"(target < {TARGET_KEY_P95_MS:g} ms)  {'PASS' if ok[-1] else 'FAIL'}")
    return 1 if args.check and not all(ok) else 0


if __name__ == "__main__":
    sys.exit(main())
