"""Small files that decode to far more than their size: the fixtures of the decoded-size budget,
written into a test's tmp_path instead of committed.

* `dictionary_bomb`: a ~16 KB Parquet file whose dictionary page holds one 8 KB string that a
  million rows point at: 8 GB once decoded.
* `big_strings`: a ~130 KB Parquet file of 1 MB strings (zstd packs each run to a few hundred bytes):
  about 1.3 GB once decoded, in row groups of `group` rows.
* `nsys_rows`: an nsys SQLite export with millions of kernel rows, made by one INSERT ... SELECT over
  a recursive CTE (10 million take a few seconds and ~320 MB of disk).

Run as a script to write them into a folder: `python tests/hostile_decoded_gen.py OUT_DIR`.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

PYPROF_COLUMNS = ("Kernel", "Sil(ns)", "FLOPs", "Bytes")
"""Column names that make a Parquet file a PyProf kernel table (else it is a generic table)."""


def dictionary_bomb(path: Path, rows: int = 1_000_000, value_bytes: int = 8192, pyprof: bool = False) -> Path:
    """One `value_bytes` string in every row, stored once in a dictionary page."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name, duration, flops, nbytes = PYPROF_COLUMNS if pyprof else ("name", "time", "a", "b")
    indices = pa.array([0] * rows, pa.int32())
    column = pa.DictionaryArray.from_arrays(indices, pa.array(["k" * value_bytes]))
    zeros = pa.array([1] * rows, pa.int64())
    table = pa.table({name: column, duration: zeros, flops: zeros.cast(pa.float64()), nbytes: zeros.cast(pa.float64())})
    # store_schema=False: the file says "string", as any writer's would, not "dictionary"
    pq.write_table(table, path, compression="zstd", store_schema=False)
    return path


def big_strings(path: Path, rows: int = 1300, value_bytes: int = 1 << 20, pyprof: bool = False, group: int = 16) -> Path:
    """`rows` distinct strings of `value_bytes` each, plain-encoded, `group` rows to a row group
    (each is built in memory: `group` x `value_bytes`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    name, duration, flops, nbytes = PYPROF_COLUMNS if pyprof else ("name", "time", "a", "b")
    filler = pa.scalar("s" * (value_bytes - 8))  # joined to each row's number by Arrow, not as Python strings
    writer = None
    try:
        for start in range(0, rows, group):
            count = min(group, rows - start)
            values = pc.binary_join_element_wise(pa.array([f"{start + i:08d}" for i in range(count)]), filler, "")
            ones = pa.array([1] * count, pa.int64())
            table = pa.table({name: values, duration: ones, flops: ones.cast(pa.float64()), nbytes: ones.cast(pa.float64())})
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="zstd", use_dictionary=False, store_schema=False)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    return path


def nsys_rows(path: Path, rows: int = 10_000_000, nvtx: int = 0) -> Path:
    """An nsys export with `rows` kernel launches (and `nvtx` push/pop ranges), in seconds."""
    con = sqlite3.connect(path)
    con.executescript(f"""
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float, 128, 128>(float const*, float*, int)'), (2, 'gemm_kernel'), (3, 'step');
        CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, memoryBandwidth INTEGER);
        INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA A100-SXM4-40GB', 1555200000000);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            streamId INTEGER NOT NULL, correlationId INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
        WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c LIMIT {rows})
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT x * 1000, x * 1000 + 500, 0, 7, x, 1, 2 FROM c;
        CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, text TEXT, textId INTEGER, globalTid INTEGER);
        WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c LIMIT {nvtx})
        INSERT INTO NVTX_EVENTS SELECT x * 1000, x * 1000 + 900, 59, NULL, 3, 4294967296 FROM c;
    """)
    con.commit()
    con.close()
    return path


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for made in (dictionary_bomb(out / "dictionary_bomb.parquet"), big_strings(out / "big_strings.parquet"), nsys_rows(out / "ten_million.sqlite")):
        print(made, made.stat().st_size)
