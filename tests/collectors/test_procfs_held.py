"""procfs.HeldFiles: stat files kept open between scans, read again with pread."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.collectors import procfs
from gpuscope.collectors.processes import ProcessCollector

LINUX = sys.platform.startswith("linux") and os.path.exists("/proc/self/stat")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not LINUX, reason="needs a Linux /proc")
def test_a_held_stat_reads_fresh_values_and_fails_once_the_process_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 0.6: pass\ntime.sleep(30)"])
    try:
        held = procfs.HeldFiles()
        path = f"/proc/{child.pid}/stat"
        first = held.read(path)
        assert len(held) == 1
        import time
        time.sleep(0.4)
        second = held.read(path)  # through the held descriptor
        ticks = lambda data: int(data.rsplit(b")", 1)[1].split()[11])  # noqa: E731
        assert ticks(second) > ticks(first)  # the kernel regenerated the line
    finally:
        child.kill()
        child.wait()
    with pytest.raises(OSError):
        held.read(path)  # held read: ESRCH; then the path itself is gone
    assert len(held) == 0


def test_limit_keep_only_and_close(tmp_path: Path) -> None:
    files = []
    for i in range(5):
        f = tmp_path / f"{i}"
        f.write_bytes(b"x%d" % i)
        files.append(str(f))
    before = open_fds()
    held = procfs.HeldFiles(limit=3)
    assert [held.read(f) for f in files] == [b"x0", b"x1", b"x2", b"x3", b"x4"]
    assert len(held) == 3 and open_fds() == before + 3
    Path(files[0]).write_bytes(b"new")  # same file, rewritten: the held descriptor sees it
    assert held.read(files[0]) == b"new"
    held.keep_only({files[1]})
    assert len(held) == 1 and open_fds() == before + 1
    held.close()
    assert len(held) == 0 and open_fds() == before
    again = procfs.HeldFiles(limit=3)
    again.read(files[2])
    del again  # dropped without close(): its descriptors go with it
    assert open_fds() == before


def never_ran(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/schedstat").read_bytes().startswith(b"0 0 ")
    except OSError:
        return True


@pytest.mark.skipif(not LINUX, reason="needs a Linux /proc")
def test_the_process_table_holds_about_one_descriptor_per_process_and_releases_them() -> None:
    before = open_fds()
    collector = ProcessCollector()
    rows = collector.sample()
    rows = collector.sample()
    held = open_fds() - before
    # One schedstat per process, and the stat of each process whose stat is read every scan:
    # several threads, or never run yet (schedstat `0 0 0`, as idle kernel rescuer threads).
    # A single-threaded one has its stat opened only when it has run.
    every_scan = sum(r.threads > 1 or never_ran(r.pid) for r in rows)
    assert 0 < held <= len(rows) + every_scan and held <= collector._held.limit
    own = {r.pid: r for r in rows}[os.getpid()]
    assert own.cpu_percent is not None
    collector.close()
    assert open_fds() == before
