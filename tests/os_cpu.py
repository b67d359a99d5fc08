"""What the kernel itself recorded of a process's CPU time, to check a reported CPU % against.

A test cannot know how much of a core a process gets on a busy machine, so it never asserts a
share ("> 50 %"). It brackets the collector's interval with the kernel's own counters instead:
the CPU time the kernel recorded over a wider and a narrower interval bounds what any honest
measurement of the interval in between can report.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of `pid`, all its threads (/proc/PID/schedstat would count the
    main thread only), as the kernel counts them."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime: fields 14 and 15


@dataclass(frozen=True)
class Mark:
    at: float
    cpu: float


def mark(pid: int) -> Mark:
    return Mark(time.monotonic(), cpu_seconds(pid))


def percent_bounds(before_first: Mark, after_first: Mark, before_second: Mark, after_second: Mark, slack_s: float = 2 * TICK_S) -> tuple[float, float]:
    """(low, high) CPU % that a sample pair can honestly report when its first sample was taken
    between the first two marks and its second between the last two: its interval holds the
    narrow one (after_first .. before_second) and lies inside the wide one (before_first ..
    after_second). `slack_s` allows for the counters' resolution (clock ticks in /proc/PID/stat)."""
    narrow_cpu = before_second.cpu - after_first.cpu - slack_s
    wide_cpu = after_second.cpu - before_first.cpu + slack_s
    narrow_s = before_second.at - after_first.at
    wide_s = after_second.at - before_first.at
    return max(0.0, 100 * narrow_cpu / wide_s), 100 * wide_cpu / narrow_s


def percent_bounds_around(before: Mark, after: Mark, min_interval_s: float, cores: float = 1.0, slack_s: float = 2 * TICK_S) -> tuple[float, float]:
    """(low, high) CPU % for a sample pair taken somewhere between two marks, at least
    `min_interval_s` apart, by a process that can use at most `cores`: outside the pair's
    interval the process ran at most `cores` per second, so most of the recorded time fell
    inside it."""
    wide_s = after.at - before.at
    wide_cpu = after.cpu - before.cpu
    # Time inside the interval w >= cpu - cores * (wide - w); per second of w that is lowest at
    # the shortest w the pair can have.
    low = (wide_cpu - slack_s - cores * wide_s) / min_interval_s + cores
    return max(0.0, 100 * low), 100 * (wide_cpu + slack_s) / min_interval_s
