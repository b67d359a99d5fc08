"""Provides `BrowseTree`: Textual's `DirectoryTree` with each file's kind and one-line summary.

Folders load lazily, as in `DirectoryTree` (a folder's entries are listed when it is opened,
in a thread); recognition runs elsewhere (the browser's worker) and lands in `recognitions`,
which labels read when they are drawn. `show_recognitions()` repaints the visible lines once
per batch, never once per file. Names come from outside: a label is plain text without
escape sequences (`metrics.safe_text.clean`), never markup, so `[red]x[/]` reads as typed.
"""

from __future__ import annotations

from pathlib import Path
import asyncio
from typing import Any, ClassVar, Iterable

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text, TextType
from textual.binding import Binding
from textual.widgets import DirectoryTree
from textual.widgets.directory_tree import DirEntry
from textual.widgets.tree import TreeNode

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.files import display_name
from gpuscope.tui.model.folder import FolderCounts

PENDING = "…"
"""Shown after a file not recognised yet."""
MARK_TIP = "Mark or unmark the file or folder for a diff (two at most: the first is the base, the second the new run)"
MARK_LABELS = (" base ", " new ")
"""Before a marked entry's name, in the order marked (the browser's `d` compares them)."""


class BrowseTree(DirectoryTree):
    """A folder tree whose files say what they are; problem files are dimmed, with why."""

    ICON_NODE = "▸ "
    ICON_NODE_EXPANDED = "▾ "
    ICON_FILE = "  "
    """Plain glyphs: the emoji icons of `DirectoryTree` are two cells in some terminals and one
    in others (tmux), which shifts every label."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", tooltip="Open the file in the view for its kind; on a folder, unfold or fold it"),
        Binding("right", "unfold", "Unfold", show=False, tooltip="Unfold the folder under the cursor (ranger, yazi)"),
        Binding("left", "fold", "Fold", show=False, tooltip="Fold the folder under the cursor, or go to the folder above"),
        Binding("space", "screen.toggle_mark", "Mark", tooltip=MARK_TIP),
    ]
    """Enter, shown in the footer (the tree's own is hidden); right and left as file managers do;
    space marks for a diff (the browser's action) instead of folding, which Enter does."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"browse-tree--kind", "browse-tree--summary", "browse-tree--problem", "browse-tree--mark"}
    DEFAULT_CSS = """
    BrowseTree > .browse-tree--kind {
        color: $text-accent;
    }
    BrowseTree > .browse-tree--summary {
        text-style: dim;
    }
    BrowseTree > .browse-tree--problem {
        color: $text-warning;
        text-style: italic;
    }
    BrowseTree > .browse-tree--mark {
        color: $text;
        background: $accent;
        text-style: bold;
    }
    """

    def __init__(self, path: Path, recognitions: dict[Path, Any], counts: FolderCounts, checks: dict[Path, list[Any]] | None = None,
                 marked: list[Path] | None = None, **kwargs: Any) -> None:
        """`recognitions`: path -> `Recognition`, filled by the browser as batches arrive;
        `counts`: kinds per folder, for folder labels; `checks`: path -> expected-range results;
        `marked`: the paths marked for a diff, oldest first (the browser's list)."""
        self.recognitions = recognitions
        self.counts = counts
        self.checks = checks if checks is not None else {}
        self.marked = marked if marked is not None else []
        self.base = Path(path).resolve()
        """The root as the listing names its entries (resolved); `path` may be relative, as
        typed, and is what the root's label shows."""
        self.done = False
        """Recognition has finished: a file without one is not pending but unrecognised."""
        super().__init__(path, **kwargs)

    def action_unfold(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            node.expand()

    def action_fold(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and node.is_expanded:
            node.collapse()
        elif node.parent is not None:
            self.move_cursor(node.parent)

    def process_label(self, label: TextType) -> Text:
        """A name as plain text: escape sequences and controls removed, undecodable bytes
        shown as U+FFFD, never parsed as markup."""
        plain = label.plain if isinstance(label, Text) else str(label)
        return Text(clean(display_name(plain)))

    def render_label(self, node: TreeNode[DirEntry], base_style: Style, style: Style) -> Text:
        """The name, then the kind and summary (a folder: its files counted per kind), or,
        dimmed, why the entry cannot be read."""
        text = super().render_label(node, base_style, style)
        if node.data is None or not self.is_mounted:
            return text
        path = self.base if node.parent is None else node.data.path  # the root's own path is as typed
        if path in self.marked:
            mark = Text(MARK_LABELS[self.marked.index(path)], self.get_component_rich_style("browse-tree--mark", partial=True))
            text = Text.assemble(mark, " ", text)
        rec = self.recognitions.get(path)
        if node.allow_expand:  # a folder is recognised only when it cannot be listed or is a link
            if rec is not None and rec.problem is not None and rec.problem.kind != "folder":
                return self._problem(text, rec.problem.message)
            return self._more(text, self.counts.line(path))
        if rec is None:
            return text if self.done else self._more(text, PENDING)
        if rec.kind is None:
            return self._problem(text, rec.problem.message if rec.problem is not None else "not recognised")
        text.append("  ").append(clean(rec.kind), self.get_component_rich_style("browse-tree--kind", partial=True))
        self._more(text, clean(rec.summary))
        checked = self.checks.get(path, ())
        failed = sum(r.status == "FAIL" for r in checked)
        if failed:
            self._problem(text, f"{failed} expected range{'s' if failed > 1 else ''} missed", dim=False)
        elif checked and all(r.status == "pass" for r in checked):
            self._more(text, "✓ expected ranges")
        return self._problem(text, rec.problem.message, dim=False) if rec.problem is not None else text

    def get_label_width(self, node: TreeNode[DirEntry]) -> int:
        """The name's width: Textual sizes the tree by every line's width, each found by drawing
        the whole label, which was most of listing a 500-file folder (bench/open_bench.py).
        A longer label is cut at the pane's edge anyway (no horizontal scroll)."""
        return len(self.ICON_NODE) + cell_len(node.label.plain)

    def _more(self, text: Text, more: str) -> Text:
        if more:
            text.append("  ").append(more, self.get_component_rich_style("browse-tree--summary", partial=True))
        return text

    def _problem(self, text: Text, message: str, dim: bool = True) -> Text:
        if dim:
            text.stylize("dim")
        return text.append("  ").append(f"⚠ {clean(message)}", self.get_component_rich_style("browse-tree--problem", partial=True))

    def show_recognitions(self) -> None:
        """Repaint after a batch: every line's cache key holds the root's update count (the
        root is on every line's path), so refreshing the root invalidates them all, and
        only the visible lines are drawn again."""
        self.root.refresh()
        self.refresh()

    def node_for(self, path: Path) -> TreeNode[DirEntry] | None:
        """The loaded node of `path` (None when a folder on the way has not been listed)."""
        if path == self.base:
            return self.root
        if self.base not in path.parents:
            return None
        node: TreeNode[DirEntry] | None = self.root
        for part in path.relative_to(self.base).parts:
            assert node is not None
            node = next((c for c in node.children if c.data is not None and c.data.path.name == part), None)
            if node is None:
                return None
        return node

    async def reveal(self, path: Path) -> TreeNode[DirEntry] | None:
        """Open every folder down to `path` and put the cursor on it; its node, or None when
        it is not below the root (or gone)."""
        base = self.base
        if not (path == base or base in path.parents):
            return None
        await self._root_loaded()
        for folder in [*reversed(path.relative_to(base).parents)][1:]:
            node = self.node_for(base / folder)
            if node is None:
                return None
            if node.data is not None and not node.data.loaded:
                await self.reload_node(node)  # lists the folder and opens it, under the tree's lock
            elif not node.is_expanded:
                node.expand()
        target = self.node_for(path)
        if target is not None:
            # The lines (and so each node's line number) are rebuilt lazily, at the next
            # render; asking for a line rebuilds them now, so the cursor lands on `target`,
            # not on the stale line -1 (the root).
            self.get_node_at_line(0)
            self.move_cursor(target, animate=False)
            self.scroll_to_node(target, animate=False)
        return target

    async def _root_loaded(self, timeout: float = 5.0) -> None:
        """Wait for the first listing of the root (started by the tree when it mounts)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while (self.root.data is None or not self.root.data.loaded) and loop.time() < end:
            await asyncio.sleep(0.01)
        async with self.lock:  # the listing populates the root while holding it
            pass

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """Hidden names (`.git`) are left out, as `files.walk` leaves them out."""
        return [p for p in paths if not p.name.startswith(".")]
