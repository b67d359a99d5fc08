"""The MAGMA reader's buffer and file-reading shortcuts give what the plain paths give: a
scan buffer reused from batch to batch (it keeps stale bytes past each batch's end), and
files read with one system call instead of through `read_bytes`."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuscope.parsers import magma, magma_scan
from paths import EXAMPLES


def _same_scan(a: tuple[list[magma_scan.FileScan], magma_scan.RowText], b: tuple[list[magma_scan.FileScan], magma_scan.RowText]) -> None:
    (scans_a, rows_a), (scans_b, rows_b) = a, b
    (text_a, first_a), (text_b, first_b) = rows_a.joined(), rows_b.joined()
    assert text_a == text_b and np.array_equal(first_a, first_b)
    for name in ("file", "line", "block"):
        assert np.array_equal(getattr(rows_a, name), getattr(rows_b, name))
    for x, y in zip(scans_a, scans_b, strict=True):
        assert [(k.spec, k.test, k.processes, k.rows) for k in x.blocks] == [(k.spec, k.test, k.processes, k.rows) for k in y.blocks]
        assert (x.banners, x.device, x.visible_devices, x.version, x.asserts, x.errors, x.unknown, x.start, x.end, x.exit_code,
                x.cancelled, x.last_line_cut, x.orphan_rows) == (y.banners, y.device, y.visible_devices, y.version, y.asserts,
                                                                y.errors, y.unknown, y.start, y.end, y.exit_code, y.cancelled,
                                                                y.last_line_cut, y.orphan_rows)


def test_reused_scan_buffer_equals_a_fresh_one() -> None:
    datas = [p.read_bytes() for p in sorted(EXAMPLES.rglob("*.out"))]
    assert len(datas) >= 3
    # Largest batch first, so later batches leave the previous batch's bytes past their end.
    batches = [datas, datas[1:], datas[-1:], [datas[0][: len(datas[0]) // 3]]]
    reused = magma_scan.FileBuffer()
    buffers = set()
    for batch in batches:
        _same_scan(magma_scan.scan_many(batch, {}, reused), magma_scan.scan_many(batch, {}))
        buffers.add(id(reused.buffer))
    assert len(buffers) == 1  # one buffer, grown once and then reused


def _tree(root: Path) -> Path:
    source = sorted(EXAMPLES.rglob("*.out"))[0].read_bytes()
    files = {
        "plain.out": source,
        "no-newline.out": source.rstrip(b"\n"),
        "crlf.out": source.replace(b"\n", b"\r\n"),
        "packed.out.gz": gzip.compress(source * 40),  # decompressed, larger than the other files together
        "empty.out": b"",
        "blank.out": b"  \n\n",
        "binary.out": b"% MAGMA \x00\x01",
        "other.txt": b"not a MAGMA file\n",
        "utf8.out": source + "% note: naïve – ü\n".encode(),  # not ASCII, valid UTF-8: kept as it is
        "latin1.out": source + "% note: naïve\n".encode("latin-1"),  # not UTF-8: decoded with replacement
    }
    for i, (name, data) in enumerate(files.items()):
        folder = root / "env" / f"size{4 << i}"
        folder.mkdir(parents=True)
        (folder / name).write_bytes(data)
    return root


def _same(a: magma.MagmaResult, b: magma.MagmaResult) -> None:
    pd.testing.assert_frame_equal(a.rows, b.rows, check_exact=True)
    pd.testing.assert_frame_equal(a.runs, b.runs, check_exact=True)
    assert [repr(f) for f in a.findings] == [repr(f) for f in b.findings]
    assert a.files_read == b.files_read


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("batch_bytes", [1024, magma.BATCH_BYTES])
def test_plain_file_reads_equal_read_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, batch_bytes: int) -> None:
    """Files read straight into the scan buffer give what `read_bytes` gives; with several
    batches the buffer is reused, with one the gzip file (larger than stat said) grows it
    after plain files were read into it."""
    root = _tree(tmp_path)
    monkeypatch.setattr(magma, "_workers", lambda: workers)
    monkeypatch.setattr(magma, "BATCH_BYTES", batch_bytes)
    fast = magma.read_tree([root])
    assert [f.kind for f in fast.findings if f.kind == "encoding"] == ["encoding"]  # the Latin-1 file
    explicit = [magma.read(p) for p in sorted(root.rglob("*.*"))]
    monkeypatch.setattr(magma, "_read_plain", lambda path, size, into: None)  # every file through read_bytes
    _same(fast, magma.read_tree([root]))
    for path, (rows, findings) in zip(sorted(root.rglob("*.*")), explicit):
        slow_rows, slow_findings = magma.read(path)
        pd.testing.assert_frame_equal(rows, slow_rows, check_exact=True)
        assert [repr(f) for f in findings] == [repr(f) for f in slow_findings]


def test_file_buffer_keeps_committed_files_when_it_grows() -> None:
    files = magma_scan.FileBuffer()
    files.clear(4)
    files.append(b"% a\n")
    files.room(3)[:] = b"xyz"  # read, then rejected: not committed, overwritten by the next file
    files.append(b"% b")  # no newline at the end: one is added
    files.append(b"% c\n" * 1000)  # past the room made: the buffer grows
    assert files.starts == [0, 4, 8] and files.cut == [False, True, False]
    assert bytes(files.buffer[: files.end]) == b"% a\n% b\n" + b"% c\n" * 1000


@pytest.mark.parametrize("change", [-7, 5, 10_000])
def test_a_file_whose_size_changed_since_stat_is_read_as_read_bytes_reads_it(tmp_path: Path, change: int) -> None:
    """Stat's size is only a hint: a file that grew or shrank since is read by `read_bytes`
    (the general path), with the same result as a file read without one."""
    path = _tree(tmp_path) / "env" / "size4" / "plain.out"
    stale, fresh = magma_scan.FileBuffer(), magma_scan.FileBuffer()
    stale.append(b"% an earlier file\n")  # the file goes after another one
    fresh.append(b"% an earlier file\n")
    a = magma._load(tmp_path, path, False, None, stale, None, max(1, path.stat().st_size + change))
    b = magma._load(tmp_path, path, False, None, fresh, None)
    assert isinstance(a, magma._File) and isinstance(b, magma._File)
    assert (a.label, a.context, a.findings) == (b.label, b.context, b.findings)
    assert (stale.starts, stale.cut, bytes(stale.buffer[: stale.end])) == (fresh.starts, fresh.cut, bytes(fresh.buffer[: fresh.end]))
    assert bytes(stale.buffer[stale.starts[1] : stale.end]) == path.read_bytes()


def test_buffers_kept_between_reads_give_what_fresh_ones_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch buffers are kept for the next read: a read after a larger one (whose bytes stay
    past each new batch's end) gives what a read with fresh buffers gives, and a buffer grown
    past SPARE_BUFFER_BYTES (a file too big for a batch) is not kept."""
    big, small = _tree(tmp_path / "big"), tmp_path / "small"
    (small / "env" / "size2").mkdir(parents=True)
    (small / "env" / "size2" / "one.out").write_bytes(sorted(EXAMPLES.rglob("*.out"))[-1].read_bytes())
    monkeypatch.setattr(magma, "_workers", lambda: 2)
    monkeypatch.setattr(magma, "BATCH_BYTES", 1024)
    monkeypatch.setattr(magma, "SPARE_BUFFER_BYTES", 1 << 40)
    monkeypatch.setattr(magma, "_SPARE_BUFFERS", [])
    magma.read_tree([big])
    kept = list(magma._SPARE_BUFFERS)
    assert kept and any(b.end > 0 for b in kept)  # stale bytes from the big tree
    after = magma.read_tree([small])
    monkeypatch.setattr(magma, "_SPARE_BUFFERS", [])
    _same(after, magma.read_tree([small]))
    monkeypatch.setattr(magma, "SPARE_BUFFER_BYTES", 0)
    magma.read_tree([small])
    assert magma._SPARE_BUFFERS == []
    # No more than SPARE_BYTES in all are kept.
    monkeypatch.setattr(magma, "SPARE_BUFFER_BYTES", 1 << 40)
    cap = sum(sorted(len(b.buffer) for b in kept)[:2])
    monkeypatch.setattr(magma, "SPARE_BYTES", cap)
    magma.read_tree([big])
    assert 0 < len(magma._SPARE_BUFFERS) < len(kept) and sum(len(b.buffer) for b in magma._SPARE_BUFFERS) <= cap
