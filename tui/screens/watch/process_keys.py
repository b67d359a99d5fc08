"""Provides `ProcessKeys`: the watch screen's process-table keys (sort, invert, header click,
tree and folding, user, all/scope, kernel threads, `/`/F4 filter, F3 search) as a mixin.

Each key only replaces the immutable `ProcessView` and re-cuts rows already on the main
thread, which is why these keys repaint at once even while a slow poll is running.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from textual.widgets import Input

from gpuscope.tui.model.watch import SORTS, ProcessView, base_rows, my_user_name, next_sort, next_user
from gpuscope.tui.screens.watch.process_table import ProcessTable

if TYPE_CHECKING:
    from gpuscope.metrics.samples import Snapshot


class ProcessKeys:
    """Mixed into `WatchScreen`, which provides `view`, `snapshot`, `refresh_table`, `query_one`."""

    view: ProcessView
    snapshot: Snapshot | None
    searching: bool = False
    """The text box searches (F3: the cursor jumps to a match) instead of filtering."""

    def refresh_table(self) -> None:  # pragma: no cover - the screen's
        raise NotImplementedError

    def _status(self) -> None:  # pragma: no cover - the screen's
        raise NotImplementedError

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
