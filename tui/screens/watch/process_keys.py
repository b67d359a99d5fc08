"""Provides `ProcessKeys`: the watch screen's process-table keys (sort, invert, header click,
tree and folding, user, all/scope, kernel threads, `/`/F4 filter, F3 search, F7/F8 renice,
F2 setup) as a mixin.

Most keys only replace the immutable `ProcessView` and re-cut rows already on the main
thread, which is why they repaint at once even while a slow poll is running. `a` also asks a
live source for every process of the node (it reads only the scope's otherwise) and polls.
"""

from __future__ import annotations

import dataclasses
import os
from functools import partial
from typing import TYPE_CHECKING, Callable

from textual.widgets import Input

from gpuscope.collectors import signals
from gpuscope.metrics.safe_text import clean
from gpuscope.tui.model import settings as config
from gpuscope.tui.model.settings import Settings
from gpuscope.tui.model.watch import SORTS, ProcessView, base_rows, my_user_name, next_sort, next_user
from gpuscope.tui.screens.setup import SetupScreen
from gpuscope.tui.screens.watch.dialogs import ReniceModal, SignalModal, deliver, deliver_renice, refusal, renice_refusal
from gpuscope.tui.screens.watch.process_table import ProcessTable

if TYPE_CHECKING:
    from gpuscope.metrics.samples import JobScope, ProcessRow, Snapshot


class ProcessKeys:
    """Mixed into `WatchScreen`, which provides `view`, `snapshot`, `refresh_table`, `query_one`."""

    view: ProcessView
    snapshot: Snapshot | None
    source: object
    readonly: bool
    interval: float
    auto: bool
    paused: bool
    applied_at: float | None
    searching: bool = False
    """The text box searches (F3: the cursor jumps to a match) instead of filtering."""
    OFF_REASON = "gpuscope was started with --readonly"
    """Why F7/F8 do nothing when `readonly` is set (a replay says its own)."""

    def refresh_table(self) -> None:  # pragma: no cover - the screen's
        raise NotImplementedError

    def _status(self) -> None:  # pragma: no cover - the screen's
        raise NotImplementedError

    def poll_now(self) -> object:  # pragma: no cover - the screen's
        raise NotImplementedError

    def _arm(self) -> None:  # pragma: no cover - the screen's
        raise NotImplementedError

    def _signal_target(self, row: ProcessRow) -> tuple[ProcessRow | None, JobScope | None, str | None]:  # pragma: no cover - the screen's
        raise NotImplementedError

    def on_mount(self) -> None:
        """The saved columns (Textual calls each class's `on_mount`; the screen's comes first).
        A config file that cannot be used is said once; the defaults apply."""
        saved, problem = config.load()
        self.query_one(ProcessTable).hide_columns(saved.hidden_columns)
        if problem:
            self.notify(clean(problem), title="Settings", severity="warning", markup=False, timeout=8)  # type: ignore[attr-defined]

    def _set_view(self, view: ProcessView) -> None:
        self.view = view
        self.refresh_table()

    def action_cycle_sort(self) -> None:
        self._set_view(next_sort(self.view))

    def action_invert_sort(self) -> None:
        self._set_view(dataclasses.replace(self.view, reverse=not self.view.reverse))

    def action_toggle_tree(self) -> None:
        self._set_view(dataclasses.replace(self.view, tree=not self.view.tree))

    def on_process_table_header_clicked(self, event: ProcessTable.HeaderClicked) -> None:
        """A click on a header sorts by it; on the sorted column, it flips the order."""
        if event.sort in SORTS:
            same = event.sort == self.view.sort
            self._set_view(dataclasses.replace(self.view, sort=event.sort, reverse=same and not self.view.reverse))

    def action_fold(self, fold: bool) -> None:
        """Tree view: hide (left) or show again (right) the children of the selected process."""
        row = self.query_one(ProcessTable).selected
        if not self.view.tree or row is None:
            return
        folded = self.view.folded | {row.pid} if fold else self.view.folded - {row.pid}
        if folded != self.view.folded:
            self._set_view(dataclasses.replace(self.view, folded=frozenset(folded)))

    def action_toggle_kernel(self) -> None:
        self._set_view(dataclasses.replace(self.view, kernel=not self.view.kernel))

    def action_toggle_everyone(self) -> None:
        if self.snapshot is not None and self.snapshot.scope.kind == "node" and not self.view.everyone:
            # The node's scope is every process: 'all' would only rename it.
            self.notify("Watching the whole node: every process is listed already.", title="All", timeout=3)  # type: ignore[attr-defined]
            return
        self._set_view(dataclasses.replace(self.view, everyone=not self.view.everyone, user=None))
        self._list_everyone(self.view.everyone)

    def _list_everyone(self, everyone: bool) -> None:
        """Have the live source read every process of the node, or only the scope's again, and
        poll at once so the rows come now, not a refresh later. The source is found through
        the wrappers that keep theirs as `.source` (a recording); a source without `everyone`
        (a replay, another node's stream) lists what it has."""
        source = self.source
        while source is not None and not hasattr(source, "everyone"):
            source = getattr(source, "source", None)
        if source is None or source.everyone == everyone:  # type: ignore[attr-defined]
            return
        source.everyone = everyone  # type: ignore[attr-defined]
        if self.auto and not self.paused:
            self.poll_now()  # a poll in flight already: the next tick brings them

    def action_cycle_user(self) -> None:
        rows = base_rows(self.snapshot, self.view) if self.snapshot else ()
        self._set_view(next_user(self.view, rows, my_user_name(rows, os.getuid())))

    def action_filter(self) -> None:
        """`/`, F4: show the filter box; typing narrows the rows at once."""
        self._open_box(searching=False, placeholder="filter: part of a command (Enter keeps it, Escape clears)")

    def action_search(self) -> None:
        """F3: the box searches; typing moves the cursor to the first match, F3 to the next."""
        if self.searching and self.query_one("#watch-filter", Input).display:
            self._jump(self.query_one("#watch-filter", Input).value, after=True)
            return
        self._open_box(searching=True, placeholder="search: part of a command (F3 next, Enter or Escape closes)")

    def _open_box(self, searching: bool, placeholder: str) -> None:
        box = self.query_one("#watch-filter", Input)
        if searching != self.searching:
            with box.prevent(Input.Changed):
                box.value = "" if searching or not self.view.text else self.view.text
        self.searching = searching
        box.placeholder = placeholder
        box.display = True
        box.focus()
        self._status()

    def _jump(self, text: str, after: bool = False) -> None:
        """Move the cursor to the next row (from the cursor on) whose command contains `text`."""
        needle = text.strip().casefold()
        table = self.query_one(ProcessTable)
        if not needle or not table.shown:
            return
        count = len(table.shown)
        start = table.cursor_row + (1 if after else 0)
        for step in range(count):
            index = (start + step) % count
            if needle in table.shown[index].row.command.casefold():
                table.move_cursor(index)
                return

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "watch-filter":
            return
        if self.searching:
            self._jump(event.value)
            self._status()
        else:
            self._set_view(dataclasses.replace(self.view, text=event.value.strip()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "watch-filter":
            return
        box = event.input
        box.display = bool(box.value.strip()) and not self.searching
        self.query_one(ProcessTable).focus()
        self._status()

    def action_clear_filter(self) -> None:
        box = self.query_one("#watch-filter", Input)
        if self.searching:  # Escape ends a search; the cursor stays where it found the process
            self.searching = False
            with box.prevent(Input.Changed):
                box.value = self.view.text
            box.display = bool(self.view.text)
            self.query_one(ProcessTable).focus()
            self._status()
            return
        with box.prevent(Input.Changed):
            box.value = ""
        box.display = False
        self.query_one(ProcessTable).focus()
        self._set_view(dataclasses.replace(self.view, text=""))

    # --- k / F9 signals, F7 / F8 renice ------------------------------------------------------

    def action_signal_refused(self) -> None:
        self.notify("Signals are off: gpuscope was started with --readonly.", title="Read-only", severity="warning")  # type: ignore[attr-defined]

    def action_signal(self) -> None:
        chosen = self._chosen_target(refusal, "Not sent")
        if chosen is not None:
            row, target, scope = chosen
            self.app.push_screen(SignalModal(target, scope), partial(self.send_signal, row))  # type: ignore[attr-defined]

    def _chosen_target(self, refuse: Callable[[ProcessRow, JobScope], str | None],
                       title: str) -> tuple[ProcessRow, ProcessRow, JobScope] | None:
        """(the selected row, that process as checked, its scope) when `refuse` lets it be acted
        on; else None, and the reason said under `title`."""
        row = self.query_one(ProcessTable).selected
        if row is None or self.snapshot is None:
            self.notify("No process selected.", severity="warning")  # type: ignore[attr-defined]
            return None
        target, scope, reason = self._signal_target(row)
        if target is None or scope is None or (reason := refuse(target, scope)) is not None:
            self.notify(clean(reason or ""), title=title, severity="warning", markup=False)  # type: ignore[attr-defined]
            return None
        return row, target, scope

    def _signal_target(self, row: ProcessRow) -> tuple[ProcessRow | None, JobScope | None, str | None]:
        """(row, scope it is checked against, why not). Across nodes: the row as its own node
        reported it, with that node's scope, and only on this node (another node's pid means
        nothing here)."""
        if self.nodes is None:  # type: ignore[attr-defined]
            return row, (self.snapshot.scope if self.snapshot is not None else None), None
        node = getattr(row, "node", "") or self.nodes.selected  # type: ignore[attr-defined]
        here = self._host  # type: ignore[attr-defined]
        snap = next((s for n, s in self.nodes.snapshots.items() if clean(n) == node and n.split(".")[0] == here), None)  # type: ignore[attr-defined]
        if snap is None:
            return None, None, f"PID {row.pid} runs on node {node}, not on this one ({here}): ssh there to signal it."
        own = next((p for p in snap.processes if p.pid == row.pid), None)  # its own start time, not the aggregate's
        return own, snap.scope, None if own is not None else f"PID {row.pid} is no longer listed on {node}."

    def send_signal(self, row: ProcessRow, signum: int | None) -> None:
        """After confirmation (None: cancelled): `watch_dialogs.deliver` checks and sends."""
        if signum is None:
            return
        target, scope, reason = self._signal_target(row)  # the scope as of now: a job's pids change
        if target is not None and scope is not None:
            text, severity = deliver(target, signum, scope, listed=self.applied_at is not None)  # type: ignore[attr-defined]
            self.notify(text, severity=severity, markup=False)  # type: ignore[attr-defined, arg-type]
        elif reason:
            self.notify(clean(reason), title="Not sent", severity="warning", markup=False)  # type: ignore[attr-defined]

    def action_renice(self, step: int) -> None:
        """F7 (-1: higher priority) or F8 (+1: lower): your own process's nice value, one step,
        after confirming. The rules are `collectors.signals`'; the kernel may still refuse."""
        if self.readonly:
            self.notify(f"Renice is off: {self.OFF_REASON}.", title="Read-only", severity="warning")  # type: ignore[attr-defined]
            return
        chosen = self._chosen_target(renice_refusal, "Not reniced")
        if chosen is not None:
            row, target, _ = chosen
            dialog = ReniceModal(target, step, signals.nice_of(target.pid), root=signals.caller().root)
            self.app.push_screen(dialog, partial(self.renice_to, row, step))  # type: ignore[attr-defined]

    def renice_to(self, row: ProcessRow, step: int, confirmed: bool | None) -> None:
        """After confirmation: `collectors.signals.renice` checks again (the scope as of now) and renices."""
        if not confirmed:
            return
        target, scope, reason = self._signal_target(row)
        if target is not None and scope is not None:
            text, severity = deliver_renice(target, step, scope, listed=self.applied_at is not None)
            self.notify(text, title="Renice", severity=severity, markup=False)  # type: ignore[attr-defined, arg-type]
        elif reason:
            self.notify(clean(reason), title="Not reniced", severity="warning", markup=False)  # type: ignore[attr-defined]

    # --- F2 setup ------------------------------------------------------------------------------

    def action_setup(self) -> None:
        """F2: columns, refresh period and theme; Save applies them and writes the config file."""
        saved, _ = config.load()
        current = dataclasses.replace(saved, hidden_columns=self.query_one(ProcessTable).hidden)
        app = self.app  # type: ignore[attr-defined]
        self.app.push_screen(SetupScreen(current, self.interval, app.theme, list(app.available_themes), config.config_path()),  # type: ignore[attr-defined]
                             self.apply_setup)

    def apply_setup(self, chosen: Settings | None) -> None:
        """Apply what the setup chose (None: cancelled) and keep it in the config file."""
        if chosen is None:
            return
        self.query_one(ProcessTable).hide_columns(chosen.hidden_columns)
        if chosen.interval is not None and chosen.interval != self.interval:
            self.interval = chosen.interval
            self._arm()  # the pending wait restarts at the new period
        if chosen.theme and chosen.theme in self.app.available_themes:  # type: ignore[attr-defined]
            self.app.theme = chosen.theme  # type: ignore[attr-defined]
        self._status()
        problem = config.save(chosen)
        if problem:
            self.notify(clean(problem), title="Settings not saved", severity="error", markup=False)  # type: ignore[attr-defined]
        else:
            self.notify(f"Saved to {clean(str(config.config_path()))}", title="Setup", markup=False, timeout=3)  # type: ignore[attr-defined]
