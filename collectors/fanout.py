"""Provides `NodeStreams`: snapshots from every node of a job, through Slurm, no daemon of ours.

One child process (normally `srun --jobid ID --overlap --ntasks-per-node=1 ... gpuscope collect
--stream`, see `srun_command`) prints one JSON snapshot per line per node; a thread reads its
output, and each line becomes a `Snapshot` keyed by its host name. A node whose lines stop is
said to be silent (with for how long), a stream that ends is said to have ended (with the last
words of its stderr), and a line that is not a snapshot is counted, never fatal. Only our own
child is ever signalled, and only by `close()`.

One node's collector can end while the others go on (its processes finished, it was killed):
its last line says so when it stops by itself (`end_line`: `{"stream_end": REASON, "hostname":
NODE}`), and srun says so on stderr when it was killed or failed (`srun: error: NODE: task N:
...`). Either way that node is "ended: REASON" and the others stream on.

`NodesSource` is what the watch screen polls for a job on several nodes: each `poll()` returns a
`NodesReading` (the latest snapshot of every node, the ones new since the last poll, each
node's state) without waiting.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO, Callable, Sequence

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import Snapshot

MAX_LINE = 16 * 1024 * 1024
"""A longer line is not a snapshot (a node with a million processes would need a new design)."""
SILENT_INTERVALS = 3
"""A node is silent when no line came from it for this many intervals."""
STDERR_LINES = 20
END_KEY = "stream_end"
"""A stream's last line when its collector stops by itself: `{"stream_end": REASON, "hostname": NODE}`."""
SRUN_TASK_ERROR = re.compile(r"^srun: error: (?P<node>[^\s:]+): tasks? [0-9,-]+: (?P<reason>.+)$")
"""How srun says one node's task failed, e.g. `srun: error: cn03: task 2: Exited with exit code 9`."""


def end_line(reason: str, hostname: str) -> str:
    """The line `gpuscope collect --stream` ends with when it stops by itself."""
    return json.dumps({END_KEY: reason, "hostname": hostname}, separators=(",", ":"))


def job_nodes(job_id: str) -> int | None:
    """How many nodes the job runs on (scontrol show job), None when it cannot be told."""
    from gpuscope.collectors import slurm

    info, _problem = slurm.show_job(slurm.SubprocessRunner(), job_id)
    return info.num_nodes if info is not None else None


def srun_command(job_id: str, interval: float, python: str = sys.executable) -> list[str]:
    """The argument list that starts one collector per node of the job, as an extra step that
    overlaps the job's own (`--overlap`), with this same gpuscope (`python -m`): clusters
    share the software's file system between nodes."""
    return ["srun", "--jobid", str(job_id), "--overlap", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--quiet",
            python, "-m", "gpuscope.tui.cli.main", "collect", "--stream", "--job", str(job_id), "--interval", f"{interval:g}"]


@dataclass(frozen=True)
class NodeState:
    node: str
    last_seen: float
    """time.monotonic() of its last snapshot."""
    samples: int
    status: str
    """'ok', 'silent for N s', or 'ended: REASON'."""

    @property
    def ended(self) -> bool:
        return self.status.startswith("ended")


@dataclass(frozen=True)
class NodesReading:
    """One poll of `NodesSource`: what every node of the job last said."""

    latest: dict[str, Snapshot]
    """Node name -> its latest snapshot (an ended node's last one stays), sorted by name."""
    fresh: tuple[Snapshot, ...]
    """The snapshots that arrived since the previous poll, in arrival order: what a recording takes."""
    states: tuple[NodeState, ...]
    ended: bool
    """The stream of every node has ended (srun exited)."""
    error: str | None
    """Why the streams could not start or ended badly, in plain words."""


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
        self._ended: dict[str, str] = {}
        """Node -> why its stream ended (its end line, or srun's error about its task)."""
        self.bad_lines = 0
        self.ended = False
        self.error: str | None = None
        self._proc: subprocess.Popen | None = None
        self._threads: list[threading.Thread] = []

    def start(self) -> "NodeStreams":
        # The nodes' lines are decoded by the recording schema, which loads pyarrow (~25 MB of
        # memory, a quarter of a second): only a watch across nodes pays it, and on this thread,
        # before the readers start (one package imported by two threads at once can deadlock).
        from gpuscope.parsers.recording.schema import from_json_dict

        self._decode = from_json_dict
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
                data = json.loads(raw)
                if isinstance(data, dict) and END_KEY in data:
                    self._node_ended(str(data.get("hostname") or "?"), str(data[END_KEY]))
                    continue
                snapshot = self._decode(data)
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
                if (match := SRUN_TASK_ERROR.match(text)) is not None:
                    self._node_ended(match["node"], match["reason"])

    def _node_ended(self, node: str, reason: str) -> None:
        """Slurm's node name and the host name can differ by a domain (cn03 / cn03.cluster)."""
        reason = clean(reason).strip() or "the stream ended"
        with self._lock:
            name = next((n for n in self._seen if n == node or n.split(".")[0] == node.split(".")[0]), node)
            self._ended.setdefault(name, reason)

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
            for node in sorted(self._seen.keys() | self._ended.keys()):
                seen = self._seen.get(node)
                quiet = now - seen if seen is not None else 0.0
                if node in self._ended:
                    status = f"ended: {self._ended[node]}"
                elif self.ended:  # the whole step ended (`error` says how, once, not per node)
                    status = f"ended: {os.path.basename(self.argv[0])} ended"
                else:
                    status = f"silent for {quiet:.0f} s" if quiet > SILENT_INTERVALS * self.interval else "ok"
                out.append(NodeState(node, seen if seen is not None else now, self._counts.get(node, 0), status))
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


class NodesSource:
    """The watch screen's source for a job on several nodes: `poll()` never waits (the
    streams' thread reads the nodes), it returns what they said so far as a `NodesReading`."""

    def __init__(self, streams: NodeStreams) -> None:
        self.streams = streams

    @classmethod
    def for_job(cls, job_id: str, interval: float) -> "NodesSource":
        return cls(NodeStreams(srun_command(job_id, interval), interval=interval).start())

    def poll(self) -> NodesReading:
        streams = self.streams
        ended = streams.ended  # before draining: a snapshot read after this is in the next poll
        fresh = tuple(streams.drain())
        return NodesReading(streams.latest(), fresh, tuple(streams.states()), ended, streams.error)

    def close(self) -> None:
        self.streams.close()
