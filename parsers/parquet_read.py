"""Provides `read_budgeted()`: a Parquet file's rows as an Arrow table, up to a budget of rows and
of decoded bytes, with a finding for what was left unread.

The file's size and the row count in its footer do not bound what it decodes to: a dictionary
page stores a repeated value once (a 7 KB file can hold one 8 KB string a million times: 8 GB),
and zstd packs a run of one byte a thousandfold (a 70 KB file can hold a thousand 1 MB strings).
So the rows are read in order and counted as they decode:

* a row group whose pages, uncompressed, are over what is left of the budget is not read. The
  footer gives that size before anything is decoded, and it bounds every plain value and every
  dictionary the row group holds;
* a column stored with a dictionary is read as indices into it (pyarrow's `read_dictionary`), so
  a batch costs its indices and the one dictionary, whatever its values expand to;
* each batch's decoded size is computed from those indices and the dictionary's value lengths;
  the rows that fit are decoded and kept, and the read stops at the first row that does not.
"""

from __future__ import annotations

from typing import IO, Sequence

import numpy as np

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import MAX_DECODED, MAX_LINES, _human

BATCH_ROWS = 16384
"""Rows decoded at a time: the most the read can hold beyond the budget is one batch's indices."""


def _expanded(metadata, schema) -> list[str]:  # noqa: ANN001 - pyarrow FileMetaData, Schema
    """The text and binary columns that some row group stores with a dictionary page: Arrow would
    expand each index into a copy of its value. (Nested columns are read as written.)"""
    import pyarrow as pa

    variable = {f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)}
    names = set()
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            if chunk.has_dictionary_page and chunk.path_in_schema in variable:
                names.add(chunk.path_in_schema)
    return sorted(names)


def _row_sizes(batch, expanded: set[str]) -> np.ndarray:  # noqa: ANN001 - pyarrow RecordBatch
    """Decoded bytes of each row of `batch`: an expanded column's values by their lengths, every
    other column spread evenly (its size is its stored size, bounded by the row group check)."""
    import pyarrow.compute as pc

    rows = batch.num_rows
    sizes = np.zeros(rows, dtype=np.float64)
    spread = 0
    for name, column in zip(batch.schema.names, batch.columns):
        if name in expanded:
            lengths = pc.binary_length(column.dictionary).take(column.indices).fill_null(0)
            sizes += lengths.to_numpy(zero_copy_only=False) + 4  # + the value's offset
        elif hasattr(column, "indices"):  # dictionary-typed in the file itself: stays a dictionary
            spread += column.indices.nbytes
        else:
            spread += column.nbytes
    return sizes + spread / max(rows, 1)


def _decoded(batch, expanded: set[str], schema):  # noqa: ANN001, ANN202 - pyarrow types
    import pyarrow as pa

    columns = [c.dictionary_decode() if n in expanded else c for n, c in zip(batch.schema.names, batch.columns)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def read_budgeted(source: str | IO[bytes], label: str, max_rows: int | None = None, max_bytes: int | None = None,
                  columns: Sequence[str] | None = None):  # noqa: ANN201
    """(an Arrow table of the first rows, rows in the file, findings). The table is None when not
    one row fits (a finding says why). `columns`: the only columns read, decoded and counted
    (None: all). Raises what pyarrow raises on a file that is not Parquet or is corrupt (callers
    word that); running out of memory is a finding."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    max_rows = MAX_LINES if max_rows is None else max_rows
    max_bytes = MAX_DECODED if max_bytes is None else max_bytes
    with pq.ParquetFile(source) as plain:
        metadata, schema = plain.metadata, plain.schema_arrow
    if columns is not None:
        schema = pa.schema([f for f in schema if f.name in columns], metadata=schema.metadata)
    read = [c for c in range(metadata.num_columns) if metadata.schema.column(c).path.split(".")[0] in schema.names]
    total = metadata.num_rows
    expanded = _expanded(metadata, schema)
    if hasattr(source, "seek"):
        source.seek(0)
    batches, rows, used, over = [], 0, 0.0, ""
    try:
        with pq.ParquetFile(source, read_dictionary=expanded or None) as parquet:
            for group in range(metadata.num_row_groups):
                stored = sum(metadata.row_group(group).column(c).total_uncompressed_size for c in read)
                if stored > max_bytes - used:
                    over = f"row group {group + 1} of {metadata.num_row_groups} holds {_human(stored)} uncompressed"
                    break
                for batch in parquet.iter_batches(batch_size=min(BATCH_ROWS, max_rows - rows + 1), row_groups=[group],
                                                 columns=schema.names, use_threads=False):
                    sizes = np.cumsum(_row_sizes(batch, set(expanded)))
                    fit = min(int(np.searchsorted(sizes, max_bytes - used, side="right")), max_rows - rows)
                    if fit:
                        batches.append(_decoded(batch.slice(0, fit), set(expanded), schema))
                        rows, used = rows + fit, used + float(sizes[fit - 1])
                    if fit < batch.num_rows:
                        over = "rows" if rows == max_rows else "bytes"
                        break
                if over:
                    break
    except MemoryError:  # pyarrow's ArrowMemoryError is one too
        return None, total, [Finding("error", "huge", "not enough memory to read it", label)]
    findings = []
    if rows < total:
        if over == "rows":
            why = f"over the {max_rows:,} row limit (GPUSCOPE_MAX_LINES raises it)"
        elif over == "bytes":
            why = f"decoded size over the {_human(max_bytes)} budget (GPUSCOPE_MAX_DECODED_MB raises it)"
        else:
            left = "what is left of " if rows else ""
            why = f"{over}, over {left}the {_human(max_bytes)} budget for decoded data (GPUSCOPE_MAX_DECODED_MB raises it)"
        if not rows:
            return None, total, [Finding("error", "huge", f"not read: {why}", label)]
        findings.append(Finding("warning", "partial", f"read the first {rows:,} rows of {total:,}: {why}", label, count=total - rows))
    table = pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()
    return table, total, findings
