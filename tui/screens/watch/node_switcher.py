"""Provides `NodeSwitcher`: one line naming the entries of a multi-node watch (all nodes, then
each node with its state: silent, or ended and why), the one shown in reverse video.

Hidden for a job on one node. The text comes from `tui.model.nodes_view.switcher_text`; like
`StatusLine` this is a plain `Widget` whose `show()` repaints its one line, no layout pass.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from gpuscope.tui.model.nodes import NodesView, switcher_text


class NodeSwitcher(Widget):
    DEFAULT_CSS = """
    NodeSwitcher {
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.view: NodesView | None = None

    def show(self, view: NodesView) -> None:
        self.view = view
        self.refresh()

    def render(self) -> Text:
        if self.view is None:
            return Text("Nodes: waiting for the first reading…", style="dim")
        return switcher_text(self.view, max(1, self.content_region.width))
