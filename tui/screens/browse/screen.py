"""Provides `BrowseScreen`: a result folder as a tree, each file with its kind and summary, a
preview beside it, and Enter into the screen for that kind.

Recognition (`parsers.registry`: a stat and at most a few KB per file) runs over the whole tree
in one thread worker, which posts batches (every `BATCH_S` or `BATCH_FILES` files, whichever
comes first), never a message per file; the tree and the folder counts take each batch in
on the main thread and repaint the visible lines once. The screen is drawn before the first
file is recognised, and keys are answered in between batches. What a view opens over is
pushed on this screen, so Escape (the app's `back`) returns to the tree as it was.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DirectoryTree, Header, Tree
from textual.worker import get_current_worker

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import registry
from gpuscope.parsers.files import display_name, walk
from gpuscope.tui.model.folder import FolderCounts, is_below, studies
from gpuscope.tui.screens.base import FreezesStartup
from gpuscope.tui.screens.browse.open import study_screen, titles, view_screen
from gpuscope.tui.screens.browse.preview import PreviewPane
from gpuscope.tui.screens.browse.tree import MARK_TIP, BrowseTree
from gpuscope.tui.widgets.keys_footer import KeysFooter

BATCH_S = 0.5
BATCH_FILES = 5000
"""A batch goes to the screen after this long or this many files: two repaints a second.
Each repaint (tree lines, title, the preview's counts) takes the main thread, and so the GIL,
from the recognising thread, and a key pressed meanwhile waits for it: at 10 a second, 10,000
files took 4 s instead of 2.4; at 4 a second keys waited 71 ms at the 95th percentile, at 2 a
second 54 ms (bench/browse_bench.py, one run each)."""


class BrowseScreen(FreezesStartup, Screen[None]):
    """Folder tree with kinds and summaries on the left, the selection described on the right."""

    HELP_TITLE = "Keys: browse"
    BINDINGS = [
        Binding("enter", "open", "Open", show=False, tooltip="Open the file in the view for its kind (MAGMA, kernels, scaling, table, log, ...); on a folder, unfold or fold it"),
        Binding("a", "analyse", "Analyse", tooltip="Gather every file of one kind below the folder into one study (asks which when there are several)"),
        Binding("s", "summary", "Summary", tooltip="One page about the folder: files per kind, what could not be read, errors and warnings in logs"),
        Binding("space", "toggle_mark", "Mark", tooltip=MARK_TIP),
        Binding("d", "diff", "Diff", tooltip="Compare the two marked runs: the first marked is the base (gpuscope diff BASE NEW)"),
        Binding("w", "watch", "Watch", tooltip="Switch to the live watch (it keeps its state; b comes back here)"),
    ]
    """Browse keys. The tree answers Enter itself when it has the focus (its binding is the one
    in the footer); this one lists it in the help and opens from the preview. Escape (back
    from a view) is the app's."""

    DEFAULT_CSS = """
    BrowseScreen #browse-body {
        height: 1fr;
    }
    BrowseScreen BrowseTree {
        width: 3fr;
        height: 1fr;
        border-right: vkey $panel;
        scrollbar-size-horizontal: 0;  /* a long label is cut; the preview shows it whole */
    }
    BrowseScreen PreviewPane {
        width: 2fr;
        height: 1fr;
    }
    """

    class Recognised(Message):
        """The worker recognised a batch of files; `done`: that was the last."""

        def __init__(self, batch: tuple[Any, ...], counts: FolderCounts, done: bool) -> None:
            super().__init__()
            self.batch = batch
            self.counts = counts
            """The batch's kinds counted per folder."""
            self.done = done

    class Checked(Message):
        """The expected ranges of `folder`'s expected.toml were checked."""

        def __init__(self, folder: Path, results: list[Any]) -> None:
            super().__init__()
            self.folder = folder
            self.results = results

    def __init__(self, root: str | Path = ".", *, select: str | Path | None = None, freeze_gc: bool = False) -> None:
        """`root`: the folder shown (its label as given); `select`: a file below it to put
        the cursor on (a job's output file); `freeze_gc`: once the files are recognised and
        the views imported, exempt the objects alive then from garbage collection (as the
        watch's, `FreezesStartup`): `gpuscope browse` sets it, tests leave the collector alone."""
        super().__init__()
        self.freeze_gc = freeze_gc
        self.root = Path(root)
        self.base = self.root.resolve()
        self.select = Path(select).resolve() if select is not None else None
        self.recognitions: dict[Path, Any] = {}
        """path -> `Recognition`, as batches arrive."""
        self.counts = FolderCounts(self.base)
        self.checks: dict[Path, list[Any]] = {}
        """path -> expected-range results (`metrics.expected_check.CheckResult`) on that file."""
        self.recognition_done = False
        self.started = time.monotonic()
        self.elapsed: float | None = None
        """Seconds recognition took, once done."""
        self.titles = titles()
        self.screens = {reader.KIND: reader.VIEW for reader in registry.READERS}
        """kind -> the screen that opens it."""
        self.marked: list[Path] = []
        """Files or folders marked for a diff (as recognition names them), oldest first: the
        first is the base, the second the new run."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="browse-body"):
            yield BrowseTree(self.root, self.recognitions, self.counts, self.checks, self.marked, id="browse-tree")
            yield PreviewPane(id="browse-preview")
        yield KeysFooter()

    async def on_mount(self) -> None:
        self._title()
        self.recognise_all()
        tree = self.query_one(BrowseTree)
        tree.focus()
        if self.select is not None and await tree.reveal(self.select) is None:
            self.notify(f"{clean(display_name(self.select))} is not below {clean(display_name(self.root))}", title="Not shown", markup=False)

    # --- recognition ----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="recognise", exit_on_error=False)
    def recognise_all(self) -> None:
        worker = get_current_worker()
        batch: list[Any] = []
        counts = FolderCounts(self.base)  # counted here, merged on the UI thread per folder
        sent = time.monotonic()
        for path in walk(self.base):
            if worker.is_cancelled:
                return
            batch.append(rec := registry.recognise(path))
            counts.add(rec)
            if len(batch) >= BATCH_FILES or time.monotonic() - sent >= BATCH_S:
                self.post_message(self.Recognised(tuple(batch), counts, False))
                batch, counts, sent = [], FolderCounts(self.base), time.monotonic()
        self.post_message(self.Recognised(tuple(batch), counts, True))

    def on_browse_screen_recognised(self, message: Recognised) -> None:
        self.recognitions.update((rec.path, rec) for rec in message.batch)
        self.counts.merge(message.counts)
        tree = self.query_one(BrowseTree)
        if message.done:
            self.recognition_done = tree.done = True
            self.elapsed = time.monotonic() - self.started
            folders = sorted(p.parent for p, r in self.recognitions.items() if r.kind == "expected" and p.name == "expected.toml")
            if folders:
                self.check_expected(folders)
            self.import_views()
        with self.app.batch_update():  # tree, title and preview in one frame
            tree.show_recognitions()
            self._title()
            self._preview(tree.cursor_node, refresh=True)

    def on_screen_resume(self) -> None:
        """Back from a view: the file under the cursor may have changed meanwhile (a job's log
        grows), so it is recognised again and its line and preview say what it is now."""
        path = self.cursor_path
        if path is not None and self.recognition_done and path in self.recognitions and not path.is_dir():
            self.recognise_again(path)

    @work(thread=True, exclusive=True, group="again", exit_on_error=False)
    def recognise_again(self, path: Path) -> None:
        self.post_message(self.Recognised((registry.recognise(path),), FolderCounts(self.base), False))

    @work(thread=True, exclusive=True, group="views", exit_on_error=False)
    def import_views(self) -> None:
        """Import the file views while the browser is idle: the first Enter then costs their
        drawing only, not loading their libraries (bench/open_bench.py)."""
        from gpuscope.tui.screens.views.pick import import_views

        import_views()
        if self.freeze_gc:
            self.app.call_from_thread(self.freeze_startup_objects)

    def on_unmount(self) -> None:
        self.thaw_startup_objects()

    @work(thread=True, exclusive=True, group="expected", exit_on_error=False)
    def check_expected(self, folders: list[Path]) -> None:
        """Every folder's `expected.toml` checked against the tables it names (`gpuscope
        check`'s own function), once recognition is done."""
        from gpuscope.tui.model.check_report import check_folder

        for folder in folders:
            if get_current_worker().is_cancelled:
                return
            self.post_message(self.Checked(folder, check_folder(folder).results))

    def on_browse_screen_checked(self, message: Checked) -> None:
        for result in message.results:
            self.checks.setdefault(message.folder / result.file, []).append(result)
        tree = self.query_one(BrowseTree)
        tree.show_recognitions()
        self._preview(tree.cursor_node, refresh=True)

    def _title(self) -> None:
        n = len(self.recognitions)
        state = f"{n:,} files" if self.recognition_done else f"recognising … {n:,} files so far"
        self.sub_title = f"browse · {clean(display_name(self.root))} · {state}"

    # --- preview and opening --------------------------------------------------------------

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        self._preview(event.node)

    def _path(self, node: Any) -> Path | None:
        """A node's path as recognition names it: the root's own is as typed (its label)."""
        if node is None or node.data is None:
            return None
        return self.base if node.parent is None else node.data.path

    def _preview(self, node: Any, refresh: bool = False) -> None:
        path = self._path(node)
        if path is None:
            return
        pane = self.query_one(PreviewPane)
        if refresh and pane.path != path:
            return
        if node.allow_expand:
            pane.show_folder(path, self.counts.of(path), self.recognition_done, self.titles, self.screens)
        else:
            pane.show_file(path, self.recognitions.get(path), self.titles, self.checks.get(path, ()))

    @on(DirectoryTree.FileSelected)
    def _file_selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.open(event.path)

    def open(self, path: Path) -> None:
        """Push the screen for `path`'s kind; say why when there is none."""
        rec = self.recognitions.get(path)
        name = clean(display_name(path.name))
        if rec is None:
            self.notify(f"{name} is not recognised yet: a moment", markup=False)
            return
        if rec.kind is None:
            why = rec.problem.message if rec.problem is not None else rec.reason
            self.notify(f"{name}: {clean(why)}", title="Nothing to open", severity="warning", markup=False)
            return
        marks = {cell for result in self.checks.get(path, ()) for cell in result.outside}
        screen = view_screen(rec, self.typed(path), marks)
        if screen is None:
            self.notify(f"No view for {rec.kind} files yet; the preview shows the first lines.", markup=False)
            return
        self.app.push_screen(screen)

    def action_open(self) -> None:
        """Enter with the preview focused: what Enter on the tree does."""
        node = self.query_one(BrowseTree).cursor_node
        path = self._path(node)
        if node is None or path is None:
            return
        if node.allow_expand:
            node.toggle()
        else:
            self.open(path)

    # --- folders --------------------------------------------------------------------------

    def typed(self, path: Path) -> Path:
        """`path` below the root as the user typed the root (titles then read `results/x.out`,
        not the absolute path)."""
        try:
            return self.root / path.relative_to(self.base)
        except ValueError:
            return path

    @property
    def cursor_path(self) -> Path | None:
        """The path under the cursor, as recognition names it."""
        return self._path(self.query_one(BrowseTree).cursor_node)

    def _folder(self) -> Path:
        """The folder under the cursor, or the folder of the file under it."""
        node = self.query_one(BrowseTree).cursor_node
        path = self._path(node)
        if path is None:
            return self.base
        return path if node.allow_expand else path.parent

    def _ready(self, what: str) -> bool:
        if not self.recognition_done:
            self.notify(f"Still recognising ({len(self.recognitions):,} files so far): {what} needs every file. Try again in a moment.",
                        title="Not yet", markup=False)
        return self.recognition_done

    def action_analyse(self) -> None:
        """`a`: one study over every file of one kind below the folder. The study's screen
        reads the folder itself (its reader takes only files of its kind), so what the path
        says (MAGMA environments and cluster sizes, scaling's resource counts, marker files
        beside profiles) comes with them, as `gpuscope magma DIR` reads it."""
        if not self._ready("the analysis"):
            return
        folder = self._folder()
        found = studies(self.recognitions.values(), folder)
        if not found:
            self.notify("No MAGMA outputs, profiler exports or run logs below this folder: the summary says what is there.",
                        markup=False)
            self.action_summary()
            return
        typed = [self.typed(folder)]
        if len(found) == 1:
            self.app.push_screen(study_screen(next(iter(found)), typed))
            return
        from gpuscope.tui.screens.studies.folder import StudyModal

        def chosen(choice: str | None) -> None:
            if choice == "summary":
                self.action_summary()
            elif choice in found:
                self.app.push_screen(study_screen(choice, typed))

        self.app.push_screen(StudyModal(folder, {screen: len(paths) for screen, paths in found.items()}), chosen)

    def action_summary(self) -> None:
        """`s`: the folder summary."""
        if not self._ready("the summary"):
            return
        from gpuscope.tui.screens.studies.folder import FolderSummaryScreen

        folder = self._folder()
        below = [rec for path, rec in self.recognitions.items() if is_below(path, folder)]
        self.app.push_screen(FolderSummaryScreen(folder, below, self.titles, label=self.typed(folder)))

    async def show_path(self, path: Path) -> bool:
        """Put the cursor on `path` (opening folders on the way); False when it is not here."""
        return await self.query_one(BrowseTree).reveal(path.resolve()) is not None

    # --- marks and the diff -----------------------------------------------------------------

    @property
    def marked_paths(self) -> list[Path]:
        """The marked paths as the user typed the root (a study screen's diff tab offers them)."""
        return [self.typed(path) for path in self.marked]

    def action_toggle_mark(self) -> None:
        """Space: mark or unmark the file or folder under the cursor, then go to the next line
        (as file managers do). Two at most: a third mark replaces the oldest, and says so."""
        tree = self.query_one(BrowseTree)
        path = self._path(tree.cursor_node)
        if path is None:
            return
        name = clean(display_name(self.typed(path)))
        if path in self.marked:
            self.marked.remove(path)
        else:
            self.marked.append(path)
            if len(self.marked) > 2:
                dropped = clean(display_name(self.typed(self.marked.pop(0))))
                self.notify(f"Unmarked {dropped}: two marks at most, the oldest goes. d compares the two marked.",
                            title="Mark replaced", markup=False)
            elif len(self.marked) == 1:  # the second mark needs no word: the tree labels both, the footer has d
                self.notify(f"Marked {name} as the base. Mark the run to compare with it (space), then press d.", markup=False)
        tree.show_recognitions()
        tree.action_cursor_down()

    def action_diff(self) -> None:
        """`d`: the diff of the two marked runs (the first marked is the base)."""
        if len(self.marked) < 2:
            have = f" Marked now: {clean(display_name(self.typed(self.marked[0])))}." if self.marked else ""
            self.notify(f"Mark two files or folders with space (the base first, then the new run), then press d.{have}",
                        title="Nothing to compare", markup=False)
            return
        from gpuscope.tui.screens.diff import DiffScreen

        base, new = self.marked_paths
        self.app.push_screen(DiffScreen(base, new))

    def action_watch(self) -> None:
        """`w`: the watch mode (the app keeps both, each as it was left)."""
        self.app.show_watch()  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`w` only where the app can show a watch (not under `gpuscope magma` and the like)."""
        if action == "watch":
            return getattr(self.app, "can_watch", False)
        return True
