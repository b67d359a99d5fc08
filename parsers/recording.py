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
from typing import Iterator

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


@dataclass
class Stream:
    """A recording read batch by batch (`batches()`), for what goes through a long one once
    (the report) without holding it: the version, schema, findings and whether it ended
    cleanly are known once the batches are read."""

    path: str | os.PathLike[str]
    processes: bool = True
    version: int | None = None
    schema: pa.Schema | None = None
    findings: list[Finding] = field(default_factory=list)
    complete: bool = False
    samples: int = 0

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Every whole batch; a file that is not a recording, or its cut end, is a finding."""
        label = display_name(self.path)
        handle, size, problems = open_regular(self.path, label)
        self.findings += problems
        if handle is None:
            return
        with handle:
            if not size:
                self.findings.append(Finding("error", "not-recording", "an empty file, not a recording", label))
                return
            try:
                reader = pa.ipc.open_stream(handle)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as exc:
                handle.seek(0)
                if looks_like_recording(handle.read(8192)):  # its schema began: the rest is missing
                    self.findings.append(Finding("error", "cut", "a recording cut short before its first batch: no sample in it", label))
                else:
                    self.findings.append(Finding("error", "not-recording", f"not a gpuscope recording (no Arrow stream: {exc})", label))
                return
            version = recording_schema.version_of(reader.schema)
            if version is None:
                self.findings.append(Finding("error", "not-recording", "an Arrow stream, but not a gpuscope recording (no version in its schema)", label))
                return
            self.version = version
            if version not in recording_schema.READERS:
                self.findings.append(Finding("error", "newer-version", f"recording version {version}: this gpuscope reads versions up to {max(recording_schema.READERS)}; update gpuscope", label))
                return
            if not self.processes and "processes" in reader.schema.names:  # open again, reading every field but that one
                wanted = [i for i, name in enumerate(reader.schema.names) if name != "processes"]
                handle.seek(0)
                reader = pa.ipc.open_stream(handle, options=pa.ipc.IpcReadOptions(included_fields=wanted))
            self.schema = reader.schema
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    self.complete = True
                    break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as exc:
                    self.findings.append(Finding("warning", "cut", f"the recording ends mid-batch (stopped by kill, a full disk or a lost node?): the {self.samples} samples before are kept ({exc})", label))
                    break
                self.samples += batch.num_rows
                yield batch
        if self.complete and not self.samples:
            self.findings.append(Finding("info", "empty", "the recording holds no samples", label))


def read(path: str | os.PathLike[str], *, processes: bool = True) -> Recording:
    """Every whole batch of a recording. `processes=False` leaves the process lists out (most
    of a recording's bytes: they are not even decompressed), so a long recording opens at once
    with its host and GPU history; its snapshots then have no processes."""
    stream = Stream(path, processes)
    batches = list(stream.batches())
    if stream.schema is None:
        return Recording(os.fspath(path), None, stream.version, stream.findings)
    table = pa.Table.from_batches(batches, schema=stream.schema) if batches else stream.schema.empty_table()
    rec = Recording(os.fspath(Path(path)), table, stream.version, stream.findings, stream.complete)
    rec.findings += clock_findings(rec.times, display_name(path))
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
