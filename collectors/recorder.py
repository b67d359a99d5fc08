"""Provides `Recorder`: samples appended to a recording file in batches (Arrow IPC stream, zstd).

A batch is written when it holds `batch_samples` samples or its first sample is `batch_seconds`
old, whichever comes first, and the file is flushed after each one: a `kill -9` loses at most
the open batch, and what was written stays readable (an IPC stream is a sequence of
self-contained messages; parsers/recording/read.py keeps every whole batch of a cut file). `close()`
writes the open batch and the end-of-stream marker.

Each sample is written whole, as parsers/recording/schema.py lays it out: its GPUs with their
energy counters and activity (n/a stays null), and the node's RAPL counters where the snapshot
carries them (`Snapshot.rapl`; null where they were not read).

The file is created new (an existing file is never overwritten: nothing lost), with the user's
umask and never writable by others. Write errors (disk full, a vanished folder) raise
`RecordingError` with a plain message; the batches written before stay readable.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from typing import BinaryIO, Callable

from gpuscope.metrics.samples import Snapshot

BATCH_SAMPLES = 60
BATCH_SECONDS = 10.0
MODE = 0o664
"""Before the umask; others never get write permission (`& ~0o002` below, whatever the umask)."""


class RecordingError(Exception):
    """A recording could not be created or written; the message says why in plain words."""


def _message(exc: OSError, path: str) -> str:
    if exc.errno == errno.ENOSPC:
        return f"{path}: the disk is full; the samples written before are kept"
    if exc.errno == errno.EEXIST:
        return f"{path} exists: a recording never overwrites a file (choose another name or remove it)"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: cannot write here ({exc.strerror.lower() if exc.strerror else 'permission denied'})"
    if exc.errno == errno.ENOENT:
        return f"{path}: the folder does not exist"
    return f"{path}: {exc.strerror or exc}"


class Recorder:
    """Append `Snapshot`s to a new recording at `path`. Use as a context manager or call
    `close()`; `add()` and `close()` raise `RecordingError` on a write error."""

    def __init__(self, path: str | os.PathLike[str], *, batch_samples: int = BATCH_SAMPLES, batch_seconds: float = BATCH_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = os.fspath(path)
        self.batch_samples = max(1, batch_samples)
        self.batch_seconds = batch_seconds
        self.clock = clock
        self.samples_written = 0
        self.batches_written = 0
        self._pending: list[Snapshot] = []
        self._opened_at = 0.0
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, MODE)
            os.fchmod(fd, os.fstat(fd).st_mode & 0o7775)  # never world-writable, even under umask 000
        except OSError as exc:
            raise RecordingError(_message(exc, self.path)) from None
        self._file: BinaryIO = os.fdopen(fd, "wb")
        # pyarrow (~25 MB, a quarter of a second) loads when a recording starts, on the caller's
        # thread: a watch that never records never loads it
        import pyarrow as pa

        from gpuscope.parsers.recording import schema as recording_schema

        self._to_batch = recording_schema.to_batch
        # one thread: a batch is small, and the thread pool's hand-offs cost more CPU than they save
        options = pa.ipc.IpcWriteOptions(compression="zstd", use_threads=False)
        try:
            self._writer = pa.ipc.new_stream(self._file, recording_schema.SCHEMA, options=options)
            # pyarrow writes the schema with the first batch: an empty one puts it on disk now, so
            # a recording killed before its first batch is still a (sample-less) recording
            self._writer.write_batch(pa.RecordBatch.from_pylist([], schema=recording_schema.SCHEMA))
            self._file.flush()
        except OSError as exc:
            self._file.close()
            raise RecordingError(_message(exc, self.path)) from None
        self._closed = False

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pending(self) -> int:
        """Samples in the open batch (what a `kill -9` now would lose)."""
        return len(self._pending)

    def add(self, snapshot: Snapshot) -> None:
        if self._closed:
            raise RecordingError(f"{self.path}: the recording is closed")
        if not self._pending:
            self._opened_at = self.clock()
        self._pending.append(snapshot)
        if len(self._pending) >= self.batch_samples or self.clock() - self._opened_at >= self.batch_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the open batch now (if any) and hand it to the operating system."""
        if not self._pending:
            return
        batch = self._to_batch(self._pending)
        self._pending = []
        try:
            self._writer.write_batch(batch)
            self._file.flush()
        except OSError as exc:
            raise RecordingError(_message(exc, self.path)) from None
        self.samples_written += batch.num_rows
        self.batches_written += 1

    def close(self) -> None:
        """Write the open batch and the end of the stream; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
            self._writer.close()
            self._file.flush()
        except OSError as exc:
            raise RecordingError(_message(exc, self.path)) from None
        finally:
            self._file.close()


class RecordingSource:
    """A snapshot source that also records what it returns: `watch --record FILE` and the
    watch's `R`. Polls never overlap (the watch screen's poller waits for each); `stop()` may
    come from another thread (the screen's `R`, or its closing) while a poll runs: a lock
    keeps it from closing the file under a write.

    A multi-node source's poll (`collectors.fanout.NodesReading`) records the snapshots new
    since the last poll, every node's, each with its host name.

    A write error stops the recording, not the watch: the first failing poll raises it once as
    `RecordingError` (the screen's status line shows it), later polls only watch."""

    def __init__(self, source: object, recorder: Recorder) -> None:
        self.source = source
        self.recorder: Recorder | None = recorder
        self.problem: str | None = None
        self.path = recorder.path
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """What the screen says about the recording: `recording to FILE (N samples)`, or why it stopped."""
        if self.recorder is None:
            return self.problem or "not recording"
        return f"recording to {self.recorder.path} ({self.samples} samples)"

    @property
    def samples(self) -> int:
        """Samples recorded so far (written, or in the open batch)."""
        return 0 if self.recorder is None else self.recorder.samples_written + self.recorder.pending

    def poll(self) -> Snapshot:
        result = self.source.poll()  # type: ignore[attr-defined]
        with self._lock:
            if self.recorder is not None:
                try:
                    for snapshot in getattr(result, "fresh", (result,)):  # NodesReading: every node's new ones
                        self.recorder.add(snapshot)
                except RecordingError as exc:
                    self.problem = f"recording stopped: {exc}"
                    self.recorder = None
                    raise RecordingError(self.problem) from None
        return result

    def stop(self) -> str:
        """Close the recording (its open batch written), not the source; says what was written."""
        with self._lock:
            recorder, self.recorder = self.recorder, None
        if recorder is None:
            return self.problem or "not recording"
        try:
            recorder.close()
        except RecordingError as exc:
            self.problem = f"recording stopped: {exc}"
            return f"{self.problem} ({recorder.samples_written} samples written to {recorder.path})"
        self.problem = f"recorded {recorder.samples_written} samples to {recorder.path}"
        return self.problem

    def close(self) -> None:
        """Close the recording, then the source."""
        try:
            self.stop()
        finally:
            close = getattr(self.source, "close", None)
            if close is not None:
                close()
