"""Kernel-efficiency benchmark: the seed notebook's pandas code vs gpuscope vs candidate engines.

    python bench/kernels_bench.py [--rows 10000000] [--repeat 5] [--check]

1. Builds an N-row kernel table from the real PyProf Parquet files
   (../shared/data/pyprof/data/pcm/pyprof_kernels/*.gzip): rows drawn with replacement (fixed
   seed), kernel names kept, durations scaled by random factors in [0.5, 1.5). Written to a temp
   Parquet with the seed's column names (Kernel, Sil(ns), FLOPs, Bytes); its Arrow size
   (pa.Table.nbytes) is the memory yardstick.
2. Times, alternating variant by variant each round, medians over --repeat:
   (a) seed      - the seed notebook's functions (compute_efficiency, flops_per_sec, bandwidth,
                   and the kernel-level ranking cells), copied as written, on a pandas DataFrame;
   (b) gpuscope  - gpuscope.metrics.kernels.efficiency.efficiency + kernel_ranking on the canonical
                   table (what gpuscope.parsers.profilers.pyprof.read returns, built with kernel_table.canonical);
   (c) engines   - per-kernel sums of duration / FLOPs / bytes / launches (rows with duration <= 0
                   excluded, as gpuscope does), everything else derived from the ~70-row result:
                   pyarrow      group_by on the Arrow table (kernel as plain strings);
                   numpy        Arrow dictionary_encode, then np.bincount over the codes;
                   pyarrow-dict / numpy-dict   the same on the table read with the kernel column
                                kept dictionary-encoded (read_dictionary, as Parquet stores it);
                   numpy-parquet  end to end: read the Parquet file (dictionary kept) + bincount;
                   duckdb-parquet / duckdb-arrow  DuckDB SQL over the Parquet file / the in-memory
                                Arrow table (only if `duckdb` imports; skipped with a message).
   Before timing, all variants must agree: the three efficiencies and every kernel's FLOPS
   efficiency (top 20 compared in order) to 6 significant digits.
3. Memory: each variant runs once in a fresh subprocess that loads its input, resets the peak-RSS
   mark (/proc/self/clear_refs 5; getrusage maxrss as fallback), runs, and reports the peak RSS
   growth; printed as a ratio to the Arrow size against the < 2x target.
4. Prints a summary with PASS/FAIL: (b) < 2 s and >= 3x faster than (a); (b) memory < 2x Arrow
   size; fastest engine. Exits 0 (a report); --check exits 1 on any FAIL. Exits 0 with a message
   when ../shared is absent.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "pyprof" / "data" / "pcm" / "pyprof_kernels"
THEORETICAL_FLOPS = 4.29  # in TFLOPS (seed: Tesla K40m FP32)
THEORETICAL_BANDWIDTH = 288  # in GB/s
SEED_COLUMNS = ["Kernel", "Sil(ns)", "FLOPs", "Bytes"]
TOP = 20
SIG = 6


# --- (a) the seed notebook's code, as written (seed 001, In [4]-[6], [12]-[13]) ----------------

def compute_efficiency(df_csv):
#     df_forward = df_csv[df_csv['Direction'] == 'fprop'][['Kernel', 'Sil(ns)', 'FLOPs']]
    df_forward = df_csv[['Kernel', 'Sil(ns)', 'FLOPs']]
    d = df_forward.groupby('Kernel').sum()
    duration_kernels = d.sort_values(by='Sil(ns)', ascending=False)
    no_compute = duration_kernels[duration_kernels['FLOPs'] == 0].sum()['Sil(ns)']
    compute = duration_kernels[duration_kernels['FLOPs'] != 0].sum()['Sil(ns)']
    return compute / (no_compute+compute) * 100 # In %


def flops_per_sec(df_csv):
    total_duration = df_csv['Sil(ns)'].sum() * 1E-9 # in seconds
    total_FLOPs = df_csv['FLOPs'].sum()
    return total_FLOPs / total_duration * 1E-12 # in teraFLOPs per seconds


def bandwidth(df_csv):
    df_csv['bandwidth'] = 1E9 * df_csv['Bytes'] / df_csv['Sil(ns)'] # Bandwidth in bytes/sec
    total_duration = df_csv['Sil(ns)'].sum()
    df_csv['weight'] = df_csv['Sil(ns)'] / total_duration
    df_csv['bandwidth_weighted'] = df_csv['bandwidth'] * df_csv['weight']
    return df_csv['bandwidth_weighted'].sum() * 1E-9 # Convert to GB/s


def seed_kernel_ranking(df):
    """The notebook's kernel-level cells In [12]-[13], wrapped in a function."""
    # df_forward = df[df['Direction'] == 'fprop'][['Kernel', 'Sil(ns)', 'FLOPs']]
    df_forward = df[['Kernel', 'Sil(ns)', 'FLOPs']]
    df_forward_sum = df_forward.groupby('Kernel').sum()
    duration_kernels = df_forward_sum.sort_values(by='Sil(ns)', ascending=False)
    duration_kernels['FLOPs per sec'] = duration_kernels['FLOPs'] / duration_kernels['Sil(ns)'] * 1E9
    duration_kernels['FLOPS efficiency (%)'] = duration_kernels['FLOPs per sec'] * 1E-12 / THEORETICAL_FLOPS * 100
    final = duration_kernels.sort_values(by=['Sil(ns)', 'FLOPS efficiency (%)'], ascending=False)
    return final.sort_values(by='FLOPS efficiency (%)', ascending=False)


def run_seed(df):
    """(a): the notebook's per-file row (In [7]-[8]) plus its kernel ranking."""
    tflops = flops_per_sec(df)
    gbs = bandwidth(df)
    ranking = seed_kernel_ranking(df)
    return {
        "compute_efficiency_pct": compute_efficiency(df),
        "flops_efficiency_pct": tflops / THEORETICAL_FLOPS * 100,
        "bandwidth_efficiency_pct": gbs / THEORETICAL_BANDWIDTH * 100,
        "ranking": dict(zip(ranking.index, ranking["FLOPS efficiency (%)"])),
        "order": list(ranking["FLOPS efficiency (%)"]),
    }


# --- (b) gpuscope ------------------------------------------------------------------------------

def run_gpuscope(table):
    from gpuscope.metrics.kernels.efficiency import efficiency_and_ranking

    eff, ranking = efficiency_and_ranking(table, peak_tflops=THEORETICAL_FLOPS, peak_gbs=THEORETICAL_BANDWIDTH)
    return {
        "compute_efficiency_pct": eff.compute_efficiency_pct,
        "flops_efficiency_pct": eff.flops_efficiency_pct,
        "bandwidth_efficiency_pct": eff.bandwidth_efficiency_pct,
        "ranking": dict(zip(ranking["kernel"], ranking["flops_efficiency_pct"])),
        "order": list(ranking["flops_efficiency_pct"]),
    }


# --- (c) engines: per-kernel sums, then the same derivation ---------------------------------------

def from_sums(kernels, duration, flops, nbytes, launches):
    """Everything the summary and ranking need, from per-kernel sums (arrays, one per kernel).
    Null FLOPs/Bytes were summed as 0 / skipped, as pandas' sum does."""
    duration = np.asarray(duration, dtype="float64")
    flops = np.nan_to_num(np.asarray(flops, dtype="float64"))
    nbytes = np.nan_to_num(np.asarray(nbytes, dtype="float64"))
    total = duration.sum()
    eff = flops / duration * 1e9 * 1e-12 / THEORETICAL_FLOPS * 100
    order = np.lexsort((-duration, -eff))
    kernels = list(kernels)
    return {
        "compute_efficiency_pct": duration[flops != 0].sum() / total * 100,
        "flops_efficiency_pct": flops.sum() / (total * 1e-9) * 1e-12 / THEORETICAL_FLOPS * 100,
        # sum over rows of (1e9*bytes/d) * (d/total) == 1e9 * sum(bytes) / total  (B/s)
        "bandwidth_efficiency_pct": nbytes.sum() / total / THEORETICAL_BANDWIDTH * 100,
        "ranking": dict(zip(kernels, eff)),
        "order": list(eff[order]),
        "launches": dict(zip(kernels, np.asarray(launches).tolist())),
    }


def run_pyarrow(tbl: pa.Table):
    if pa.types.is_dictionary(tbl.schema.field("Kernel").type):
        tbl = tbl.unify_dictionaries()  # one dictionary per Parquet row group otherwise
    tbl = tbl.filter(pc.greater(tbl["Sil(ns)"], 0))
    g = tbl.group_by("Kernel", use_threads=True).aggregate(
        [("Sil(ns)", "sum"), ("FLOPs", "sum"), ("Bytes", "sum"), ("Sil(ns)", "count")])
    return from_sums(g["Kernel"].to_pylist(), g["Sil(ns)_sum"].to_numpy(zero_copy_only=False),
                     g["FLOPs_sum"].to_numpy(zero_copy_only=False), g["Bytes_sum"].to_numpy(zero_copy_only=False),
                     g["Sil(ns)_count"].to_numpy(zero_copy_only=False))


def _np(col: pa.ChunkedArray, fill=None) -> np.ndarray:
    if fill is not None and col.null_count:
        col = pc.fill_null(col, fill)
    return col.to_numpy()


def _kernel_codes(tbl: pa.Table) -> tuple[np.ndarray, list]:
    """Kernel column as (integer codes, names): Arrow's dictionary_encode for a plain string
    column; the existing indices (dictionaries unified) for a dictionary column."""
    if pa.types.is_dictionary(tbl.schema.field("Kernel").type):
        arr = tbl.select(["Kernel"]).unify_dictionaries()["Kernel"].combine_chunks()
    else:
        arr = pc.dictionary_encode(tbl["Kernel"].combine_chunks())
    return arr.indices.to_numpy(zero_copy_only=False), arr.dictionary.to_pylist()


def run_numpy(tbl: pa.Table):
    """Integer codes for the kernel column, then np.bincount over them."""
    idx, names = _kernel_codes(tbl)
    dur = _np(tbl["Sil(ns)"], 0).astype("float64", copy=False)
    flops = _np(tbl["FLOPs"], 0.0)
    nbytes = _np(tbl["Bytes"], 0.0)
    keep = dur > 0
    if not keep.all():
        idx, dur, flops, nbytes = idx[keep], dur[keep], flops[keep], nbytes[keep]
    n = len(names)
    launches = np.bincount(idx, minlength=n)
    used = launches > 0  # a dictionary may hold names no (kept) row uses
    sums = [np.bincount(idx, w, n)[used] for w in (dur, flops, nbytes)]
    return from_sums([k for k, u in zip(names, used) if u], *sums, launches[used])


def read_dict(path: str) -> pa.Table:
    """The Parquet file with the kernel column kept dictionary-encoded (as Parquet stores it)."""
    return pq.read_table(path, columns=SEED_COLUMNS, read_dictionary=["Kernel"])


def run_numpy_parquet(path: str):
    """End to end like duckdb-parquet: read the file (kernel dictionary kept), then bincount."""
    return run_numpy(read_dict(path))


DUCK_SQL = """
SELECT Kernel AS kernel, sum("Sil(ns)")::DOUBLE AS duration, coalesce(sum(FLOPs), 0) AS flops,
       coalesce(sum(Bytes), 0) AS nbytes, count(*) AS launches
FROM {source} WHERE "Sil(ns)" > 0 GROUP BY Kernel
"""


def duckdb_available() -> str | None:
    try:
        import duckdb  # noqa: F401
    except ImportError as exc:
        return f"duckdb not importable ({exc}); pip install duckdb to include it"
    return None


def run_duckdb_parquet(path: str):
    import duckdb

    con = duckdb.connect()
    src = "read_parquet('" + str(path).replace("'", "''") + "')"
    res = con.execute(DUCK_SQL.format(source=src)).fetchnumpy()
    con.close()
    return from_sums(res["kernel"], res["duration"], res["flops"], res["nbytes"], res["launches"])


def run_duckdb_arrow(tbl: pa.Table):
    import duckdb

    con = duckdb.connect()
    con.register("kernels", tbl)
    res = con.execute(DUCK_SQL.format(source="kernels")).fetchnumpy()
    con.close()
    return from_sums(res["kernel"], res["duration"], res["flops"], res["nbytes"], res["launches"])


# --- data ----------------------------------------------------------------------------------------

def real_files() -> list[Path]:
    return sorted(DATA.glob("*.gzip")) if DATA.is_dir() else []


def build_table(rows: int, seed: int = 0, files: list[Path] | None = None) -> pa.Table:
    """`rows` rows drawn (with replacement, fixed seed) from the real files' Kernel/Sil(ns)/FLOPs/
    Bytes; durations scaled by a random factor in [0.5, 1.5), rounded, at least 1 ns."""
    files = files if files is not None else real_files()
    base = pa.concat_tables([pq.read_table(f, columns=SEED_COLUMNS) for f in files]).combine_chunks()
    rng = np.random.default_rng(seed)
    take = rng.integers(0, base.num_rows, size=rows)
    out = base.take(pa.array(take))
    dur = out["Sil(ns)"].to_numpy(zero_copy_only=False).astype("float64")
    dur = np.maximum(np.rint(dur * rng.uniform(0.5, 1.5, size=rows)), 1).astype("int64")
    out = out.set_column(out.schema.get_field_index("Sil(ns)"), "Sil(ns)", pa.array(dur))
    return out.combine_chunks()


def seed_frame(tbl: pa.Table) -> pd.DataFrame:
    """The DataFrame the seed's pd.read_parquet would give (its column names)."""
    return tbl.to_pandas()


def canonical_frame(tbl: pa.Table) -> pd.DataFrame:
    """The canonical kernel table gpuscope.parsers.profilers.pyprof.read builds (same typing path)."""
    from gpuscope.parsers.profilers.kernel_table import canonical

    frame = tbl.to_pandas().rename(columns={"Kernel": "kernel", "Sil(ns)": "duration_ns", "FLOPs": "flops", "Bytes": "bytes"})
    return canonical(frame, "bench")


# --- checks --------------------------------------------------------------------------------------

def sig(x, digits=SIG):
    if x is None or not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits - 1}e}")


def disagreements(results: dict[str, dict], reference: str = "seed") -> list[str]:
    """Where a variant differs from the reference at 6 significant digits."""
    ref = results[reference]
    problems = []
    for name, res in results.items():
        if name == reference:
            continue
        for key in ("compute_efficiency_pct", "flops_efficiency_pct", "bandwidth_efficiency_pct"):
            if sig(res[key]) != sig(ref[key]):
                problems.append(f"{name}: {key} {res[key]!r} != seed {ref[key]!r}")
        top_ref = [sig(v) for v in ref["order"][:TOP]]
        top = [sig(v) for v in res["order"][:TOP]]
        if top != top_ref:
            problems.append(f"{name}: top-{TOP} FLOPS efficiencies differ: {top} vs {top_ref}")
        if set(res["ranking"]) != set(ref["ranking"]):
            problems.append(f"{name}: kernel sets differ ({len(res['ranking'])} vs {len(ref['ranking'])})")
        else:
            bad = [k for k in ref["ranking"] if sig(float(res["ranking"][k])) != sig(float(ref["ranking"][k]))]
            if bad:
                problems.append(f"{name}: per-kernel FLOPS efficiency differs for {len(bad)} kernel(s), e.g. {bad[0]!r}")
    return problems


# --- timing and memory ---------------------------------------------------------------------------

def variants(tbl: pa.Table, path: str, with_duckdb: bool) -> dict:
    """name -> (callable, prepared input). Inputs are built once, outside the timings."""
    out = {
        "seed": (run_seed, seed_frame(tbl)),
        "gpuscope": (run_gpuscope, canonical_frame(tbl)),
        "pyarrow": (run_pyarrow, tbl),
        "numpy": (run_numpy, tbl),
        "pyarrow-dict": (run_pyarrow, read_dict(path)),
        "numpy-dict": (run_numpy, read_dict(path)),
        "numpy-parquet": (run_numpy_parquet, path),
    }
    if with_duckdb:
        out["duckdb-parquet"] = (run_duckdb_parquet, path)
        out["duckdb-arrow"] = (run_duckdb_arrow, tbl)
    return out


def time_alternating(vs: dict, repeat: int) -> dict[str, list[float]]:
    times = {name: [] for name in vs}
    names = list(vs)
    for r in range(repeat):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            fn, arg = vs[name]
            gc.collect()
            t0 = time.perf_counter()
            fn(arg)
            times[name].append(time.perf_counter() - t0)
    return times


def _rss_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def measure_child(name: str, path: str) -> dict:
    """In this (fresh) process: load the variant's input, reset the peak mark, run once."""
    tbl = pq.read_table(path)
    prepared = {"seed": lambda: seed_frame(tbl), "gpuscope": lambda: canonical_frame(tbl),
                "pyarrow": lambda: tbl, "numpy": lambda: tbl, "duckdb-arrow": lambda: tbl,
                "pyarrow-dict": lambda: read_dict(path), "numpy-dict": lambda: read_dict(path),
                "duckdb-parquet": lambda: path, "numpy-parquet": lambda: path}[name]()
    fn = {"seed": run_seed, "gpuscope": run_gpuscope, "pyarrow": run_pyarrow, "numpy": run_numpy,
          "pyarrow-dict": run_pyarrow, "numpy-dict": run_numpy, "numpy-parquet": run_numpy_parquet,
          "duckdb-arrow": run_duckdb_arrow, "duckdb-parquet": run_duckdb_parquet}[name]
    if name == "gpuscope":
        import gpuscope.metrics.kernels.efficiency  # noqa: F401  (imports are not the computation's memory)
    if name.startswith("duckdb"):
        import duckdb  # noqa: F401
    if name.endswith("-parquet") or name.endswith("-dict"):
        del tbl  # their input is the file / the dictionary-typed table, not the plain one
    gc.collect()
    before = _rss_kb("VmRSS")
    method = "VmHWM after clear_refs"
    try:
        Path("/proc/self/clear_refs").write_text("5")
        hwm_reset = _rss_kb("VmHWM")
    except OSError:
        hwm_reset = None
    if hwm_reset is None or before is None or hwm_reset > before * 1.05 + 1024:
        method = "getrusage maxrss (peak may include loading)"
    t0 = time.perf_counter()
    fn(prepared)
    seconds = time.perf_counter() - t0
    peak = _rss_kb("VmHWM") if method.startswith("VmHWM") else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"name": name, "rss_before_kb": before, "peak_kb": peak, "growth_bytes": max(0, peak - (before or 0)) * 1024,
            "seconds": seconds, "method": method}


def measure(name: str, path: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", name, path], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        return {"name": name, "error": proc.stderr.strip()[-400:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- main ----------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="exit 1 when a target FAILs")
    ap.add_argument("--no-memory", action="store_true", help="skip the per-variant memory subprocesses")
    ap.add_argument("--child", nargs=2, metavar=("VARIANT", "PARQUET"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure_child(*args.child)))
        return 0

    files = real_files()
    if not files:
        print(f"SKIP: real PyProf Parquet files not found under {DATA}")
        return 0
    duck_msg = duckdb_available()
    if duck_msg:
        print(f"note: DuckDB variants skipped: {duck_msg}")

    t0 = time.perf_counter()
    tbl = build_table(args.rows, args.seed, files)
    arrow_bytes = tbl.nbytes
    with tempfile.TemporaryDirectory(prefix="kernels_bench_") as tmp:
        path = str(Path(tmp) / "kernels.parquet")
        pq.write_table(tbl, path)
        print(f"table: {tbl.num_rows:,} rows from {len(files)} real file(s), "
              f"{pc.count_distinct(tbl['Kernel']).as_py()} kernels; Arrow size {arrow_bytes / 2**20:,.1f} MiB; "
              f"Parquet {Path(path).stat().st_size / 2**20:,.1f} MiB (built in {time.perf_counter() - t0:.1f} s)")

        vs = variants(tbl, path, duck_msg is None)
        results = {name: fn(arg) for name, (fn, arg) in vs.items()}
        problems = disagreements(results)
        agree = not problems
        ref = results["seed"]
        print(f"agreement ({SIG} significant digits, all kernels + top {TOP} in order): "
              + ("all variants agree" if agree else "DISAGREE"))
        for p in problems:
            print("  " + p)
        print(f"  compute eff {sig(ref['compute_efficiency_pct'])} %, FLOPS eff {sig(ref['flops_efficiency_pct'])} %, "
              f"bandwidth eff {sig(ref['bandwidth_efficiency_pct'])} %")

        times = time_alternating(vs, args.repeat)
        med = {name: statistics.median(ts) for name, ts in times.items()}
        print(f"\ntimings (median of {args.repeat}, alternating order; seconds):")
        for name, ts in times.items():
            print(f"  {name:15s} {med[name]:7.3f}   (min {min(ts):.3f}, max {max(ts):.3f})   "
                  f"{med['seed'] / med[name]:6.2f}x vs seed")

        mem = {}
        if not args.no_memory:
            del vs, results
            gc.collect()
            print("\nmemory (fresh subprocess per variant; peak RSS growth while running, input already loaded):")
            for name in times:
                m = measure(name, path)
                mem[name] = m
                if "error" in m:
                    print(f"  {name:15s} ERROR {m['error']}")
                else:
                    print(f"  {name:15s} {m['growth_bytes'] / 2**20:8.1f} MiB = {m['growth_bytes'] / arrow_bytes:5.2f}x Arrow size"
                          f"   [{m['method']}]")

    b, a = med["gpuscope"], med["seed"]
    checks = [
        ("variants agree", agree, ""),
        ("gpuscope < 2 s", b < 2.0, f"{b:.3f} s"),
        ("gpuscope >= 3x faster than seed", a / b >= 3.0, f"{a / b:.2f}x ({a:.3f} s vs {b:.3f} s)"),
    ]
    if "gpuscope" in mem and "growth_bytes" in mem["gpuscope"]:
        ratio = mem["gpuscope"]["growth_bytes"] / arrow_bytes
        checks.append(("gpuscope memory < 2x Arrow size", ratio < 2.0, f"{ratio:.2f}x of {arrow_bytes / 2**20:,.1f} MiB"))
    engines = {n: t for n, t in med.items() if n not in ("seed", "gpuscope")}
    fastest = min(engines, key=engines.get)
    print(f"\nsummary ({args.rows:,} rows):")
    for label, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {label:34s} {detail}")
    print(f"  fastest engine: {fastest} {engines[fastest]:.3f} s "
          f"({a / engines[fastest]:.1f}x vs seed; " + ", ".join(f"{n} {t:.3f} s" for n, t in sorted(engines.items(), key=lambda kv: kv[1])) + ")")
    failed = not all(ok for _, ok, _ in checks)
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
