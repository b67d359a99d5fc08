"""Provides the recording reader: a `gpuscope record` file back as a table of samples.

    from gpuscope.parsers import recording
    rec = recording.read("job.gsrec")
    rec.samples            # rows; rec.snapshot(i) -> Snapshot; rec.times -> numpy seconds

Every whole batch is kept: a recording cut by `kill -9`, a full disk or a lost node ends in a
partial message, and the reader keeps what came before and says how it ended. Any version the
schema module knows is read (metrics/recording_schema.READERS). A file that is not a recording
(another Arrow stream, a CSV, garbage) gives one clear finding, never a traceback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from gpuscope.metrics import recording_schema
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.samples import Snapshot
from gpuscope.parsers.textfile import display_name, open_regular

MAGIC = b"\xff\xff\xff\xff"
"""An Arrow IPC stream starts with a continuation marker (then the schema message)."""


@dataclass
class Recording:
    """The samples of a recording as an Arrow table (one row per sample), its version, and
    the findings (cut short, unknown version...). Empty table when nothing could be read."""

    path: str
    table: pa.Table | None
    version: int | None
    findings: list[Finding] = field(default_factory=list)
    complete: bool = False
    """The stream ended with its end marker (a clean stop)."""

    @property
    def samples(self) -> int:
        return self.table.num_rows if self.table is not None else 0

    @property
    def times(self) -> np.ndarray:
        """Each sample's timestamp (seconds since the epoch)."""
        if self.table is None:
            return np.array([], dtype=float)
        return self.table.column("timestamp").to_numpy(zero_copy_only=False)

    def snapshot(self, i: int) -> Snapshot:
        if self.table is None or not 0 <= i < self.samples:
            raise IndexError(i)
        return recording_schema.snapshot_at(self.table, i, self.version or recording_schema.VERSION)


def looks_like_recording(head: bytes) -> bool:
    """Whether a file's first bytes can be a recording (an Arrow IPC stream's start); the
    schema's version key decides for sure."""
    return head.startswith(MAGIC) and recording_schema.VERSION_KEY in head


def read(path: str | os.PathLike[str], *, processes: bool = True) -> Recording:
    """Every whole batch of a recording. `processes=False` leaves the process lists out (most
    of a recording's bytes: they are not even decompressed), so a long recording opens at once
    with its host and GPU history; its snapshots then have no processes."""
    label = display_name(path)
    handle, _size, problems = open_regular(path, label)
    if handle is None:
        return Recording(os.fspath(path), None, None, problems)
    with handle:
        try:
            reader = pa.ipc.open_stream(handle)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as exc:
            return Recording(os.fspath(path), None, None, [Finding("error", "not-recording", f"not a gpuscope recording (no Arrow stream: {exc})", label)])
        version = recording_schema.version_of(reader.schema)
        if version is None:
            return Recording(os.fspath(path), None, None, [Finding("error", "not-recording", "an Arrow stream, but not a gpuscope recording (no version in its schema)", label)])
        if version not in recording_schema.READERS:
            return Recording(os.fspath(path), None, version, [Finding("error", "newer-version", f"recording version {version}: this gpuscope reads versions up to {max(recording_schema.READERS)}; update gpuscope", label)])
        if not processes and "processes" in reader.schema.names:  # open again, reading every field but that one
            wanted = [i for i, name in enumerate(reader.schema.names) if name != "processes"]
            handle.seek(0)
            reader = pa.ipc.open_stream(handle, options=pa.ipc.IpcReadOptions(included_fields=wanted))
        batches, findings, complete = [], [], False
        while True:
            try:
                batches.append(reader.read_next_batch())
            except StopIteration:
                complete = True
                break
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as exc:
                kept = sum(b.num_rows for b in batches)
                findings.append(Finding("warning", "cut", f"the recording ends mid-batch (stopped by kill, a full disk or a lost node?): the {kept} samples before are kept ({exc})", label))
                break
    table = pa.Table.from_batches(batches, schema=reader.schema) if batches else reader.schema.empty_table()
    if complete and not batches:
        findings.append(Finding("info", "empty", "the recording holds no samples", label))
    rec = Recording(os.fspath(Path(path)), table, version, findings, complete)
    findings += clock_findings(rec.times, label)
    return rec


def clock_findings(times: np.ndarray, label: str = "") -> list[Finding]:
    """A node's clock set back (NTP stepping it, an admin) while recording: the samples keep
    the time the clock said, so the timeline folds back there; say where and by how much.
    (Sampling itself is paced and batched by the monotonic clock, so it goes on unharmed.)"""
    steps = np.diff(times)
    back = np.flatnonzero(steps < 0)
    if not back.size:
        return []
    first = int(back[0])
    more = f" ({back.size} times in all)" if back.size > 1 else ""
    return [Finding("warning", "clock-back", f"the node's clock went back {-steps[first]:,.1f} s after sample {first + 1:,} of {times.size:,}{more}: "
                    "times are as the clock said, so the timeline goes back there", label)]
