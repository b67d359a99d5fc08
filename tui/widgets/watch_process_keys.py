"""Provides `ProcessKeys`: the watch screen's process-table keys (sort, invert, tree, user,
all/scope, `/` filter) as a mixin.

Each key only replaces the immutable `ProcessView` and re-cuts rows already on the main
thread, which is why these keys repaint at once even while a slow poll is running.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from textual.widgets import Input

from gpuscope.tui.model.watch_model import ProcessView, base_rows, my_user_name, next_sort, next_user
from gpuscope.tui.widgets.process_table import ProcessTable

if TYPE_CHECKING:
    from gpuscope.metrics.samples import Snapshot


class ProcessKeys:
    """Mixed into `WatchScreen`, which provides `view`, `snapshot`, `refresh_table`, `query_one`."""

    view: ProcessView
    snapshot: Snapshot | None

    def refresh_table(self) -> None:  # pragma: no cover - the screen's
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

    def action_toggle_everyone(self) -> None:
        self._set_view(dataclasses.replace(self.view, everyone=not self.view.everyone, user=None))

    def action_cycle_user(self) -> None:
        rows = base_rows(self.snapshot, self.view) if self.snapshot else ()
        self._set_view(next_user(self.view, rows, my_user_name(rows, os.getuid())))

    def action_filter(self) -> None:
        """`/`: show the filter box; typing narrows the rows at once."""
        box = self.query_one("#watch-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "watch-filter":
            self._set_view(dataclasses.replace(self.view, text=event.value.strip()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "watch-filter":
            return
        box = event.input
        box.display = bool(box.value.strip())
        self.query_one(ProcessTable).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#watch-filter", Input)
        with box.prevent(Input.Changed):
            box.value = ""
        box.display = False
        self.query_one(ProcessTable).focus()
        self._set_view(dataclasses.replace(self.view, text=""))
