"""Provides `SignalModal`: confirm a signal to one process, showing pid, user and command;
`deliver`, which hands the confirmed signal to `collectors.signals`; `ReniceModal`, which
confirms F7/F8's change of a process's nice value; and `RecordModal`, which asks where the
watch's `R` records to.

The dialog only asks. Whether a process may be signalled (never PID 1, kernel threads,
processes outside the watched scope, other users' unless root, a reused pid) is decided in
`gpuscope.collectors.signals`, which the screen asks before opening the dialog (`refusal`)
and which checks again and sends after it is confirmed (`deliver`).
Enter on the focused Send button sends TERM, the gentle default; KILL and INT are chosen
explicitly (radio buttons or 1/2/3). As root watching the whole node, the PID must be typed
before Send does anything. Escape cancels. Dismisses with the signal number or None.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from gpuscope.collectors import signals
from gpuscope.collectors.signals import SIGNALS
from gpuscope.metrics.samples import JobScope, ProcessRow

__all__ = ["SIGNALS", "RecordModal", "ReniceModal", "SignalModal", "deliver", "refusal"]


class SignalModal(ModalScreen[int | None]):
    """Send TERM, KILL or INT to one of your processes, or cancel."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("1", "choose(0)", "TERM", show=False),
        Binding("2", "choose(1)", "KILL", show=False),
        Binding("3", "choose(2)", "INT", show=False),
    ]
    """Escape cancels; 1/2/3 pick a signal without leaving the Send button."""

    def __init__(self, row: ProcessRow, scope: JobScope | None = None) -> None:
        super().__init__()
        self.row = row
        self.choice = 0
        """Index into SIGNALS."""
        self.typed = scope is not None and signals.typed_confirmation(scope)
        """The PID must be typed first (root, node scope: nothing else narrows what k may stop)."""

    def compose(self) -> ComposeResult:
        row = self.row
        with Vertical(id="signal-dialog"):
            title = Text().append("Send a signal to PID ", style="bold").append(str(row.pid), style="bold reverse")
            title.append(" of user ").append(row.user, style="bold reverse").append("?")
            yield Static(title, id="signal-title", markup=False)
            yield Static(Text(row.command), id="signal-command", markup=False)
            if self.typed:
                yield Static(Text(f"You are root and watch the whole node: type {row.pid} to confirm.", style="bold"),
                             id="signal-typed-hint", markup=False)
                yield Input(id="signal-pid", placeholder=f"type {row.pid}", restrict=r"[0-9]*", max_length=12, compact=True)
            with RadioSet(id="signal-choice", compact=True):
                for i, (name, _, what) in enumerate(SIGNALS):
                    yield RadioButton(Text(f"{i + 1} {name:<5} {what}"), value=i == 0)
            with Horizontal(id="signal-buttons"):
                yield Button("Send TERM", id="signal-send", variant="error", compact=True)
                yield Button("Cancel", id="signal-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#signal-pid" if self.typed else "#signal-send").focus()

    @on(RadioSet.Changed, "#signal-choice")
    def _changed(self, event: RadioSet.Changed) -> None:
        self._set(event.index)

    def _set(self, index: int) -> None:
        self.choice = index
        self.query_one("#signal-send", Button).label = f"Send {SIGNALS[index][0]}"

    def action_choose(self, index: int) -> None:
        buttons = list(self.query(RadioButton))
        with self.prevent(RadioSet.Changed):
            buttons[index].value = True
        self._set(index)

    @on(Button.Pressed, "#signal-send")
    @on(Input.Submitted, "#signal-pid")
    def _send(self) -> None:
        if self.typed and self.query_one("#signal-pid", Input).value.strip() != str(self.row.pid):
            hint = self.query_one("#signal-typed-hint", Static)
            hint.update(Text(f"Not sent: type {self.row.pid} first (you are root and watch the whole node).", style="bold"))
            self.query_one("#signal-pid", Input).focus()
            return
        self.dismiss(SIGNALS[self.choice][1])

    @on(Button.Pressed, "#signal-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def refusal(row: ProcessRow, scope: JobScope) -> str | None:
    """Why `row` must not be signalled (see `collectors.signals.refusal`), or None."""
    return signals.refusal(row, scope)


def deliver(row: ProcessRow, signum: int, scope: JobScope, listed: bool = False) -> tuple[str, str]:
    """Have `collectors.signals.send` check `row` again and send `signum`: (message, severity)."""
    outcome = signals.send(row, signum, scope, listed=listed)
    return outcome.message, outcome.severity


class ReniceModal(ModalScreen[bool]):
    """F7/F8: change one of your processes' nice value by one step, or cancel. Enter on the
    focused Renice button confirms, Escape cancels. Dismisses with True to go ahead."""

    DEFAULT_CSS = """
    ReniceModal { align: center middle; }
    #renice-dialog { width: 72; max-width: 95%; height: auto; padding: 0 1; border: thick $warning; background: $surface; }
    #renice-command { color: $text-muted; max-height: 3; margin: 1 0; }
    #renice-note { color: $text-warning; margin-bottom: 1; }
    #renice-buttons { height: auto; align-horizontal: right; }
    #renice-buttons Button { margin-left: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, row: ProcessRow, step: int, nice: int | None, root: bool = False) -> None:
        """`nice`: the process's nice value now (None: unknown); `root`: gpuscope runs as root
        (else raising a priority is likely to be refused, which the dialog says first)."""
        super().__init__()
        self.row = row
        self.step = step
        self.nice = nice
        self.root = root

    def compose(self) -> ComposeResult:
        row, higher = self.row, self.step < 0
        with Vertical(id="renice-dialog"):
            title = Text().append(f"{'Raise' if higher else 'Lower'} the priority of PID ", style="bold")
            title.append(str(row.pid), style="bold reverse").append(" of user ").append(row.user, style="bold reverse").append("?")
            yield Static(title, id="renice-title", markup=False)
            yield Static(Text(row.command), id="renice-command", markup=False)
            change = "nice one step lower (-1)" if higher else "nice one step higher (+1)"
            if self.nice is not None:
                change = f"nice {self.nice} → {min(max(self.nice + self.step, -20), 19)}"
            yield Static(Text(f"{change}: {'more' if higher else 'less'} CPU time when cores are busy"), id="renice-change", markup=False)
            if higher and not self.root:
                yield Static(Text("Raising a priority needs root or CAP_SYS_NICE: the kernel will most likely refuse."),
                             id="renice-note", markup=False)
            with Horizontal(id="renice-buttons"):
                yield Button("Renice", id="renice-ok", variant="warning", compact=True)
                yield Button("Cancel", id="renice-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#renice-ok").focus()

    @on(Button.Pressed, "#renice-ok")
    def _confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#renice-cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


def renice_refusal(row: ProcessRow, scope: JobScope) -> str | None:
    """Why `row`'s priority must not be changed (see `collectors.signals.renice_refusal`), or None."""
    return signals.renice_refusal(row, scope)


def deliver_renice(row: ProcessRow, step: int, scope: JobScope, listed: bool = False) -> tuple[str, str]:
    """Have `collectors.signals.renice` check `row` again and change its nice value: (message, severity)."""
    outcome = signals.renice(row, step, scope, listed=listed)
    return outcome.message, outcome.severity


class RecordModal(ModalScreen[str | None]):
    """`R`: the recording's path (a new file; an existing one is never overwritten), Record or
    Cancel. Dismisses with the path, or None. Styled as the export dialog (one look for both)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default_path: str) -> None:
        super().__init__()
        self.default_path = default_path

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label("Record what the watch shows to", id="export-title", markup=False)
            yield Input(self.default_path, id="record-path", placeholder="file path")
            yield Static("A new file (never overwritten); R again stops. gpuscope replay and report read it.",
                         id="export-format", markup=False)
            with Horizontal(id="export-buttons"):
                yield Button("Record", id="record-ok", variant="primary")
                yield Button("Cancel", id="record-cancel")

    @on(Input.Submitted, "#record-path")
    @on(Button.Pressed, "#record-ok")
    def _submit(self) -> None:
        self.dismiss(self.query_one("#record-path", Input).value.strip() or None)

    @on(Button.Pressed, "#record-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
