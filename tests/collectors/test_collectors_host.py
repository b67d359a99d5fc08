"""HostCollector on fake /proc trees (per-core deltas, meminfo variants, missing and garbled
files) and once on this machine's real /proc."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from gpuscope.collectors.host import HostCollector

MEMINFO = """\
MemTotal:       16000000 kB
MemFree:         2000000 kB
MemAvailable:    9000000 kB
Buffers:          500000 kB
Cached:          6000000 kB
SwapCached:            0 kB
SReclaimable:     700000 kB
SwapTotal:       4000000 kB
SwapFree:        3000000 kB
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / "proc" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def stat(*cores: tuple[int, int, int, int]) -> str:
    """A /proc/stat with the given per-core (user, system, idle, iowait) ticks."""
    lines = ["cpu  1 2 3 4 5 6 7 8 0 0"]
    lines += [f"cpu{i} {u} 0 {s} {idle} {io} 0 0 0 0 0" for i, (u, s, idle, io) in enumerate(cores)]
    lines += ["intr 12345 0 0", "ctxt 999", "btime 1700000000", "processes 42"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path, "stat", stat((100, 0, 100, 0), (0, 0, 200, 0)))
    write(tmp_path, "loadavg", "1.50 0.75 0.25 3/120 4242\n")
    write(tmp_path, "meminfo", MEMINFO)
    write(tmp_path, "sys/kernel/hostname", "gpu-node-07\n")
    return tmp_path


def test_first_sample_is_the_since_boot_average_then_deltas(tree: Path) -> None:
    host = HostCollector(tree, clock=lambda: 123.0)
    first = host.sample()
    assert first.cpu_percent == (50.0, 0.0)
    assert first.cpu_count == 2
    assert first.timestamp == 123.0
    assert first.hostname == "gpu-node-07"
    assert first.load_avg == (1.5, 0.75, 0.25)

    # core 0: +30 user +10 system +50 idle +10 iowait -> 40 busy of 100; core 1: +100 user.
    write(tree, "stat", stat((130, 10, 150, 10), (100, 0, 200, 0)))
    second = host.sample()
    assert second.cpu_percent == pytest.approx((40.0, 100.0))


def test_core_whose_counters_did_not_move_keeps_its_last_value(tree: Path) -> None:
    host = HostCollector(tree)
    host.sample()
    write(tree, "stat", stat((150, 0, 150, 0), (0, 0, 200, 0)))
    assert host.sample().cpu_percent == (50.0, 0.0)
    # Same file again (two calls within one tick): no division by zero, values kept.
    assert host.sample().cpu_percent == (50.0, 0.0)


def test_counters_stepping_back_never_give_negative_or_over_100(tree: Path) -> None:
    host = HostCollector(tree)
    host.sample()
    # iowait can decrease on Linux: busy delta clamps to [0, total delta].
    write(tree, "stat", stat((90, 0, 300, 0), (0, 0, 250, 0)))
    cores = host.sample().cpu_percent
    assert all(0.0 <= c <= 100.0 for c in cores)


def test_offline_core_reads_zero_at_its_index(tree: Path) -> None:
    write(tree, "stat", "cpu  1 1 1 1\ncpu0 10 0 0 10\ncpu2 30 0 0 10\n")
    sample = HostCollector(tree).sample()
    assert sample.cpu_percent == (50.0, 0.0, 75.0)
    assert sample.cpu_count == 2


def test_memory_like_free(tree: Path) -> None:
    mem = HostCollector(tree).sample().memory
    kib = 1024
    assert mem.total == 16_000_000 * kib
    assert mem.available == 9_000_000 * kib
    assert mem.used == 7_000_000 * kib
    assert mem.cached == 6_700_000 * kib  # Cached + SReclaimable
    assert mem.buffers == 500_000 * kib
    assert mem.swap_total == 4_000_000 * kib
    assert mem.swap_used == 1_000_000 * kib


def test_meminfo_without_memavailable_falls_back_to_free_cached_buffers(tree: Path) -> None:
    write(tree, "meminfo", "".join(line + "\n" for line in MEMINFO.splitlines() if not line.startswith(("MemAvailable", "SReclaimable"))))
    mem = HostCollector(tree).sample().memory
    kib = 1024
    assert mem.available == (2_000_000 + 6_000_000 + 500_000) * kib
    assert mem.used == mem.total - mem.available
    assert mem.cached == 6_000_000 * kib


def test_empty_tree_gives_a_sample_not_an_exception(tmp_path: Path) -> None:
    sample = HostCollector(tmp_path).sample()
    assert sample.cpu_percent == () and sample.cpu_count == 0
    assert sample.load_avg == (0.0, 0.0, 0.0)
    assert sample.memory.total == 0 and sample.memory.used == 0 and sample.memory.swap_used == 0
    assert sample.hostname == os.uname().nodename


def test_garbled_files_give_what_can_be_read(tree: Path) -> None:
    write(tree, "stat", "cpu  x\ncpu0 10 0 0 10\ncpuX 1 2 3 4\ncpu1 a b c d\ncpu2 1 2\ncpu99999999 1 1 1 1\n\x00\xff junk\n")
    write(tree, "loadavg", "not numbers at all\n")
    write(tree, "meminfo", "MemTotal: 1000 kB\nGarbage line\nCached: lots kB\nMemAvailable:\nSwapTotal: 8 kB\n")
    sample = HostCollector(tree).sample()
    assert sample.cpu_percent == (50.0,)
    assert sample.load_avg == (0.0, 0.0, 0.0)
    assert sample.memory.total == 1000 * 1024
    assert sample.memory.cached == 0
    assert sample.memory.swap_total == 8 * 1024 and sample.memory.swap_used == 0


def test_binary_garbage_in_every_file(tree: Path) -> None:
    for rel in ("stat", "loadavg", "meminfo", "sys/kernel/hostname"):
        (tree / "proc" / rel).write_bytes(os.urandom(512))
    sample = HostCollector(tree).sample()  # must not raise
    assert isinstance(sample.hostname, str)


def test_real_proc_matches_psutil() -> None:
    host = HostCollector()
    first = host.sample()
    second = host.sample()
    assert first.cpu_count == psutil.cpu_count() == len(second.cpu_percent)
    assert all(0.0 <= c <= 100.0 for c in first.cpu_percent + second.cpu_percent)
    assert second.memory.total == psutil.virtual_memory().total
    assert second.memory.swap_total == psutil.swap_memory().total
    assert 0 < second.memory.available <= second.memory.total
    assert second.hostname == os.uname().nodename
    assert second.load_avg == pytest.approx(os.getloadavg(), abs=0.5)
