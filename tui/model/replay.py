"""Provides the replay screen's logic without Textual: a recording opened for replay (its
history as arrays, its events, any sample's snapshot on demand), the time cursor (step, jump,
play at a speed) and the jump-to-time grammar ("14:05", "+10m", "1h", "#1234").

Opening a day at 1 Hz (86,400 samples) takes seconds, not minutes, because nothing is done a
sample at a time: the recording is read for the columns the history and the events need only
(`COLUMNS`: the process lists, most of the bytes, are never decompressed), the history and
the events are computed column-wise from the Arrow arrays, and the sample under the cursor is
decoded from its own batch only (`recording.Batches`: the file memory-mapped, its messages
indexed still compressed, one batch decoded when the cursor reaches it).

Times: samples are replayed in file order. A clock that jumped back (NTP, a suspended node)
would make the timestamps go down; the cursor moves on their running maximum (`clock`), so
playing and jumping never go backwards, while the screen shows each sample's own timestamp.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.history import EnergyTally, History
from gpuscope.metrics.samples import Snapshot
from gpuscope.metrics.snapshot_tables import busy_cores, scope_memory_used, scope_processes
from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.columns import GpuColumns, changed, floats, gpu_columns, parents, starts
from gpuscope.tui.model.replay_energy import GpuEnergyView, energy_at, energy_series

IDLE_PCT = 5.0
"""A GPU under this utilisation (%) is idle..."""
IDLE_MIN_S = 60.0
"""...and an idle spell shorter than this (seconds) is a pause, not an event."""
SPEEDS = (1.0, 10.0, 60.0, 600.0)
"""Play speeds, recording seconds per wall second."""
BIG_STEP_S = 60.0
"""`<` and `>` move the cursor a minute of recording time."""
PANE_SECONDS = 600.0
"""The panes' history at the cursor: the last 10 minutes (sparklines and 1-minute means)."""
KINDS = ("memory-peak", "idle", "throttle", "process-start", "process-end")
COLUMNS = ("timestamp", "hostname", "cpu_percent", "memory_used", "memory_total", "memory_swap_used", "memory_swap_total", "gpus", "scope")
"""What the history and the events are made of: all a recording is read for (the rest, the
process lists too, comes with the sample under the cursor from its own batch)."""


@dataclass(frozen=True)
class Event:
    """Something worth jumping to: `index` is the sample (in replay order), `kind` one of KINDS;
    `text` starts with `GPU n ` for a GPU's event."""

    index: int
    time: float
    kind: str
    text: str


def summary(events: Sequence[Event]) -> list[str]:
    """One line per kind of event and what happened: GPUs with the same news are named
    together (`GPUs 0, 1, 4 throttled: sw_power_cap`), not one line each."""
    groups: dict[str, list[str]] = {}
    for e in events:
        gpu, _, rest = e.text.partition(" ") if e.text.startswith("GPU ") else ("", "", e.text)
        number, _, rest = rest.partition(" ") if gpu else ("", "", rest)
        groups.setdefault(rest, []).append(number)
    lines = []
    for rest, numbers in groups.items():
        named = [n for n in numbers if n]
        lines.append(rest if not named else f"GPU{'s' if len(named) > 1 else ''} {', '.join(named)} {rest}")
    return lines


def _per_row_mean(parent: np.ndarray, values: np.ndarray, rows: int) -> np.ndarray:
    ok = ~np.isnan(values)
    count = np.bincount(parent[ok], minlength=rows)
    total = np.bincount(parent[ok], weights=values[ok], minlength=rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _percent(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(whole > 0, 100.0 * part / np.where(whole > 0, whole, 1.0), np.nan)


def series_of(table: pa.Table, gpus: dict[int, GpuColumns]) -> dict[str, np.ndarray]:
    """What `watch_model.record` appends for each sample, for every sample at once. The scope's
    busy cores need the process lists, which a replay does not decompress: n/a (NaN). Its
    kind and memory are read from the scope's struct column (what the reader gives for every
    version of the file)."""
    rows = table.num_rows
    out: dict[str, np.ndarray] = {}
    cores = table.column("cpu_percent")
    out["cpu.mean"] = _per_row_mean(parents(cores), floats(pc.list_flatten(cores)), rows)
    out["host.mem"] = _percent(floats(table.column("memory_used")), floats(table.column("memory_total")))
    out["host.swap"] = _percent(floats(table.column("memory_swap_used")), floats(table.column("memory_swap_total")))
    for g, c in gpus.items():
        out[f"gpu{g}.util"] = c.util
        out[f"gpu{g}.mem"] = _percent(c.mem_bytes, c.mem_total)
        out[f"gpu{g}.mem_bytes"] = c.mem_bytes
    if gpus:
        with np.errstate(invalid="ignore"), _quiet():
            utils = np.vstack([c.util for c in gpus.values()])
            mems = np.vstack([out[f"gpu{g}.mem"] for g in gpus])
            out["gpu.util_mean"] = np.nanmean(utils, axis=0)
            out["gpu.util_max"] = np.nanmax(utils, axis=0)
            out["gpu.mem_mean"] = np.nanmean(mems, axis=0)
    else:
        out["gpu.util_mean"] = out["gpu.util_max"] = out["gpu.mem_mean"] = np.full(rows, np.nan)
    out["scope.cores"] = out["scope.cpu_share"] = np.full(rows, np.nan)
    scope = table.column("scope")
    used = floats(pc.struct_field(scope, "memory_used"))
    node = pc.fill_null(pc.equal(pc.struct_field(scope, "kind"), "node"), False).to_numpy(zero_copy_only=False)
    out["scope.mem"] = np.where(np.isnan(used) & node, floats(table.column("memory_used")), used)  # as snapshot_tables.scope_memory_used
    return out


class _quiet:
    """numpy's 'mean of empty slice' warnings off: an all-NaN column is n/a, as meant."""

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: object) -> None:
        self._catch.__exit__(*exc)


def _gib(n: float) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:.0f} MiB"


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def memory_peak(used: np.ndarray, total: np.ndarray, times: np.ndarray, what: str) -> list[Event]:
    """`what`'s memory peak: its first sample at the highest use, when memory grew (a flat or
    falling line has none). `total` per sample: the size it is out of (NaN or 0: not known)."""
    mem = np.nan_to_num(used, nan=-1.0)
    if not len(times) or mem.max() <= max(0.0, mem[0]):
        return []
    i = int(mem.argmax())
    of = f" of {_gib(total[i])}" if total[i] > 0 else ""
    return [Event(i, float(times[i]), "memory-peak", f"{what} memory peak: {_gib(mem[i])}{of}")]


def gpu_events(gpus: dict[int, GpuColumns], times: np.ndarray) -> list[Event]:
    """Each GPU's memory peak (its first sample at the highest use), its idle spells of at least
    IDLE_MIN_S after a busy sample, and the starts of its throttle spells."""
    events: list[Event] = []
    n = len(times)
    for g, c in gpus.items():
        events += memory_peak(c.mem_bytes, c.mem_total, times, f"GPU {g}")
        valid = ~np.isnan(c.util)
        idle = valid & (c.util < IDLE_PCT)
        busy = valid & (c.util >= IDLE_PCT)
        edges = np.diff(idle.astype(np.int8), prepend=0, append=0)
        for start, end in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            if start == 0 or not busy[start - 1]:
                continue
            until = times[end] if end < n else times[-1]
            if until - times[start] >= IDLE_MIN_S:
                how = f"for {_span(until - times[start])}" + ("" if end < n else ", to the end")
                events.append(Event(int(start), float(times[start]), "idle", f"GPU {g} went idle: under {IDLE_PCT:g} % {how}"))
        for start, reasons in c.reasons_at.items():
            events.append(Event(start, float(times[start]), "throttle", f"GPU {g} throttled: {', '.join(reasons) or 'unknown reason'}"))
    return events


def process_events(pids: pa.Array | pa.ChunkedArray, times: np.ndarray) -> list[Event]:
    """Processes starting and ending, from the scope's pid set (a job's or a process tree's;
    recorded with every sample): only where the set changes is it looked at. Node and user
    scopes have no pid set: every shell command there would be an event, so they get none.
    `pids`: the scope column's `pids` list per sample."""
    at = np.flatnonzero(changed(pids)[1:]) + 1
    if not at.size:
        return []
    first = starts(pids)
    values = pc.list_flatten(pids).to_numpy(zero_copy_only=False)
    events: list[Event] = []
    for i in at.tolist():
        a, b = set(values[first[i - 1]:first[i]].tolist()), set(values[first[i]:first[i + 1]].tolist())
        for kind, pids_now, verb in (("process-start", b - a, "started"), ("process-end", a - b, "ended")):
            if pids_now:
                listed = ", ".join(str(p) for p in sorted(pids_now)[:5]) + (", ..." if len(pids_now) > 5 else "")
                what = f"process {listed}" if len(pids_now) == 1 else f"{len(pids_now)} processes ({listed})"
                events.append(Event(i, float(times[i]), kind, f"{what} {verb}"))
    return events


def scope_events(scope: pa.ChunkedArray, used: np.ndarray, times: np.ndarray) -> list[Event]:
    """The memory peak of a job or process tree (a node's is the host's: no event)."""
    kind = pc.struct_field(scope, "kind").to_numpy(zero_copy_only=False)
    what = {"job": "job", "pid": "process tree", "user": "the user's processes"}.get(kind[0]) if len(times) else None
    return memory_peak(used, floats(pc.struct_field(scope, "memory_limit")), times, what) if what else []


@dataclass
class Replay:
    """A recording opened for replay, one node of it: samples in file order (`rows`: their
    rows in the file), `times` as recorded, `clock` their running maximum, the whole `series`
    (History names), the `events`, and each sample's snapshot on demand."""

    path: str
    recording: recording.Recording
    node: str | None = None
    nodes: tuple[str, ...] = ()
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    clock: np.ndarray = field(default_factory=lambda: np.zeros(0))
    series: dict[str, np.ndarray] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    batches: recording.Batches | None = None
    """The file's batches, decoded one at a time for the sample under the cursor."""
    gpu_energy: dict[int, GpuEnergyView] = field(default_factory=dict)
    """Per GPU, what its power and activity plots say beside their lines."""
    in_memory: bool = False
    """Read whole into memory (`replay_of`), not from a file: another node comes from the same table."""
    _running_peaks: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def samples(self) -> int:
        return len(self.rows)

    @property
    def findings(self) -> list[Finding]:
        return self.recording.findings

    @property
    def problem(self) -> str | None:
        """Why there is nothing to replay (not a recording, unreadable, no samples), else None."""
        if self.samples:
            return None
        errors = [f.message for f in self.findings if f.severity == "error"]
        return errors[0] if errors else "the recording holds no samples"

    @property
    def cut_short(self) -> str | None:
        """What the reader said about a recording that did not end cleanly, else None."""
        cut = [f.message for f in self.findings if f.kind == "cut" or f.kind in recording.UNREADABLE]
        if cut:
            return cut[0]
        if not self.recording.complete and self.samples:
            return "the recording did not end cleanly (still being written, or its writer was killed): the samples up to here are shown"
        return None

    def full_history(self) -> History:
        """Every sample, for the plots of the whole recording."""
        return History.from_arrays(self.times, self.series)

    def history_at(self, i: int, snapshot: Snapshot | None = None) -> History:
        """The last PANE_SECONDS up to sample `i`, with peaks up to `i`: what a live watch
        would have held at that moment (the panes' means, sparklines and peaks). With the
        sample's `snapshot` (its processes decoded), its scope's busy cores and memory are
        filled in for that sample, as `watch_model.record` does live; the samples before
        stay n/a (their process lists are not decompressed). Its `energy` holds each GPU's
        energy from the first sample to `i` (the job panel's line)."""
        start = int(np.searchsorted(self.clock, self.clock[i] - PANE_SECONDS, side="left"))
        if not self._running_peaks:
            self._running_peaks = {name: np.fmax.accumulate(values) for name, values in self.series.items()}
        peaks = {name: (None if np.isnan(v := float(p[i])) else v) for name, p in self._running_peaks.items()}
        series = {name: s[start:i + 1] for name, s in self.series.items()}
        if snapshot is not None and snapshot.processes:
            rows = scope_processes(snapshot)
            busy = busy_cores(rows)
            allocated = snapshot.scope.cpus_allocated
            used = scope_memory_used(snapshot)
            for name, value in (("scope.cores", busy), ("scope.cpu_share", None if busy is None or not allocated else 100.0 * busy / allocated),
                                ("scope.mem", None if used is None else float(used))):
                if value is not None and np.isnan(series[name][-1]):
                    series[name] = series[name].copy()
                    series[name][-1] = value  # the peak stays what the recording's columns say (n/a: unknown)
        history = History.from_arrays(self.times[start:i + 1], series, peaks)
        # the energy since the first sample, as a live watch's tally holds it, for the job panel
        history.energy = EnergyTally.fixed({g: energy_at(view, i) for g, view in self.gpu_energy.items()})
        return history

    def snapshot(self, i: int) -> Snapshot:
        """Sample `i` with its processes (decoded from its batch only); without them when its
        batch cannot be decoded."""
        row = int(self.rows[i])
        found = self.batches.row(row) if self.batches is not None else None
        if found is not None:
            return recording_schema.snapshot_at(*found)
        return self.recording.snapshot(row)

    def index_at(self, t: float) -> int:
        """The last sample at or before time `t` (the first one before the start)."""
        return max(0, min(self.samples - 1, int(np.searchsorted(self.clock, t, side="right")) - 1))

    def for_node(self, node: str | None) -> "Replay":
        """The same recording opened at another node: from memory when it was read whole, else from its file."""
        return replay_of(self.recording, node) if self.in_memory else open_replay(self.path, node)

    def close(self) -> None:
        if self.batches is not None:
            self.batches.close()


def open_replay(path: str | os.PathLike[str], node: str | None = None) -> Replay:
    """Read `path` for replay (the first node of a multi-node recording unless `node`)."""
    replay = replay_of(recording.read(path, columns=COLUMNS, indexed=True), node)
    replay.in_memory = False
    replay.batches = replay.recording.batches
    return replay


def replay_of(rec: recording.Recording, node: str | None = None) -> Replay:
    """A recording already in memory (its table whole, processes and all: e.g. a job read back
    from Prometheus) for replay; a sample's snapshot then comes from that table."""
    replay = Replay(rec.path, rec, in_memory=True)
    if rec.table is None or rec.samples == 0:
        return replay
    # the columns the history and the events read, each made one array (a file gives one chunk
    # per batch, thousands in a day): every column operation below is then one call, not one per chunk
    table = rec.table.select(list(COLUMNS)).combine_chunks()
    hosts = table.column("hostname")
    replay.nodes = tuple(str(h) for h in pc.unique(hosts).to_pylist() if h is not None) or ("",)
    replay.node = node if node in replay.nodes else replay.nodes[0]
    if len(replay.nodes) > 1:
        replay.rows = np.flatnonzero(pc.fill_null(pc.equal(hosts, replay.node), False).to_numpy(zero_copy_only=False))
        table = table.take(pa.array(replay.rows))
    else:
        replay.rows = np.arange(rec.samples)
    replay.times = floats(table.column("timestamp"))
    replay.times = np.where(np.isnan(replay.times), np.fmax.accumulate(replay.times), replay.times)
    replay.clock = np.fmax.accumulate(replay.times)
    gpus = gpu_columns(table.column("gpus"), table.num_rows)
    replay.series = series_of(table, gpus)
    energy, replay.gpu_energy = energy_series(replay.times, gpus, rec.version)
    replay.series.update(energy)
    scope = table.column("scope")
    events = (gpu_events(gpus, replay.times) + process_events(pc.struct_field(scope, "pids"), replay.times)
              + scope_events(scope, replay.series["scope.mem"], replay.times))
    replay.events = sorted(events, key=lambda e: (e.index, KINDS.index(e.kind)))
    return replay


# --- the cursor ---------------------------------------------------------------------------


_DURATION = re.compile(r"(?:(?P<h>\d+(?:\.\d+)?)h)?\s*(?:(?P<m>\d+(?:\.\d+)?)m(?:in)?)?\s*(?:(?P<s>\d+(?:\.\d+)?)s)?")
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}(?:\.\d+)?))?")
GOTO_HELP = "a clock time (14:05, 14:05:30), from the start (90s, 10m, 1h30m), from the cursor (+10m, -30s), or a sample (#1234)"


def _duration(text: str) -> float | None:
    text = text.strip()
    match = _DURATION.fullmatch(text)
    if not text or match is None or not any(match.group(k) for k in "hms"):
        return None
    return sum(float(match.group(k) or 0) * scale for k, scale in (("h", 3600), ("m", 60), ("s", 1)))


def parse_goto(text: str, now: float, start: float, end: float, samples: int) -> tuple[str, float]:
    """What a jump box's text asks for: ('time', t) or ('sample', i) (0-based). `now`: the
    cursor's time; `start`/`end`: the recording's. A clock time is its first occurrence at or
    after the start (local time, as the screen shows times). ValueError says what is accepted."""
    text = text.strip().lower()
    if text.startswith("#"):
        number = text[1:].replace(",", "").strip()
        if number.isdigit() and 1 <= int(number) <= samples:
            return "sample", float(int(number) - 1)
        raise ValueError(f"sample {text[1:]!r}: the recording has samples #1 to #{samples:,}")
    if text[:1] in "+-" and (d := _duration(text[1:])) is not None:
        return "time", now + (d if text[0] == "+" else -d)
    if (d := _duration(text)) is not None:
        return "time", start + d
    if (match := _CLOCK.fullmatch(text)) is not None:
        h, m, s = int(match.group("h")), int(match.group("m")), float(match.group("s") or 0)
        if h > 23 or m > 59 or s >= 60:
            raise ValueError(f"{text!r} is not a clock time")
        first = datetime.fromtimestamp(start)
        at = first.replace(hour=h, minute=m, second=int(s), microsecond=int(s % 1 * 1e6))
        while at.timestamp() < start - 1:
            at += timedelta(days=1)
        if at.timestamp() > end + 1:
            raise ValueError(f"{text} is not in the recording ({clock_text(start, end - start)} to {clock_text(end, end - start)})")
        return "time", at.timestamp()
    raise ValueError(f"{text!r}: type {GOTO_HELP}")


def clock_text(t: float, span: float = 0.0) -> str:
    """A sample's local time, `14:03:22`; with the date when the recording spans days."""
    stamp = time.localtime(t)
    return time.strftime("%m-%d %H:%M:%S" if span >= 86400 else "%H:%M:%S", stamp)


class ReplayCursor:
    """Where the replay is (`index`), its play state and speed. `position` is the replay time,
    which playing advances by `speed` x the wall time passed; the cursor is the last sample at
    or before it."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.index = 0
        self.position = float(replay.clock[0]) if replay.samples else 0.0
        self.speed = SPEEDS[0]
        self.playing = False

    @property
    def last(self) -> int:
        return max(0, self.replay.samples - 1)

    @property
    def time(self) -> float:
        return float(self.replay.times[self.index])

    def go(self, index: int) -> None:
        self.index = max(0, min(self.last, int(index)))
        self.position = float(self.replay.clock[self.index])

    def step(self, samples: int) -> None:
        self.go(self.index + samples)

    def step_time(self, seconds: float) -> None:
        """Move by `seconds` of recording time, and at least one sample that way."""
        target = self.replay.index_at(float(self.replay.clock[self.index]) + seconds)
        if target == self.index:
            target += 1 if seconds > 0 else -1
        self.go(target)

    def go_time(self, t: float) -> None:
        self.go(self.replay.index_at(t))

    def goto(self, text: str) -> None:
        """Jump as `parse_goto` reads `text` (ValueError: not understood)."""
        span = self.replay.clock
        what, value = parse_goto(text, float(span[self.index]), float(self.replay.times[0]), float(span[-1]), self.replay.samples)
        self.go(int(value)) if what == "sample" else self.go_time(value)

    def toggle_play(self) -> None:
        """Play (from the start when at the end) or pause."""
        if not self.playing and self.index >= self.last:
            self.go(0)
        self.playing = not self.playing and self.last > 0

    def set_speed(self, step: int) -> None:
        """The next faster (+1) or slower (-1) of SPEEDS, clamped."""
        i = SPEEDS.index(self.speed) if self.speed in SPEEDS else 0
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]

    def tick(self, wall_seconds: float) -> bool:
        """Playing: advance `speed` x `wall_seconds`; True when the cursor moved. Stops at the end."""
        if not self.playing:
            return False
        self.position += self.speed * max(0.0, wall_seconds)
        before = self.index
        self.index = self.replay.index_at(self.position)
        if self.index >= self.last:
            self.playing = False
        return self.index != before

    def next_event(self, step: int = 1) -> list[Event]:
        """Go to the next (`step` 1) or previous (-1) sample with events; those events, or []
        when there is none that way (the cursor stays)."""
        events = self.replay.events
        if step > 0:
            later = [e.index for e in events if e.index > self.index]
            target = min(later) if later else None
        else:
            earlier = [e.index for e in events if e.index < self.index]
            target = max(earlier) if earlier else None
        if target is None:
            return []
        self.go(target)
        return self.events_here()

    def events_here(self) -> list[Event]:
        return [e for e in self.replay.events if e.index == self.index]

    def title(self, name: str) -> str:
        """`replay · job.gsrec · 14:03:22 (sample 1,234 of 86,400) · 10x`, plus the node of a
        multi-node recording."""
        replay = self.replay
        span = float(replay.clock[-1] - replay.clock[0]) if replay.samples else 0.0
        node = f" · node {replay.node} ({replay.nodes.index(replay.node) + 1} of {len(replay.nodes)})" if len(replay.nodes) > 1 else ""
        return (f"replay · {name} · {clock_text(self.time, span)} (sample {self.index + 1:,} of {replay.samples:,}) · "
                f"{self.speed:g}x{node}")


def display_path(path: str | os.PathLike[str]) -> str:
    """The file's name as the title shows it (the folder is in the browser, or typed)."""
    return Path(path).name
