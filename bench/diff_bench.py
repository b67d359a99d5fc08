"""`gpuscope diff` on two 1-million-launch profiles, side by side with a plain pandas merge.

    python bench/diff_bench.py [--launches 1000000] [--repeat 5]

1. Builds two PyProf Parquet profiles (`.gzip`, as PyProf names them) of N launches each from a
   real one: ../shared/data/pyprof/.../run_0_config_8_2_...gzip when present (about 70 kernels),
   else the PyProf CSV in examples/profiles; launches drawn with replacement (fixed seed). The
   candidate's launch times are jittered by ±2 % and its longest kernel's are 20 % longer. Both
   are written to a temporary folder, deleted at the end.
2. Times, alternating each round, medians over --repeat, wall and CPU (`time.process_time`):
   (a) pandas end to end: `pd.read_parquet` of both files, per-kernel count / sum / mean, an
       outer merge on the kernel name and the ratio of the means: what a user writes by hand;
   (b) gpuscope end to end: `tui.model.diff.diff_paths` (recognise, read through the registry,
       per-kernel sums, name matching, the comparison, the verdict);
   (c) pandas merge alone, on the launch tables (b) read: per-kernel tables and the merge;
   (d) gpuscope comparison alone on the same tables: `metrics.compare.kernels`.
   Before timing, (c) and (d) must agree on every kernel's mean change to 6 significant digits.
3. Prints the figures and the target: (b) < 2 s. Exits 0 (a report).

A million PyProf launches decode to about 180 MB, over gpuscope's default 64 MB budget for
decoded Parquet data (it would read the first ~356,000 launches of each and say so): the bench
raises the budget (GPUSCOPE_MAX_DECODED_MB, 1024 unless set) so both sides compare every launch,
and prints how many each side read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared/data/pyprof/data/pcm/pyprof_kernels/run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
EXAMPLE = REPO / "examples/profiles/run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
TARGET_S = 2.0


def source_table() -> tuple[pa.Table, str]:
    if SHARED.is_file():
        return pq.read_table(SHARED), str(SHARED.relative_to(REPO.parent))
    frame = pd.read_csv(EXAMPLE)
    frame["Sil(ns)"] = pd.to_numeric(frame["Sil(ns)"], errors="coerce")
    return pa.Table.from_pandas(frame, preserve_index=False), str(EXAMPLE.relative_to(REPO))


def make_profiles(folder: Path, launches: int) -> tuple[Path, Path, str]:
    table, source = source_table()
    rng = np.random.default_rng(0)
    paths = []
    for side, seed in (("base", 1), ("new", 2)):
        picked = table.take(np.random.default_rng(seed).integers(0, table.num_rows, launches)).to_pandas()
        if side == "new":
            longest = picked.groupby("Kernel")["Sil(ns)"].sum().idxmax()
            jitter = rng.uniform(0.98, 1.02, len(picked)) * np.where(picked["Kernel"] == longest, 1.2, 1.0)
            picked["Sil(ns)"] = (picked["Sil(ns)"].astype(float) * jitter).round().astype("int64")
        path = folder / f"run_0_config_1_2_ib_nvprof_2_{side}_ret_0_0.gzip"
        picked.to_parquet(path, compression="gzip", index=False)
        paths.append(path)
    return paths[0], paths[1], source


def pandas_tables(base: pd.DataFrame, new: pd.DataFrame, kernel: str, duration: str) -> pd.DataFrame:
    sides = [f.groupby(kernel, observed=True)[duration].agg(["count", "sum", "mean"]) for f in (base, new)]
    merged = sides[0].merge(sides[1], left_index=True, right_index=True, how="outer", suffixes=("_base", "_new"))
    merged["change"] = merged["mean_new"] / merged["mean_base"] - 1
    return merged


def timed(fn) -> tuple[float, float, object]:  # noqa: ANN001
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO.parent))
    os.environ.setdefault("GPUSCOPE_MAX_DECODED_MB", "1024")  # read before gpuscope is imported
    from gpuscope.metrics.compare import kernels as compare
    from gpuscope.parsers import registry
    from gpuscope.tui.model.diff import diff_paths

    folder = Path(tempfile.mkdtemp(prefix="gpuscope-diff-bench-"))
    try:
        base, new, source = make_profiles(folder, args.launches)
        print(f"profiles: 2 x {args.launches:,} launches from {source} ({base.stat().st_size / 1e6:.1f} + {new.stat().st_size / 1e6:.1f} MB)")
        loaded = [registry.read_profiles([p]).kernels for p in (base, new)]
        print(f"launches read: {len(loaded[0]):,} + {len(loaded[1]):,} (decoded-data budget {os.environ['GPUSCOPE_MAX_DECODED_MB']} MB)")
        variants = {
            "(a) pandas end to end": lambda: pandas_tables(pd.read_parquet(base), pd.read_parquet(new), "Kernel", "Sil(ns)"),
            "(b) gpuscope diff end to end": lambda: diff_paths(base, new),
            "(c) pandas merge alone": lambda: pandas_tables(*loaded, "kernel", "duration_ns"),
            "(d) gpuscope comparison alone": lambda: compare.compare_kernels(compare.per_run(loaded[0]), compare.per_run(loaded[1])),
        }
        merged = variants["(c) pandas merge alone"]()
        ours = variants["(d) gpuscope comparison alone"]().set_index("kernel")
        theirs = merged["change"].astype(float).rename(index=str)
        mismatch = [k for k in theirs.index if not np.isclose(ours.loc[k, "slowdown"], theirs[k], rtol=1e-6, equal_nan=True)]
        if mismatch:
            print(f"DISAGREE on {len(mismatch)} kernels, e.g. {mismatch[:3]}")
            return 2
        report = diff_paths(base, new)
        print(f"agree on {len(theirs)} kernels; verdict: {report.verdict}")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(args.repeat):
            for name, fn in variants.items():
                wall, cpu, _ = timed(fn)
                times[name].append((wall, cpu))
        print(f"\nmedians of {args.repeat} rounds (wall / cpu seconds):")
        for name, got in times.items():
            print(f"  {name:32s} {statistics.median(w for w, _ in got):7.3f} / {statistics.median(c for _, c in got):7.3f}")
        end = statistics.median(w for w, _ in times["(b) gpuscope diff end to end"])
        end_cpu = statistics.median(c for _, c in times["(b) gpuscope diff end to end"])
        hand = statistics.median(c for _, c in times["(a) pandas end to end"])
        print(f"\n(b) / (a) cpu: {end_cpu / hand:.2f}x; target (b) < {TARGET_S:g} s: wall {end:.2f} s, cpu {end_cpu:.2f} s: "
              f"{'met' if end < TARGET_S else 'not met' + (' (cpu met: a loaded machine)' if end_cpu < TARGET_S else '')}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
