"""Provides `NodeStreams`: snapshots from every node of a job, through Slurm, no daemon of ours.

One child process (normally `srun --jobid ID --overlap --ntasks-per-node=1 ... gpuscope collect
--stream`, see `srun_command`) prints one JSON snapshot per line per node; a thread reads its
output, and each line becomes a `Snapshot` keyed by its host name. A node whose lines stop is
said to be silent (with for how long), a stream that ends is said to have ended (with the last
words of its stderr), and a line that is not a snapshot is counted, never fatal. Only our own
child is ever signalled, and only by `close()`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO, Callable, Sequence

from gpuscope.metrics.recording_schema import from_json_dict
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot

MAX_LINE = 16 * 1024 * 1024
"""A longer line is not a snapshot (a node with a million processes would need a new design)."""
SILENT_INTERVALS = 3
"""A node is silent when no line came from it for this many intervals."""
STDERR_LINES = 20


def srun_command(job_id: str, interval: float, python: str = sys.executable) -> list[str]:
    """The argument list that starts one collector per node of the job, as an extra step that
    overlaps the job's own (`--overlap`), with this same gpuscope (`python -m`): clusters
    share the software's file system between nodes."""
    return ["srun", "--jobid", str(job_id), "--overlap", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--quiet",
            python, "-m", "gpuscope.tui.cli", "collect", "--stream", "--job", str(job_id), "--interval", f"{interval:g}"]


@dataclass(frozen=True)
class NodeState:
    node: str
    last_seen: float
    """time.monotonic() of its last snapshot."""
    samples: int
    status: str
    """'ok', 'silent for N s', or 'stream ended'."""


class NodeStreams:
    """Read snapshots from `argv`'s standard output (one JSON line each) in a thread."""

    def __init__(self, argv: Sequence[str], *, interval: float, clock: Callable[[], float] = time.monotonic,
                 popen: Callable[..., subprocess.Popen] = subprocess.Popen) -> None:
        self.argv = list(argv)
        self.interval = interval
        self.clock = clock
        self._popen = popen
        self._lock = threading.Lock()
        self._new: list[Snapshot] = []
        self._latest: dict[str, Snapshot] = {}
        self._seen: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.bad_lines = 0
        self.ended = False
        self.error: str | None = None
        self._proc: subprocess.Popen | None = None
        self._threads: list[threading.Thread] = []

    def start(self) -> "NodeStreams":
        try:
            self._proc = self._popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        except OSError as exc:
            self.ended, self.error = True, f"cannot start {self.argv[0]}: {exc.strerror or exc}"
            return self
        for target, stream in ((self._read_out, self._proc.stdout), (self._read_err, self._proc.stderr)):
            thread = threading.Thread(target=target, args=(stream,), daemon=True, name="gpuscope-node-streams")
            thread.start()
            self._threads.append(thread)
        return self

    def _read_out(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(MAX_LINE), b""):
            try:
                snapshot = from_json_dict(json.loads(raw))
            except ValueError:  # also json's JSONDecodeError and UnicodeDecodeError
                with self._lock:
                    self.bad_lines += 1
                continue
            node = snapshot.host.hostname
            with self._lock:
                self._new.append(snapshot)
                self._latest[node] = snapshot
                self._seen[node] = self.clock()
                self._counts[node] = self._counts.get(node, 0) + 1
        code = self._proc.wait() if self._proc is not None else None
        with self._lock:
            self.ended = True
            if code:
                self.error = f"{self.argv[0]} exited with status {code}" + (f": {self._stderr[-1]}" if self._stderr else "")

    def _read_err(self, stream: IO[bytes]) -> None:
        for raw in iter(lambda: stream.readline(64 * 1024), b""):
            text = clean(raw.decode("utf-8", "replace")).strip()
            if text:
                with self._lock:
                    self._stderr.append(text)

    def drain(self) -> list[Snapshot]:
        """The snapshots that arrived since the last call, in arrival order."""
        with self._lock:
            out, self._new = self._new, []
        return out

    def latest(self) -> dict[str, Snapshot]:
        with self._lock:
            return dict(sorted(self._latest.items()))

    def states(self) -> list[NodeState]:
        now = self.clock()
        with self._lock:
            out = []
            for node in sorted(self._seen):
                quiet = now - self._seen[node]
                status = "stream ended" if self.ended else (f"silent for {quiet:.0f} s" if quiet > SILENT_INTERVALS * self.interval else "ok")
                out.append(NodeState(node, self._seen[node], self._counts[node], status))
            return out

    @property
    def stderr(self) -> list[str]:
        with self._lock:
            return list(self._stderr)

    def close(self, timeout: float = 5.0) -> None:
        """Stop our child (SIGTERM, then SIGKILL after `timeout`) and wait for the readers."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=timeout)
