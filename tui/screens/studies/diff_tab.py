"""Provides `DiffTab`: the diff tab of the kernels, MAGMA and scaling screens, which compares
another run (the base) with the one the screen shows (the new run), as `gpuscope diff OTHER
THIS` does, in the same pane as the diff screen (`DiffPane`).

The other run's path is typed in a box (checked on Enter: it must exist and be another path),
or comes from the browser, when a file or folder is marked there (space). The comparison
reads both runs in a thread worker, so keys are answered meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.validation import ValidationResult, Validator
from textual.widgets import Input, Static

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.screens.diff import DiffPane

if TYPE_CHECKING:
    from gpuscope.tui.model.diff import DiffReport

TAB_ID = "tab-versus"
"""The diff tab's id in each study screen (`d` shows it)."""
TAB_TITLE = "Diff"
KEY_TIP = "Compare another run (the base) with this one: the diff tab (gpuscope diff OTHER THIS); d in the diff asks for another run"
ASK = "Compare with another run: type its path (the base; this screen's run is the new one), then Enter."


class OtherRun(Validator):
    """An existing file or folder other than the screen's own."""

    def __init__(self, this: Path | None) -> None:
        super().__init__()
        self.this = this

    def validate(self, value: str) -> ValidationResult:
        text = value.strip()
        if not text:
            return self.failure("Type the path of the run to compare with.")
        path = Path(text).expanduser()
        if not path.exists():
            return self.failure(f"No such file or folder: {clean(text)}")
        if self.this is not None and path.resolve() == self.this.resolve():
            return self.failure("That is this screen's own run: name another one.")
        return self.success()


class DiffTab(Vertical):
    """The other run's path, then the diff of (that run, this screen's run). Once a diff is
    shown the box is hidden (the tables get its line); `d` in the diff asks again."""

    BINDINGS = [
        Binding("d", "another", "Another run", tooltip="Compare this run with another one: the path box again"),
        Binding("escape", "leave_box", "Leave the box", show=False,
                tooltip="In the path box: leave it (back to the diff shown, if any); elsewhere Escape closes the screen"),
    ]

    DEFAULT_CSS = """
    DiffTab {
        height: 1fr;
    }
    DiffTab > .diff-tab-hint {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    DiffTab > Input {
        margin: 0 1;
    }
    """

    class Compared(Message):
        """The worker compared `base` with the screen's run."""

        def __init__(self, base: Path, report: DiffReport) -> None:
            super().__init__()
            self.base = base
            self.report = report

    def __init__(self, paths: Sequence[str | Path], **kwargs: Any) -> None:
        """`paths`: what the screen reads; a diff compares one run with one, so a screen over
        several paths says so instead of asking."""
        super().__init__(**kwargs)
        self.this = Path(paths[0]) if len(paths) == 1 else None
        """The screen's run: the new side of the diff (None: the screen reads several paths)."""
        self.count = len(paths)
        self.base: Path | None = None
        """The run compared with, once a comparison is asked for."""

    def compose(self) -> ComposeResult:
        yield Static(classes="diff-tab-hint", markup=False)
        yield Input(placeholder="path of the other run (file or folder)", validators=[OtherRun(self.this)],
                    validate_on=["submitted"], compact=True, id="diff-other")
        yield DiffPane(id="diff-tab-pane")

    def on_mount(self) -> None:
        self.query_one(DiffPane).display = False
        box = self.query_one(Input)
        if self.this is None:
            box.display = False
            self.hint(f"This screen reads {self.count} paths; a diff compares one run with another. "
                      "Open one run (a file or a folder) to compare it, or use gpuscope diff BASE NEW.")
        else:
            self.hint(ASK)

    def hint(self, text: str | Text) -> None:
        self.query_one(".diff-tab-hint", Static).update(text if isinstance(text, Text) else Text(text))

    def on_show(self) -> None:
        self.offer()

    def offer(self) -> None:
        """The tab was opened: before a first diff, focus the box, filled with the path marked
        in the browser when there is one (and nothing was typed)."""
        if self.this is None or self.base is not None:
            return
        box = self.query_one(Input)
        if not box.value:
            marked = marked_elsewhere(self.app.screen_stack, self.this)
            if marked is not None:
                box.value = str(marked)
                self.hint(f"{ASK} Filled in: the path marked in the browser.")
        box.focus()

    @on(Input.Submitted, "#diff-other")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        result = event.validation_result
        if result is not None and not result.is_valid:
            self.hint(Text(" ".join(result.failure_descriptions), style="bold"))
            return
        assert self.this is not None
        self.base = Path(event.value.strip()).expanduser()
        self.hint(f"Comparing {clean(str(self.base))} → {clean(str(self.this))} ...")
        self.compare(self.base, self.this)

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def compare(self, base: Path, new: Path) -> None:
        from gpuscope.tui.model.diff import diff_paths

        self.post_message(self.Compared(base, diff_paths(base, new)))

    async def on_diff_tab_compared(self, message: Compared) -> None:
        message.stop()
        pane = self.query_one(DiffPane)
        pane.display = True
        await pane.show(message.report)
        assert self.this is not None
        text = Text()
        text.append("Base ", style="dim").append(clean(str(message.base)), style="bold")
        text.append("   New ", style="dim").append(clean(str(self.this)), style="bold")
        self.hint(text)  # the footer says d asks for another run
        self.query_one(Input).display = False
        pane.focus_table()

    def action_another(self) -> None:
        """`d` in the diff: the path box again, to compare with another run."""
        if self.this is None:
            return
        box = self.query_one(Input)
        box.display = True
        box.focus()
        self.hint(ASK)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Escape is the box's only while the box has focus; elsewhere it stays the app's Back
        if action == "leave_box":
            return self.query_one(Input).has_focus
        return True

    def action_leave_box(self) -> None:
        """Escape in the path box: leave it, back to the diff when one is shown."""
        box = self.query_one(Input)
        if self.base is not None and self.query_one(DiffPane).report is not None:
            box.display = False
            self.query_one(DiffPane).focus_table()
            self.hint(Text("Base ", style="dim").append(clean(str(self.base)), style="bold"))
        else:
            self.screen.focus_next()
            self.hint(ASK)

    def ask_export(self) -> None:
        """`e` on this tab: ask where to write the diff, or say there is none yet."""
        if self.base is None or self.query_one(DiffPane).report is None:
            self.notify("Nothing compared yet: type the other run's path above, then Enter.", markup=False)
            return
        self.screen.ask_export("diff.md", "diff")  # type: ignore[attr-defined]

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """What `e` writes from this tab (see `DiffPane.export_tables`); None before a diff."""
        if self.base is None or self.this is None:
            return None
        return self.query_one(DiffPane).export_tables(str(self.base), str(self.this), fmt)


def marked_elsewhere(stack: Sequence[Any], this: Path) -> Path | None:
    """The latest path marked in a browser below this screen that is not `this` (the browser
    keeps its marks in `marked_paths`, as typed), or None."""
    own = this.resolve()
    for screen in reversed(stack):
        for path in reversed(getattr(screen, "marked_paths", ())):
            if Path(path).resolve() != own:
                return Path(path)
    return None
