"""Provides bounded queries of an SQLite file gpuscope did not write (an nsys export): each query
stops after QUERY_SECONDS, and `RowBudget` reads at most MAX_LINES rows over the queries it runs.

An export is a database: a view can compute without end, and a kernel table can hold tens of
millions of rows, each a few hundred bytes once read into a frame. Both must end in a finding,
not a hang or a full memory.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import MAX_LINES


def columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in con.execute(f"PRAGMA table_info({table})")]


def tables(con: sqlite3.Connection) -> tuple[set[str], list[str]]:
    """(the plain tables, the names that are views or virtual tables). nsys writes only plain
    tables; a view or a virtual table can compute without end, so it is never queried."""
    tables, refused = set(), []
    for name, kind, sql in query(con, "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table','view')", "sqlite_master", rows=True):
        if kind == "table" and not str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL"):
            tables.add(name)
        else:
            refused.append(name)
    return tables, refused


QUERY_SECONDS = 20.0
"""One query of an export may run this long: a crafted file cannot hang `kernels`."""
CHUNK_ROWS = 100_000
"""Rows fetched at a time: pandas holds a chunk's rows as Python tuples, not the whole table's."""


class Refused(Exception):
    """A query of table `args[0]` ran over QUERY_SECONDS."""


def query(con: sqlite3.Connection, sql: str, table: str, rows: bool = False) -> Any:
    """The result of one query (a DataFrame, or the rows), interrupted by SQLite's progress
    handler once it runs over QUERY_SECONDS (raises Refused naming the table)."""
    deadline = time.monotonic() + QUERY_SECONDS
    con.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        if rows:
            return con.execute(sql).fetchall()
        return pd.concat(pd.read_sql_query(sql, con, chunksize=CHUNK_ROWS), ignore_index=True)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:  # pandas wraps the sqlite3 error
        cause = exc.__cause__ or exc
        if time.monotonic() > deadline and "interrupt" in str(cause):
            raise Refused(table) from exc
        raise cause if isinstance(cause, sqlite3.Error) else sqlite3.DatabaseError(str(cause)) from exc


class RowBudget:
    """At most MAX_LINES rows over the queries it reads (an export can hold tens of millions: each
    costs a few hundred bytes once read); each query it cuts short is a finding."""

    def __init__(self, label: str, findings: list[Finding]) -> None:
        self.left, self.label, self.findings = MAX_LINES, label, findings

    def read(self, con: sqlite3.Connection, sql: str, table: str) -> pd.DataFrame:
        total = query(con, f"SELECT count(*) FROM ({sql})", table, rows=True)[0][0]
        take = min(total, self.left)
        self.left -= take
        if take < total:
            self.findings.append(Finding("warning", "partial", f"read the first {take:,} rows of {total:,} in {table} (as stored): over the "
                                         f"{MAX_LINES:,} row limit (GPUSCOPE_MAX_LINES raises it)", self.label, count=total - take))
        return query(con, f"{sql} LIMIT {take}", table)
