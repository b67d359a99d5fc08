"""Provides what every reader does with a file: the head recognition looks at (`read_head`),
the one folder walker (`walk`), limits, and `read_text()`: a result file as text, or in one
finding why not.

Every parser starts here so binary, empty, huge, compressed, unreadable and non-UTF-8 files
get the same clear messages everywhere. Gzip files are opened transparently because result
folders are often compressed after a study.

Hostile input is handled here, once: only regular files are opened (a FIFO, a
device or a socket is skipped with the reason, checked before opening and again on what was
opened, which is opened non-blocking), sizes are checked before anything is allocated, and gzip
is decompressed through a bounded stream, so a bomb stops at the limit instead of filling memory.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import errno
import functools
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean

MB = 1024 * 1024


def _env_limit(name: str, default: int) -> int:
    """A positive whole number from the environment; anything else (`abc`, `0`, `-1`) keeps the
    default rather than failing every command at import."""
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


MAX_BYTES = _env_limit("GPUSCOPE_MAX_FILE_MB", 64) * MB
"""Files larger than this (after decompression) are refused, before anything of that size is
allocated: parsing text costs several times its size, and a MAGMA or kernels read must stay
under 1 GB of memory. A MAGMA tree gets the same budget for all its files together."""
MAX_LINES = _env_limit("GPUSCOPE_MAX_LINES", 1_000_000)
"""Text results with more lines than this are refused before they are parsed: parsing costs
memory per line (a line of a few bytes becomes a row of a few hundred), so this, not the size in
bytes, is what keeps a read under 1 GB. A MAGMA tree gets the same budget for all its files."""
MAX_DECODED = _env_limit("GPUSCOPE_MAX_DECODED_MB", 64) * MB
"""Columnar files (Parquet, Arrow) are read up to this many bytes of decoded data, whatever their
size on disk: a dictionary page or a compressed run stores a repeated value once, so a file of a
few KB can decode to gigabytes. What is over it is left unread, and a finding says so. The same
size as MAX_BYTES, for the same reason: what reads the table (the table view's text and numbers,
the kernel tables) costs several times the decoded size."""
SNIFF_BYTES = 64 * 1024
"""How much of a file a full read tests for NUL bytes (binary), and what `head` shows by default."""
HEAD_BYTES = 8192
"""Recognition reads at most this much of a file (`read_head`): every kind's `match` and
`describe` see the same head, so the browser and a study command never tell a file apart."""
CHUNK = 1 * MB
GZIP_MAGIC = b"\x1f\x8b"
_NOT_REGULAR = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def display_name(path: str | os.PathLike[str]) -> str:
    """A path as a label: undecodable bytes in the name (os.walk keeps them as surrogates, which
    no strict encoder accepts) become U+FFFD, so printing or JSON never fails on a name."""
    return os.fsencode(path).decode("utf-8", "replace")


def looks_binary(head: bytes) -> bool:
    """NUL bytes do not occur in text results (the same rule git and grep use)."""
    return b"\x00" in head


def _os_error(exc: OSError, label: str) -> Finding:
    return Finding("error", "unreadable", f"cannot read: {exc.strerror or exc}", label)


def _not_regular(mode: int, label: str) -> Finding | None:
    if stat.S_ISREG(mode):
        return None
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
    if what == "a folder":
        return Finding("error", "unreadable", "is a folder, not a file", label)
    return Finding("warning", "not-a-file", f"skipped: {what}, not a regular file", label)


def check_regular(path: str | os.PathLike[str], label: str) -> Finding | None:
    """None for a regular file (symlinks followed), else the finding that says why it is skipped."""
    try:
        return _not_regular(os.stat(path).st_mode, label)
    except OSError as exc:
        return _os_error(exc, label)


def _open_fd(path: str | os.PathLike[str], label: str) -> tuple[int | None, int, list[Finding]]:
    """(descriptor, size) of a regular file, or (None, 0, one finding). Never blocks: the type
    is checked before opening, the open is non-blocking (a FIFO swapped in meanwhile does not
    wait for a writer), and what was opened is checked again."""
    problem = check_regular(path, label)
    if problem is not None:
        return None, 0, [problem]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return None, 0, [_os_error(exc, label)]
    info = os.fstat(fd)
    problem = _not_regular(info.st_mode, label)
    if problem is not None:
        os.close(fd)
        return None, 0, [problem]
    return fd, info.st_size, []


def open_regular(path: str | os.PathLike[str], label: str) -> tuple[BinaryIO | None, int, list[Finding]]:
    """(binary handle, size) of a regular file, or (None, 0, one finding), opened as `_open_fd` does."""
    fd, size, findings = _open_fd(path, label)
    return (None, 0, findings) if fd is None else (os.fdopen(fd, "rb"), size, [])


def _read_bounded(stream: BinaryIO, limit: int) -> bytes | None:
    """Everything `stream` gives, or None as soon as it gives more than `limit` bytes."""
    out = io.BytesIO()  # grows in place; getvalue() hands over its buffer without a copy
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return out.getvalue()
        if out.tell() + len(chunk) > limit:
            return None
        out.write(chunk)


def head(path: str | os.PathLike[str], label: str, size: int = SNIFF_BYTES) -> tuple[bytes | None, list[Finding]]:
    """The first `size` bytes (decompressed for gzip), or None and why the file cannot be opened."""
    handle, _, findings = open_regular(path, label)
    if handle is None:
        return None, findings
    try:
        with handle:
            data = handle.read(size)
            if data[:2] == GZIP_MAGIC:
                handle.seek(0)
                try:
                    return gzip.GzipFile(fileobj=handle).read(size), []
                except (OSError, EOFError, zlib.error):
                    return data, []
            return data, []
    except OSError as exc:
        return None, [_os_error(exc, label)]


def read_raw(path: str | os.PathLike[str], label: str, max_bytes: int = MAX_BYTES) -> tuple[bytes | None, list[Finding]]:
    """The file's bytes, gunzipped through a bounded stream; None and one finding when it is not
    a regular file, cannot be read, is corrupt gzip, or is (or decompresses to) over `max_bytes`."""
    fd, size, findings = _open_fd(path, label)
    if fd is None:
        return None, findings

    def limit() -> str:
        return f"{_human(max_bytes)} limit for a result file (GPUSCOPE_MAX_FILE_MB raises it)"

    if size > max_bytes:
        os.close(fd)
        return None, [Finding("error", "huge", f"file is {_human(size)}, over the {limit()}", label)]
    try:
        # The size stat gave, plus one, in one read on the descriptor (no buffered file object
        # per file: most result files are read whole by this one call). Gzip, or a read that
        # did not end at that size (the file grew, shrank or gave less at once), goes on
        # through a bounded stream.
        data = os.read(fd, size + 1)
        if len(data) == size and data[:2] != GZIP_MAGIC:
            return data, []
        with os.fdopen(fd, "rb", closefd=False) as handle:
            if data[:2] == GZIP_MAGIC:
                handle.seek(0)
                try:
                    data = _read_bounded(gzip.GzipFile(fileobj=handle), max_bytes)
                except (OSError, EOFError, zlib.error) as exc:
                    return None, [Finding("error", "corrupt", f"gzip file is corrupt or truncated ({exc})", label)]
                if data is None:
                    return None, [Finding("error", "huge", f"decompresses to over the {limit()}", label)]
                return data, []
            rest = _read_bounded(handle, max_bytes - len(data))
            if rest is None:
                return None, [Finding("error", "huge", f"grew while read to over the {limit()}", label)]
            return data + rest, []
    except OSError as exc:
        return None, [_os_error(exc, label)]
    except MemoryError:
        return None, [Finding("error", "huge", "not enough memory to read it", label)]
    finally:
        os.close(fd)


def read_bytes(path: Path, label: str, max_bytes: int = MAX_BYTES, max_lines: int | None = MAX_LINES) -> tuple[bytes | None, list[Finding]]:
    """Raw (decompressed) bytes of a text result, or None and one error finding. `max_lines`
    None: lines are not counted here (a caller that counts them itself checks the limit)."""
    data, findings = read_raw(path, label, max_bytes)
    if data is None:
        return None, findings
    if not data or data.isspace():  # `not data.strip()` without copying the file
        return None, [Finding("error", "empty", "file is empty", label)]
    if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:  # looks_binary(data[:SNIFF_BYTES]), no copy
        return None, [Finding("error", "binary", "binary file, not a text result", label)]
    if max_lines is not None and (lines := data.count(b"\n")) > max_lines:
        return None, [too_many_lines(lines, max_lines, label)]
    return data, []


def too_many_lines(lines: int, max_lines: int, label: str, what: str = "lines") -> Finding:
    return Finding("error", "huge", f"has {lines:,} {what}, over the {max_lines:,} limit for a result file (GPUSCOPE_MAX_LINES raises it)", label)


def decode(data: bytes, label: str) -> tuple[str, list[Finding]]:
    """UTF-8 text; other encodings are decoded with replacement and reported once."""
    if data.isascii():  # the common case: no UTF-8 validation needed (ASCII is UTF-8)
        return data.decode("ascii"), []
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        return text, [Finding("warning", "encoding", f"not valid UTF-8 (first bad byte at line {line}); undecodable bytes shown as \ufffd", label, line)]


def read_text(path: Path, label: str | None = None, max_bytes: int = MAX_BYTES) -> tuple[str | None, list[Finding]]:
    """Text of `path` (None when unusable) and the findings that explain any problem."""
    label = label if label is not None else display_name(path)
    data, findings = read_bytes(path, label, max_bytes)
    if data is None:
        return None, findings
    text, more = decode(data, label)
    return text, findings + more


# ============================================================== the head recognition reads
Head = bytes | str


def _problem(kind: str, message: str, label: str, severity: str = "error") -> Finding:
    return Finding(severity, kind, message, label)  # type: ignore[arg-type]


def _os_problem(exc: OSError, label: str) -> Finding:
    if exc.errno == errno.ELOOP:
        return _problem("symlink-loop", "symbolic link loop: the link points (through others) back at itself", label)
    if exc.errno == errno.ENOENT:
        return _problem("missing", "no such file (a dangling symbolic link, or it was removed)", label)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _problem("unreadable", "permission denied", label)
    if exc.errno == errno.ENAMETOOLONG:
        return _problem("unreadable", "name too long to open", label)
    return _problem("unreadable", f"cannot read: {exc.strerror or exc}", label)


def read_head(path: Path, label: str) -> tuple[bytes | None, int, bool, Finding | None]:
    """(head bytes, size, gzip?, problem): one stat, one open (non-blocking, so a FIFO swapped
    in never waits for a writer) and one read of at most HEAD_BYTES; a gzip file's head is
    inflated from those bytes only."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, 0, False, _os_problem(exc, label)
    if stat.S_ISDIR(info.st_mode):
        try:
            with os.scandir(path):
                pass
        except OSError as exc:
            return None, 0, False, _problem("unreadable", f"cannot list folder: {exc.strerror or exc}", label)
        return None, 0, False, _problem("folder", "a folder" + (" (symbolic link, not followed)" if os.path.islink(path) else ""), label, "info")
    if not stat.S_ISREG(info.st_mode):
        what = next((n for test, n in _NOT_REGULAR[1:] if test(info.st_mode)), "not a regular file")
        return None, 0, False, _problem("not-a-file", f"{what}, not a regular file: not opened", label, "warning")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return None, info.st_size, False, _os_problem(exc, label)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, 0, False, _problem("not-a-file", "not a regular file: not opened", label, "warning")
        raw = os.read(fd, HEAD_BYTES)
    except OSError as exc:
        return None, info.st_size, False, _os_problem(exc, label)
    finally:
        os.close(fd)
    if raw[:2] == GZIP_MAGIC:
        try:  # inflate only the bytes already read: the head of the content, bounded
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES), info.st_size, True, None
        except zlib.error:
            return raw, info.st_size, False, None
    return raw, info.st_size, False, None


_CONTROL_BYTES = bytes([*range(9), *range(14, 32), 127])


def binary_garbage(head: bytes) -> bool:
    """NUL bytes, or mostly bytes that are neither text nor UTF-8: not a text result."""
    if b"\x00" in head:
        return True
    sample = head[:1024]
    bad = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return bad > len(sample) // 10


# ============================================================== the one folder walker
def walk(root: str | os.PathLike[str]) -> Iterator[Path]:
    """Every file below `root`, sorted by name, a folder's files before its subfolders; hidden
    names (`.git`) skipped. A folder that cannot be listed and a link to a folder (not followed)
    are yielded themselves, so `read_head` names them; a symlink loop is yielded like a file.
    `root` itself, when it is not a folder, is yielded as it is."""
    for path, _kind in walk_kinds(root):
        yield path


def walk_kinds(root: str | os.PathLike[str]) -> Iterator[tuple[Path, str]]:
    """`walk`, each path with what the listing says it is: "folder" (one that cannot be
    listed), "link" (a symbolic link, to anything) or "file" (anything else), so a caller
    that treats links apart needs no stat of its own per file."""
    root = Path(root)
    if not root.is_dir():
        yield root, "link" if root.is_symlink() else "file"
        return
    pending: list[Path] = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            if folder != root:
                yield folder, "folder"
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = not is_dir and entry.is_symlink()
            except OSError:
                is_dir = is_link = False
            if is_dir:
                subfolders.append(Path(entry.path))
            else:
                yield Path(entry.path), "link" if is_link else "file"
        pending.extend(reversed(subfolders))


# ============================================================== what rules read in a head
@functools.lru_cache(maxsize=4)
def _decoded(head: bytes) -> str:
    return head.decode("utf-8", "replace")


def head_text(head: Head) -> str:
    """The head as text; decoded once however many rules look at it (the same bytes object)."""
    return head if isinstance(head, str) else _decoded(head)


def head_bytes(head: Head) -> bytes:
    return head if isinstance(head, bytes) else head.encode("utf-8", "surrogateescape")


def line_of(text: Head, at: int) -> int:
    return text.count("\n" if isinstance(text, str) else b"\n", 0, at) + 1  # type: ignore[arg-type]


def quote(line: str, width: int = 36) -> str:
    """A line of the file as a reason quotes it: cleaned, trimmed, in backticks."""
    line = clean(line.strip())
    return f"`{line[:width - 1]}…`" if len(line) > width else f"`{line}`"


def line_at(text: str, at: int) -> str:
    end = text.find("\n", at)
    start = text.rfind("\n", 0, at) + 1
    return text[start:end if end >= 0 else len(text)]


def suffix(name: str) -> str:
    """The lowercase extension, looking through `.gz` (`trace.json.gz` -> `.json`)."""
    name = name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def first_line(text: str) -> str:
    """The first line that is not blank, without its leading blanks (no split of the whole head)."""
    text = text.lstrip()
    end = text.find("\n")
    return text if end < 0 else text[:end]


def _count(n: int, word: str, about: str = "") -> str:
    """`1 row`, `~12 rows`: the plural only where it belongs."""
    return f"{about}{n:,} {word}" + ("" if n == 1 and not about else "s")


def describe_rows(head: Head, size: int) -> str:
    """`N rows` when the whole file is in the head, else `~N rows` from the head's mean line length."""
    data = head_bytes(head)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if not data:
        return "empty"
    if len(data) >= size:
        return _count(max(lines - 1, 0), "row")
    estimate = round(size / (len(data) / max(lines, 1)))
    return _count(max(estimate - 1, 0), "row", "~")


def describe_lines(head: Head, size: int) -> str:
    data = head_bytes(head)
    if not data:
        return "empty"
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(data) >= size:
        return _count(lines, "line")
    return _count(round(size / (len(data) / max(lines, 1))), "line", "~")
