"""What the tree benchmarks share: a timer, and running a bench over a generated tree in a
temporary folder (or `--out DIR`), removed afterwards unless `--out` or `--keep` says so.

    from bench_tree import on_tree, timed
    def main(argv=None): return on_tree(parse_args(argv), "browse", bench)
"""

from __future__ import annotations

import gc
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """(seconds, result); collect garbage first so one side does not pay for the other's."""
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def on_tree(args: Any, name: str, bench: Callable[[Any, Path], int]) -> int:
    """`bench(args, tree)` over `DIR/<name>-tree` (`args.out`, kept) or a temporary folder
    (removed unless `args.keep`); a tree left by an earlier `--out` run is made anew, since
    stale files would skew the counts."""
    base = args.out if args.out else Path(tempfile.mkdtemp(prefix=f"{name}-bench-"))
    tree = base / f"{name}-tree"
    if tree.exists():
        shutil.rmtree(tree)
    try:
        return bench(args, tree)
    finally:
        if args.out or args.keep:
            print(f"tree kept at {tree}")
        else:
            shutil.rmtree(base, ignore_errors=True)
