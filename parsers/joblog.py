"""Provides what a batch job's output says about the job around the program it ran: Flux's
jobspec and eventlog trailers (start, end, exit codes, cancellation, nodes), the `Start time:` /
`End time:` epochs a job script echoes, and the node count and host names Slurm variables and
host lines print. A program's reader hands it the lines it does not know itself:

    job = JobLog()
    for line in lines:
        if not job.read(line.strip()):
            ...  # the program's own line
    job.start, job.end, job.exit_code, job.cancelled, job.nodes, job.hosts
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gpuscope.parsers.runlogs.formats import SLURM_VARIABLES

EPOCH = re.compile(r"(Start|End) time:\s*(\d+(?:\.\d+)?)\s*$")
FLUX_EXIT = re.compile(r"flux-job: task\(s\) exited with exit code (\d+)")
FLUX_EXCEPTION = re.compile(r"[\d.]+s: job\.exception type=(\w+)")
FLUX_EVENTS = re.compile(r'"(?:shell\.start|done|shell\.task-exit|exception)"|\\')
"""The eventlog entries that say something (a backslash may escape a name: such a line is
decoded too); most entries say nothing and their JSON is never decoded."""
NODES = re.compile(r"\b(?:" + "|".join(name for name, what in SLURM_VARIABLES.items() if what == "nodes") + r")=(\d+)")
HOST = re.compile(r"\bSLURMD_NODENAME=(\S+)|\bhost(?:name)?[:=]\s*(\S+)", re.IGNORECASE)
KILLED = (130, 137, 143)
"""Exit codes of a task ended by SIGINT, SIGKILL or SIGTERM (128 + signal)."""


@dataclass
class JobLog:
    """What the job's lines said so far (None: not said)."""

    start: float | None = None
    end: float | None = None
    cancelled: bool = False
    nodes: int | None = None
    hosts: set[str] = field(default_factory=set)
    in_trailer: bool = False
    """Past a `START OF ...` line: Flux's trailer, where nothing is the program's output."""
    _in_eventlog: bool = False
    _task_exit: int | None = None
    _flux_exit: int | None = None

    @property
    def exit_code(self) -> int | None:
        """The largest exit code of the tasks in the eventlog, else what `flux-job` printed."""
        return self._task_exit if self._task_exit is not None else self._flux_exit

    def read(self, text: str) -> bool:
        """Read one stripped line; True when it is the job's, not the program's."""
        if text.startswith("{"):  # a JSON record: a Flux trailer's, or one the job printed
            if self._in_eventlog:
                if FLUX_EVENTS.search(text):
                    self._event(_json(text))
            elif self.in_trailer:
                self._jobspec(_json(text))
            return True
        if text.startswith("START OF"):
            self.in_trailer, self._in_eventlog = True, text.startswith("START OF EVENTLOG")
            return True
        said = False
        for found in NODES.finditer(text):
            self.nodes, said = int(found.group(1)), True
        for found in HOST.finditer(text):
            self.hosts.add(found.group(1) or found.group(2))
            said = True
        if (epoch := EPOCH.match(text)) is not None:
            if epoch.group(1) == "End":
                self.end = float(epoch.group(2))
            elif self.start is None:
                self.start = float(epoch.group(2))
        elif (exception := FLUX_EXCEPTION.match(text)) is not None:
            self.cancelled = self.cancelled or exception.group(1) == "cancel"
        elif (exited := FLUX_EXIT.match(text)) is not None:
            self._flux_exit = int(exited.group(1))
        else:
            return said
        return True

    def _event(self, event: dict) -> None:
        name, ctx, stamp = event.get("name"), event.get("context") or {}, event.get("timestamp")
        if not isinstance(ctx, dict):
            return
        if name == "shell.start" and isinstance(stamp, (int, float)):
            self.start = float(stamp)
            taskmap = ctx.get("taskmap")
            blocks = taskmap.get("map") if isinstance(taskmap, dict) else None
            if isinstance(blocks, list) and all(isinstance(b, list) and len(b) >= 2 and isinstance(b[1], int) for b in blocks):
                self.nodes = sum(b[1] for b in blocks)  # [first node, nodes, tasks per node, repeat]
        elif name == "done" and isinstance(stamp, (int, float)):
            self.end = float(stamp)
        elif name == "shell.task-exit":
            code = ctx.get("exitcode")
            if isinstance(code, int):
                self._task_exit = max(code, self._task_exit or 0)
            if ctx.get("signaled") or code in KILLED:
                self.cancelled = True
        elif name == "exception" and ctx.get("type") == "cancel":
            self.cancelled = True

    def _jobspec(self, spec: dict) -> None:
        """Nodes the jobspec asks for (`resources: [{type: node, count: N}]`), unless known."""
        resources = spec.get("resources")
        if isinstance(resources, list) and resources and isinstance(resources[0], dict) and resources[0].get("type") == "node":
            count = resources[0].get("count")
            if isinstance(count, int) and self.nodes is None:
                self.nodes = count


def _json(raw: str) -> dict:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
