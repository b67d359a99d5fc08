"""Provides `GpuscopeCommands`: our entries in Textual's command palette (ctrl+p).

Each command runs an action on the screen the palette was opened from, and is offered only
when that screen has the action, so screens without (say) a metric switch do not list it.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (title, help, action, target): target "screen" runs on the calling screen, "app" on the app.
COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("Switch metric", "Show Gflop/s or time in ms", "switch_metric", "screen"),
    ("Next cluster size", "All sizes pooled, then each node count", "next_cluster", "screen"),
    ("Next MAGMA test", "Cycle the tests present (dgemm, dgemm_vbatched, ...)", "next_test", "screen"),
    ("Next sort", "Sort the table by the next key", "cycle_sort", "screen"),
    ("Group kernels", "One row per kernel, per direction or per op", "cycle_group", "screen"),
    ("Filter rows", "Show only rows whose name contains a text", "filter", "screen"),
    ("Export summary", "Write the summary table to CSV, markdown, JSON or text", "export", "screen"),
    ("Toggle theme", "Switch between the dark and the light theme", "toggle_theme", "app"),
)


class GpuscopeCommands(Provider):
    """Switch metric, next cluster size, next test, sort, group, filter, export, toggle theme."""

    def _available(self) -> list[tuple[str, str, Callable[[], object]]]:
        found = []
        for title, help_text, action, target in COMMANDS:
            node = self.app if target == "app" else self.screen
            if callable(getattr(node, f"action_{action}", None)):
                # A screen may word a shared command its own way (the kernels export writes a tab).
                title = getattr(node, "COMMAND_TITLES", {}).get(action, title)
                found.append((title, help_text, partial(node.run_action, action)))
        return found

    async def discover(self) -> Hits:
        for title, help_text, callback in self._available():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
