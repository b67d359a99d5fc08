"""Provides the recording reader: a `gpuscope record` file back as a table of samples.

    from gpuscope.parsers.recording import read as recording
    rec = recording.read("job.gsrec")
    rec.samples            # rows; rec.snapshot(i) -> Snapshot; rec.times -> numpy seconds

This is the one place a recording's bytes become data, and everything read goes through the
same checks (`Stream.batches` for the whole file, `Batches` for one batch of it at a time):

- the schema is the one its version declares (schema.schema_problem), so a column missing or
  of another type is said once, before any sample is used;
- every batch's decoded size is budgeted before any is decoded (`budget`: its rows and buffer
  sizes from the message's metadata, without decompressing, all messages at once), so a few
  kilobytes that claim 2^31 rows or a gigabyte string are refused, never allocated;
- decoded batches are validated (offsets, UTF-8), their strings cleaned by
  metrics/safe_text.clean exactly as live ones are at collection, so a process command, host
  or GPU name cannot retitle or clear the terminal on replay or report, and brought to the
  current layout with their scopes checked (schema.current): whatever the file's version,
  what is read has one layout. These checks are made for a run of batches at once (`checked`,
  over a table of them, joined into one array per column): a day at 1 Hz is thousands of
  small batches, and a check per batch cost more than decoding them.

Every whole batch before a problem is kept: a recording cut by `kill -9`, a full disk or a
lost node ends in a partial message, and the reader keeps what came before and says how it
ended. A file that is not a recording (another Arrow stream, a CSV, garbage) gives one clear
finding, never a traceback.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generator, Iterator

import numpy as np
import pyarrow as pa

from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot
from gpuscope.metrics.units import human_bytes
from gpuscope.parsers.files import MAX_DECODED, display_name, open_regular

BATCH_BYTES = MAX_DECODED
"""What one batch may take decoded: the one budget for columnar data (GPUSCOPE_MAX_DECODED_MB).
The recorder's batches (60 samples of a node with a thousand processes) take a few MB; a
crafted one is refused before it is decompressed."""
HELD_BYTES = 8 * MAX_DECODED
"""What `read` may hold decoded in all: a day at 1 Hz without process lists is ~100 MB, so a
multiple of the batch budget, raised with it."""
ARROW_ERRORS = (pa.ArrowException, OSError, ValueError, MemoryError)
"""What pyarrow raises on bytes that are not what they claim (ArrowInvalid, ArrowMemoryError...)."""
UNREADABLE = frozenset({"damaged", "version", "newer-version", "too-large"})
"""Finding kinds of a recording that cannot be read (exit 1), as against a file that is not a
recording at all (`not-recording`, exit 2, a usage error)."""


class Unreadable(Exception):
    """A batch that cannot be used: `kind` is a finding kind of UNREADABLE."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


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
    batches: "Batches | None" = None
    """The file's batches still compressed, each decoded on demand (`read(indexed=True)`)."""

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
        return recording_schema.snapshot_at(self.table, i)


MAGIC = b"\xff\xff\xff\xff"
"""An Arrow IPC stream starts with a continuation marker (then the schema message)."""


def looks_like_recording(head: bytes) -> bool:
    """Whether a file's first bytes can be a recording (an Arrow IPC stream's start); the
    schema's version key decides for sure."""
    return head.startswith(MAGIC) and recording_schema.VERSION_KEY in head


# --- the checks every batch goes through ------------------------------------------------------


def _table(meta: bytes, at: int) -> tuple[int, int]:
    """A flatbuffer table at `at`: (its position, its vtable's position)."""
    return at, at - struct.unpack_from("<i", meta, at)[0]


def _field(meta: bytes, table: tuple[int, int], i: int) -> int | None:
    """Where field `i` of a flatbuffer table is, None when absent."""
    at, vtable = table
    if 4 + 2 * i >= struct.unpack_from("<H", meta, vtable)[0]:
        return None
    offset = struct.unpack_from("<H", meta, vtable + 4 + 2 * i)[0]
    return at + offset if offset else None


def _layout(meta: pa.Buffer) -> tuple[int, int, int, bool]:
    """What a record batch message's metadata says of its body, read without decoding it:
    (rows, where its buffer list starts in `meta`, how many buffers, whether they are
    compressed). Arrow's format, Schema.fbs: Message > RecordBatch > length, buffers
    ((offset, length) pairs), compression. struct.error or ValueError when it is not that.

    Read by hand because pyarrow's public API gives a message's metadata and body as bytes
    only (no row count, no buffer list), and `read_next_batch` allocates and decompresses
    every buffer to the size its prefix claims before anything can be checked: the bound
    must come before that call."""
    header = _field(meta, _table(meta, struct.unpack_from("<I", meta, 0)[0]), 2)  # Message.header
    batch = _table(meta, header + struct.unpack_from("<I", meta, header)[0])
    at = _field(meta, batch, 0)
    rows = struct.unpack_from("<q", meta, at)[0] if at is not None else 0
    at = _field(meta, batch, 2)
    vector = at + struct.unpack_from("<I", meta, at)[0] if at is not None else None
    count = struct.unpack_from("<I", meta, vector)[0] if vector is not None else 0
    if count and not 0 <= vector + 4 <= meta.size - 16 * count:
        raise ValueError("its buffer list runs past its header")
    return rows, (vector or 0) + 4, count, _field(meta, batch, 3) is not None


def budget(messages: list[pa.ipc.Message], starts: list[int], data: pa.Buffer) -> tuple[np.ndarray, np.ndarray, Unreadable | None]:
    """The rows and decoded bytes each record batch message claims, for the messages before
    the first one that claims more than BATCH_BYTES decoded or whose metadata is not a
    batch's; that one's Unreadable, else None. `starts`: where each message's body starts in
    `data` (the stream).

    A message's decoded size is its buffers' lengths, a compressed buffer's being the
    decompressed length its first 8 bytes hold (-1: stored as it is). All messages are
    looked at at once (their buffer lists and prefixes gathered into arrays), before any of
    them is decompressed: a few kilobytes that claim 2^31 rows or a gigabyte string are
    refused, never allocated."""
    rows, lists, counts, packed = [], [], [], []
    layout_problem = None
    for message in messages:
        try:
            r, at, count, compressed = _layout(message.metadata)
        except (struct.error, TypeError, ValueError) as exc:
            layout_problem = Unreadable("damaged", f"its batch header is not Arrow's ({exc})")
            break
        rows.append(r)
        lists.append(memoryview(message.metadata)[at:at + 16 * count])
        counts.append(count)
        packed.append(compressed)
    n = len(rows)
    pairs = np.frombuffer(b"".join(lists), "<i8").reshape(-1, 2)
    offsets, lengths = pairs[:, 0], pairs[:, 1]
    owner = np.repeat(np.arange(n), counts)
    body = np.array([m.body.size for m in messages[:n]], np.int64)
    outside = (offsets < 0) | (lengths < 0) | (offsets > body[owner] - lengths)  # no sum that could overflow
    prefixed = np.flatnonzero(np.array(packed, bool)[owner] & (lengths >= 8) & ~outside)
    at = np.array(starts[:n], np.int64)[owner[prefixed]] + offsets[prefixed]
    prefix = np.frombuffer(data, np.uint8)[at[:, None] + np.arange(8)].copy().view("<i8")[:, 0]
    size = lengths.astype(float)  # sums of float: no wrap, exact within the budget, over it whatever a crafted length says
    size[prefixed] = np.where(prefix == -1, lengths[prefixed] - 8, prefix)
    total = np.bincount(owner, size, minlength=n)
    claimed = np.array(rows, np.int64)
    negative = (claimed < 0) | (np.bincount(owner, size < 0, minlength=n) > 0)
    over = (total > BATCH_BYTES) | (claimed > BATCH_BYTES // 8)  # each row takes at least its 8-byte timestamp
    bad = np.flatnonzero((np.bincount(owner, outside, minlength=n) > 0) | negative | over)
    if not bad.size:
        return claimed, total, layout_problem
    k = int(bad[0])
    said = sum(size[owner == k].tolist())
    if np.any(outside[owner == k]):
        problem = Unreadable("damaged", "a buffer lies outside its batch")
    elif negative[k]:
        problem = Unreadable("damaged", f"a batch claims {rows[k]:,} rows of a negative size")
    else:
        problem = Unreadable("too-large", f"a batch claims {rows[k]:,} row{'' if rows[k] == 1 else 's'} and {human_bytes(said)} decoded, over the "
                                          f"{human_bytes(BATCH_BYTES)} a batch may take (a crafted or damaged file? GPUSCOPE_MAX_DECODED_MB raises it): not read")
    return claimed[:k], total[:k], problem


def _string_data(kind: pa.DataType) -> tuple[int, ...]:
    """Where the string bytes are among `array.buffers()` of an array of type `kind`: its
    buffers, then its children's, depth first; a string array's third buffer holds its bytes."""
    found: list[int] = []

    def walk(kind: pa.DataType, at: int) -> int:
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            found.append(at + 2)
            return at + 3
        at += kind.num_buffers
        children = [kind.value_type] if pa.types.is_list(kind) else [kind.field(i).type for i in range(kind.num_fields)]
        for child in children:
            at = walk(child, at)
        return at

    walk(kind, 0)
    return tuple(found)


def _has_controls(arrays: list[pa.Array], where: list[tuple[int, ...]]) -> bool:
    """Whether any string in `arrays` (nested in lists and structs too) holds a character
    safe_text.clean changes (C0 controls, DEL, C1 controls); `where`: each array's
    `_string_data`. All their string bytes are looked at in one pass, those outside an
    array's slice too (at worst a batch is cleaned for nothing)."""
    data = []
    for array, at in zip(arrays, where):
        buffers = array.buffers()
        data += [buffers[i] for i in at if buffers[i] is not None]
    raw = b"".join(data)
    if not raw:
        return False
    if np.frombuffer(raw, np.uint8).min() < 0x20 or b"\x7f" in raw:
        return True
    if b"\xc2" not in raw:  # C1 controls are U+0080-U+009F: C2 80 to C2 9F in UTF-8
        return False
    after = np.frombuffer(raw, np.uint8)[np.flatnonzero(np.frombuffer(raw, np.uint8)[:-1] == 0xC2) + 1]
    return bool(((after >= 0x80) & (after <= 0x9F)).any())


def clean_strings(array: pa.Array) -> pa.Array | None:
    """`array` with every string in it (nested in lists and structs too) through safe_text.clean,
    or None when none needed it."""
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if not _has_controls([array], [_string_data(kind)]):
            return None
        return pa.array([None if v is None else clean(v) for v in array.to_pylist()], kind)
    if pa.types.is_list(kind):
        values = clean_strings(array.values)
        return None if values is None else pa.ListArray.from_arrays(array.offsets, values, type=kind, mask=array.is_null())
    if pa.types.is_struct(kind):
        children = [array.field(i) for i in range(kind.num_fields)]
        cleaned = [clean_strings(child) for child in children]
        if all(c is None for c in cleaned):
            return None
        return pa.StructArray.from_arrays([c if c is not None else child for c, child in zip(cleaned, children)], fields=list(kind),
                                          mask=array.is_null())
    return None


def checked(table: pa.Table, version: int) -> pa.Table:
    """The checks after decoding, over a run of batches at once (a table of them): valid
    buffers, clean strings, then the current layout with scopes that are scopes (batches of
    a recording of `version`). The run comes back joined, one chunk per column. Unreadable
    when a batch of the run fails one."""
    try:
        table.validate(full=True)  # offsets inside their buffers, UTF-8: what compute kernels (and joining) trust
        table = table.combine_chunks()  # one array per column: what follows, and what reads the run, is one call per column, not per batch
        strings = {i: at for i, f in enumerate(table.schema) if (at := _string_data(f.type))}
        for i, at in strings.items():
            chunks = table.column(i).chunks
            if _has_controls(chunks, [at] * len(chunks)):  # rare: most recordings are clean
                cleaned = [clean_strings(chunk) for chunk in chunks]
                column = pa.chunked_array([c if c is not None else old for c, old in zip(cleaned, chunks)], table.schema.field(i).type)
                table = table.set_column(i, table.schema.field(i), column)
    except ARROW_ERRORS as exc:
        raise Unreadable("damaged", f"a batch is damaged ({exc})") from None
    try:
        return recording_schema.current(table, version)
    except ValueError as exc:
        raise Unreadable("damaged", str(exc)) from None


def _mapped(handle) -> pa.Buffer:  # noqa: ANN001 - an open binary file
    """The whole file, memory-mapped: messages are read in place, nothing is copied."""
    return pa.py_buffer(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))


@dataclass
class _Listing:
    """A stream's record batch messages, still compressed (zero-copy views of the memory map),
    listed before any is decoded, with where each one's body starts in `data`, and what
    ended the list: None for the end marker, else (finding kind, why)."""

    data: pa.Buffer
    schema: pa.Schema
    messages: list[pa.ipc.Message] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    end: tuple[str, str] | None = None


def _listing(handle) -> _Listing:  # noqa: ANN001 - an open binary file
    """The messages of the stream in `handle`. StopIteration or an ARROW_ERRORS when not even
    its schema can be read."""
    data = _mapped(handle)
    source = pa.BufferReader(data)
    reader = pa.ipc.MessageReader.open_stream(source)
    listing = _Listing(data, pa.ipc.read_schema(reader.read_next_message()))
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            return listing
        except ARROW_ERRORS as exc:
            listing.end = ("cut", str(exc))
            return listing
        if message.type != "record batch":
            listing.end = ("damaged", f"a {message.type} message where a batch of samples belongs")
            return listing
        listing.messages.append(message)
        listing.starts.append(source.tell() - message.body.size)  # a message's body is its last bytes, read in place


@dataclass
class Stream:
    """A recording read batch by batch (`batches()`), for what goes through a long one once
    (the report) without holding it: the version, schema, findings and whether it ended
    cleanly are known once the batches are read."""

    path: str | os.PathLike[str]
    processes: bool = True
    columns: tuple[str, ...] | None = None
    """Only these columns are decoded (None: all); the others are not even decompressed."""
    version: int | None = None
    schema: pa.Schema | None = None
    findings: list[Finding] = field(default_factory=list)
    complete: bool = False
    samples: int = 0
    index: "Batches | None" = None
    """The file's batches still compressed, once `batches()` has listed them."""

    def _say(self, kind: str, message: str, severity: str = "error") -> None:
        self.findings.append(Finding(severity, kind, message, display_name(self.path)))

    def _stopped(self, exc: Unreadable) -> None:
        self._say(exc.kind, f"{exc}; the {self.samples:,} samples before are kept" if self.samples else f"{exc}; no sample is read")

    def _checked(self, run: list[pa.RecordBatch], schema: pa.Schema) -> Generator[pa.RecordBatch, None, bool]:
        """The batches of `run` checked (`checked`, once for them all) and joined into one;
        when one fails, the ones before it, then the finding (returns False)."""
        try:
            batches = checked(pa.Table.from_batches(run, schema=schema), self.version).to_batches()
        except Unreadable:
            batches = []
            for batch in run:  # which one: those before it are kept
                try:
                    batches += checked(pa.Table.from_batches([batch]), self.version).to_batches()
                except Unreadable as exc:
                    yield from self._counted(batches)
                    self._stopped(exc)
                    return False
        yield from self._counted(batches)
        return True

    def _counted(self, batches: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            self.samples += batch.num_rows
            yield batch

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Every whole batch, checked; a file that is not a recording, its cut end or a batch
        that fails a check is a finding, and the batches before it are kept. The budget is
        checked for every batch before any is decoded; the other checks are made for a run of
        batches at once (up to BATCH_BYTES of them claimed decoded), yielded joined into one: a
        day of small batches comes as a few dozen."""
        handle, size, problems = open_regular(self.path, display_name(self.path))
        self.findings += problems
        if handle is None:
            return
        with handle:
            if not size:
                self._say("not-recording", "an empty file, not a recording")
                return
            head = handle.read(8192)
            try:
                listing = _listing(handle)
            except (StopIteration, *ARROW_ERRORS) as exc:
                if looks_like_recording(head):  # its schema began: the rest is missing
                    self._say("cut", "a recording cut short before its first batch: no sample in it")
                else:
                    self._say("not-recording", f"not a gpuscope recording (no Arrow stream: {exc})")
                return
        schema = listing.schema
        self.version = recording_schema.version_of(schema)
        problem = recording_schema.schema_problem(schema)
        if problem is not None:
            self._say(*problem)
            return
        wanted = [i for i, name in enumerate(schema.names)
                  if (self.processes or name != "processes") and (self.columns is None or name in self.columns)]
        try:  # a second reader over the same bytes decodes (only the wanted fields) what the listing budgeted
            reader = pa.ipc.open_stream(pa.BufferReader(listing.data), options=pa.ipc.IpcReadOptions(included_fields=wanted, use_threads=False))
        except ARROW_ERRORS as exc:
            self._say("damaged", f"the recording's schema is damaged ({exc})")
            return
        self.schema = recording_schema.current_schema(reader.schema, self.version)
        rows, sizes, stop = budget(listing.messages, listing.starts, listing.data)
        self.index = Batches(listing, rows, self.version)
        at = 0
        while at < len(rows):  # a run of batches, up to BATCH_BYTES decoded, then its checks
            run, held = [], 0.0
            while at < len(rows) and (not run or held + sizes[at] <= BATCH_BYTES):
                try:
                    run.append(reader.read_next_batch())
                except (StopIteration, *ARROW_ERRORS) as exc:
                    stop, rows = Unreadable("damaged", f"a batch is damaged ({exc or 'missing'})"), rows[:at]
                    break
                held += sizes[at]
                at += 1
            if not (yield from self._checked(run, reader.schema)):
                return
        if stop is not None:
            self._stopped(stop)
        elif listing.end is not None:
            kind, why = listing.end
            if kind == "cut":
                self._say("cut", f"the recording ends mid-batch (stopped by kill, a full disk or a lost node?): the {self.samples:,} samples "
                                 f"before are kept ({why})", "warning")
            else:
                self._stopped(Unreadable(kind, why))
        else:
            self.complete = True
            if not self.samples:
                self._say("empty", "the recording holds no samples", "info")


def read(path: str | os.PathLike[str], *, processes: bool = True, columns: tuple[str, ...] | None = None, indexed: bool = False) -> Recording:
    """Every whole batch of a recording, up to HELD_BYTES decoded. `processes=False` leaves
    the process lists out (most of a recording's bytes: they are not even decompressed), so a
    long recording opens at once with its host and GPU history; its snapshots then have no
    processes. `columns`: only those are read (the others are not decompressed either); a
    snapshot then has what they hold, the rest n/a or its default. `indexed`: the recording
    keeps its file's batches (`Recording.batches`, the file mapped until it is closed) for
    decoding any one of them whole later."""
    stream = Stream(path, processes, columns)
    batches, held = [], 0
    for batch in stream.batches():
        held += batch.get_total_buffer_size()  # its buffers whole (nbytes walks every slice: slower, the same here)
        if held > HELD_BYTES:
            stream.findings.append(Finding("warning", "too-large", f"the recording takes over {human_bytes(HELD_BYTES)} decoded: "
                                           f"its first {sum(b.num_rows for b in batches):,} samples are read", display_name(path)))
            stream.complete = False
            break
        batches.append(batch)
    if stream.schema is None:
        return Recording(os.fspath(path), None, stream.version, stream.findings)
    table = pa.Table.from_batches(batches, schema=stream.schema) if batches else stream.schema.empty_table()
    rec = Recording(os.fspath(Path(path)), table, stream.version, stream.findings, stream.complete, stream.index if indexed else None)
    rec.findings += clock_findings(rec.times, display_name(path))
    return rec


class Batches:
    """A recording's record batches still compressed (zero-copy messages of a memory map, as
    `Stream` listed and budgeted them: `read(indexed=True)`), decoded one at a time when asked
    for, every column, through the same checks; the last two are kept. For the replay: the
    sample under the cursor with its processes, without decompressing every batch's process
    lists."""

    KEEP = 2

    def __init__(self, listing: _Listing, rows: np.ndarray, version: int) -> None:
        self._listing: _Listing | None = listing
        self._version = version
        self._cache: dict[int, pa.Table] = {}
        self.rows = rows
        """The rows of each batch that can be decoded (those before the first over the budget)."""
        self._starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, k: int) -> pa.Table | None:
        """Batch `k` decoded and checked, every column, as a table; None when it cannot be."""
        if k in self._cache:
            return self._cache[k]
        if self._listing is None or not 0 <= k < len(self.rows):
            return None
        try:
            table = checked(pa.Table.from_batches([pa.ipc.read_record_batch(self._listing.messages[k], self._listing.schema)]), self._version)
        except (Unreadable, *ARROW_ERRORS):
            return None
        while len(self._cache) >= self.KEEP:
            self._cache.pop(next(iter(self._cache)))
        self._cache[k] = table
        return table

    def row(self, row: int) -> tuple[pa.Table, int] | None:
        """The batch that holds sample `row` of the file, decoded, and the row's place in it;
        None when that batch cannot be decoded or holds other rows than its listing said."""
        k = int(np.searchsorted(self._starts, row, side="right")) - 1
        if not 0 <= k < len(self.rows):
            return None
        batch = self.batch(k)
        if batch is None or batch.num_rows != self.rows[k]:
            return None
        return batch, row - int(self._starts[k])

    def close(self) -> None:
        self._listing, self._cache = None, {}


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
