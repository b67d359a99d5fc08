"""Provides the watch screen's logic without Textual: which process rows to show in which
order (sort, filter, user, tree), the interval steps, what goes into `History`, and verdicts
judged on window means.

Kept apart from the screen so it is testable with plain snapshots, and so the main thread's
work per key press is a sort of a few hundred tuples, nothing more.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple, Sequence

from gpuscope.metrics.job import verdicts
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import JobScope, ProcessRow, Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import NOT_IN_PROC, busy_cores, gpus_used, is_kernel_thread, scope_memory_used, scope_processes

INTERVALS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
"""Refresh periods `+`/`-` step through, in seconds (NVML itself samples at ~1/6 s to 1 s)."""
VERDICT_WINDOW = verdicts.WINDOW_S
"""Verdicts judge the last minute, so one quiet second does not flag a GPU as idle."""

Key = Callable[[ProcessRow], float]
SORTS: dict[str, tuple[str, Key, bool]] = {
    "cpu": ("CPU%", lambda p: -1.0 if p.cpu_percent is None else p.cpu_percent, True),
    "mem": ("MEM", lambda p: float(p.rss), True),
    "gpu_mem": ("GPU MEM", lambda p: -1.0 if p.gpu_memory is None else float(p.gpu_memory), True),
    "sm": ("SM%", lambda p: -1.0 if p.gpu_sm_percent is None else p.gpu_sm_percent, True),
    "pid": ("PID", lambda p: float(p.pid), False),
    "time": ("TIME+", lambda p: -1.0 if p.cpu_time is None else p.cpu_time, True),  # CPU time, as htop's TIME+
}
"""Sort keys: (label, key, biggest first). A click on a header
sorts by its column (`snapshot_tables.PROCESS_COLUMNS[i].sort`)."""


@dataclass(frozen=True)
class ProcessView:
    """How the process table is cut: sort column, filters, tree, and whose processes."""

    sort: str = "cpu"
    reverse: bool = False
    """Flip the natural order of `sort` (htop's `I`)."""
    text: str = ""
    """Case-insensitive substring of the command (`/`)."""
    user: str | None = None
    """Only this user's processes (`u`); None for everyone's."""
    tree: bool = False
    everyone: bool = False
    """Every process on the node instead of only the scope's (`a`)."""
    kernel: bool = False
    """Show kernel threads (htop's `K`): hidden by default, dozens of idle rows on a node."""
    folded: frozenset[int] = frozenset()
    """Tree view: pids whose children are hidden (left/right arrows fold and unfold)."""

    @property
    def sort_label(self) -> str:
        return SORTS[self.sort][0] + (" (reversed)" if self.reverse else "")

    @property
    def descending(self) -> bool:
        """Biggest first: the sort's natural order unless inverted."""
        return SORTS[self.sort][2] ^ self.reverse


class ShownRow(NamedTuple):
    """A process row as the table shows it: with its tree prefix (empty outside tree view).

    A named tuple, not a frozen dataclass: one is built per process per refresh, and a frozen
    dataclass costs five times as much to build."""

    row: ProcessRow
    prefix: str = ""


CYCLE = ("cpu", "mem", "gpu_mem", "pid", "time")
"""What `s`/F6 steps through; SM% is sorted by a click on its header."""


def next_sort(view: ProcessView) -> ProcessView:
    keys = list(CYCLE)
    if view.sort not in keys:
        return dataclasses.replace(view, sort=keys[0])
    return dataclasses.replace(view, sort=keys[(keys.index(view.sort) + 1) % len(keys)])


def users_present(rows: Sequence[ProcessRow], me: str | None) -> list[str]:
    """Users in the table, yours first, then by name."""
    names = sorted({p.user for p in rows})
    if me in names:
        names.remove(me)
        names.insert(0, me)
    return names


def next_user(view: ProcessView, rows: Sequence[ProcessRow], me: str | None) -> ProcessView:
    """Everyone -> you -> each other user present -> everyone."""
    cycle: list[str | None] = [None, *users_present(rows, me)]
    position = cycle.index(view.user) if view.user in cycle else 0
    return dataclasses.replace(view, user=cycle[(position + 1) % len(cycle)])


def step_interval(current: float, step: int) -> float:
    """The next slower (+1) or faster (-1) period of `INTERVALS`, clamped at the ends."""
    later = [i for i in INTERVALS if i > current + 1e-9]
    earlier = [i for i in INTERVALS if i < current - 1e-9]
    if step > 0:
        return later[0] if later else INTERVALS[-1]
    return earlier[-1] if earlier else INTERVALS[0]


def base_rows(snapshot: Snapshot, view: ProcessView) -> tuple[ProcessRow, ...]:
    """The scope's processes, or all of them, kernel threads only when asked for; before the
    user and text filters."""
    rows = snapshot.processes if view.everyone else scope_processes(snapshot)
    return rows if view.kernel else tuple(p for p in rows if not is_kernel_thread(p))


def select_rows(snapshot: Snapshot, view: ProcessView, previous: Mapping[int, int] | None = None) -> list[ShownRow]:
    """Filter, then sort (or sort within each parent in tree view).

    Ties keep the order of `previous` (pid -> row index on screen now), then pid order for
    processes new to it, as htop's insertion sort does: a process whose CPU % drops to 0
    stops at the top of the idle ones instead of travelling to its pid's place, so one
    change moves one row, not every row in between (each moved row is a line redrawn)."""
    rows = base_rows(snapshot, view)
    if view.user is not None:
        rows = tuple(p for p in rows if p.user == view.user)
    if view.text:
        needle = view.text.casefold()
        rows = tuple(p for p in rows if needle in p.command.casefold())
    _, key, descending = SORTS[view.sort]
    descending ^= view.reverse

    seen = previous or {}
    unseen = len(seen)

    sign = -1.0 if descending else 1.0

    def order(items: Sequence[ProcessRow]) -> list[ProcessRow]:
        # Keys built in one pass and compared as plain tuples: no Python call per comparison;
        # the position last breaks ties of equal pids (the all-nodes view: pids repeat across
        # nodes), so two rows themselves are never compared.
        return [t[4] for t in sorted([(sign * key(p), seen.get(p.pid, unseen), p.pid, i, p) for i, p in enumerate(items)])]

    if not view.tree:
        new = tuple.__new__  # what ShownRow(p) does, minus a Python-level call per process
        return [new(ShownRow, (p, "")) for p in order(rows)]
    nodes: dict[str, list[ProcessRow]] = {}
    for p in rows:  # the all-nodes view: a tree per node, pids repeat across nodes
        nodes.setdefault(getattr(p, "node", ""), []).append(p)
    return [shown for node in sorted(nodes) for shown in tree_rows(nodes[node], order, view.folded)]


FOLDED_MARK = "⊞ "
"""Ends the tree prefix of a folded process (its children hidden)."""


def tree_rows(rows: Sequence[ProcessRow], order: Callable[[Sequence[ProcessRow]], list[ProcessRow]],
              folded: frozenset[int] = frozenset()) -> list[ShownRow]:
    """Depth-first by ppid with `├─`/`└─` prefixes; a row whose parent is not shown is a root.
    The children of `folded` pids are left out and their parent is marked `⊞`."""
    pids = {p.pid for p in rows}
    children: dict[int, list[ProcessRow]] = {}
    roots: list[ProcessRow] = []
    for p in rows:
        if p.ppid in pids and p.ppid != p.pid:
            children.setdefault(p.ppid, []).append(p)
        else:
            roots.append(p)
    out: list[ShownRow] = []
    seen: set[int] = set()
    # Rows in a ppid cycle (possible in a racy snapshot) have no root: they start trees too.
    for root in order(roots) + order(rows):
        stack: list[tuple[ProcessRow, str, str]] = [(root, "", "")]
        while stack:
            row, prefix, indent = stack.pop()
            if row.pid in seen:
                continue
            seen.add(row.pid)
            if row.pid in folded and row.pid in children:
                out.append(ShownRow(row, prefix + FOLDED_MARK))
                stack_hidden = list(children[row.pid])
                while stack_hidden:  # hidden, and not roots of their own tree below
                    kid = stack_hidden.pop()
                    if kid.pid not in seen:
                        seen.add(kid.pid)
                        stack_hidden.extend(children.get(kid.pid, []))
                continue
            out.append(ShownRow(row, prefix))
            kids = order(children.get(row.pid, []))
            for i, kid in reversed(list(enumerate(kids))):
                last = i == len(kids) - 1
                stack.append((kid, indent + ("└─ " if last else "├─ "), indent + ("   " if last else "│  ")))
    return out


def record(history: History, snapshot: Snapshot) -> None:
    """Append one snapshot's numbers: per-GPU use and activity, host CPU and memory, scope
    totals; and each GPU's energy and power to `history.energy`."""
    host = snapshot.host
    values: dict[str, float | None] = {}
    cores = host.cpu_percent
    values["cpu.mean"] = sum(cores) / len(cores) if cores else None
    mem = host.memory
    values["host.mem"] = 100.0 * mem.used / mem.total if mem.total else None
    values["host.swap"] = 100.0 * mem.swap_used / mem.swap_total if mem.swap_total else None
    utils, mems = [], []
    for g in snapshot.gpus:
        mem_pct = None
        if g.memory_used is not None and g.memory_total:
            mem_pct = 100.0 * g.memory_used / g.memory_total
            mems.append(mem_pct)
        if g.util_gpu is not None:
            utils.append(g.util_gpu)
        values[f"gpu{g.index}.util"] = g.util_gpu
        values[f"gpu{g.index}.mem"] = mem_pct
        values[f"gpu{g.index}.mem_bytes"] = None if g.memory_used is None else float(g.memory_used)
        values[f"gpu{g.index}.sm_active"] = g.sm_active_pct
        values[f"gpu{g.index}.tensor"] = g.tensor_active_pct
        values[f"gpu{g.index}.dram"] = g.dram_bw_pct
        if g.error is None:
            history.energy.add(g.index, g.timestamp, g.energy_mj, g.power_w, g.energy_note)
    values["gpu.util_mean"] = sum(utils) / len(utils) if utils else None
    values["gpu.util_max"] = max(utils) if utils else None
    values["gpu.mem_mean"] = sum(mems) / len(mems) if mems else None
    busy = values["scope.cores"] = busy_cores(scope_processes(snapshot))
    allocated = snapshot.scope.cpus_allocated
    values["scope.cpu_share"] = None if busy is None or not allocated else 100.0 * busy / allocated
    used = scope_memory_used(snapshot)
    values["scope.mem"] = None if used is None else float(used)
    history.append(host.timestamp, values)


def window_verdicts(snapshot: Snapshot, history: History, seconds: float = VERDICT_WINDOW) -> tuple[Verdict, ...]:
    """`metrics.verdicts.judge` on the last `seconds` of history (node scope: none)."""
    scope = snapshot.scope
    if scope.kind == "node":
        return ()
    if scope.memory_peak is None:
        peak = history.peak("scope.mem")
        scope = dataclasses.replace(scope, memory_peak=None if peak is None else int(peak))
    utilisation = {g.index: history.window_mean(f"gpu{g.index}.util", seconds) for g in snapshot.gpus}
    rows = scope_processes(snapshot)
    return verdicts.judge(scope, history.window_mean("scope.cores", seconds), utilisation, gpus_used(snapshot, rows))


def scope_gpus(snapshot: Snapshot) -> tuple[int, ...]:
    """The GPUs a view is about: the scope's allocated ones, else those its processes use, or
    every GPU for a whole node."""
    given = sorted({g.index for g in snapshot.scope.gpus if g.index is not None})
    if given:
        return tuple(given)
    if snapshot.scope.kind == "node":
        return tuple(g.index for g in snapshot.gpus)
    return tuple(sorted(gpus_used(snapshot, scope_processes(snapshot))))


def activity_verdicts(snapshot: Snapshot, history: History, seconds: float = VERDICT_WINDOW) -> tuple[Verdict, ...]:
    """`metrics.verdicts.activity` for each GPU of the view, on window means: a GPU whose
    utilisation says busy while its SMs are mostly idle."""
    found = (verdicts.activity(i, history.window_mean(f"gpu{i}.util", seconds), history.window_mean(f"gpu{i}.sm_active", seconds))
             for i in scope_gpus(snapshot))
    return tuple(v for v in found if v is not None)


def my_user_name(rows: Sequence[ProcessRow], uid: int) -> str | None:
    """The name the table uses for `uid` (from the rows themselves, so it matches)."""
    return next((p.user for p in rows if p.uid == uid), None)


def unseen_gpu_pids(snapshot: Snapshot) -> int:
    """GPU processes absent from the node's process list: NVML gives host pids, which a
    container's /proc does not have (users then see busy GPUs and no processes). Only the
    node view lists every process, so only there is absence evidence; simulated GPUs run
    made-up pids, so they are no evidence either."""
    if snapshot.scope.kind != "node" or snapshot.gpu_status.backend == "simulated":
        return 0
    listed = {p.pid for p in snapshot.processes if p.state != NOT_IN_PROC}
    return len({gp.pid for g in snapshot.gpus for gp in g.processes} - listed)


def browse_target(scope: JobScope | None, cwd: str, is_dir: Callable[[str], bool]) -> tuple[str, str | None, str | None]:
    """Where `b` opens the browser: (folder, file to select, note). A job's working directory
    with its output file selected (`WorkDir`, `StdOut` from scontrol show job); the current
    folder when there is no job, or its working directory is not on this node (the note says so)."""
    if scope is None or scope.kind != "job" or not scope.work_dir:
        return cwd, None, None
    if not is_dir(scope.work_dir):
        return cwd, None, f"the job's working directory {scope.work_dir} is not here: browsing {cwd}"
    return scope.work_dir, scope.stdout, None


def recording_name(scope: JobScope | None, hostname: str, now: float | None = None) -> str:
    """`R`'s default file: `gpuscope-<scope>-<YYYYmmdd-HHMMSS>.gsrec` in the current folder,
    e.g. `gpuscope-job4242-20250101-120000.gsrec`; the node's name for a whole node."""
    if scope is not None and scope.kind == "job" and scope.job_id:
        what = f"job{scope.job_id}"
    elif scope is not None and scope.kind == "user" and scope.user:
        what = f"user-{scope.user}"
    elif scope is not None and scope.kind == "pid" and scope.pids:
        what = f"pid{min(scope.pids)}"
    else:
        what = hostname.split(".")[0]
    what = re.sub(r"[^A-Za-z0-9_.-]+", "_", what).strip("._") or "node"
    return f"gpuscope-{what[:40]}-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}.gsrec"
