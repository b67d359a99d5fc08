"""Provides `SignalModal`: confirm a signal to one process, showing pid, user and command;
`deliver`, which hands the confirmed signal to `collectors.signals`; and `RecordModal`, which
asks where the watch's `R` records to.

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

__all__ = ["SIGNALS", "RecordModal", "SignalModal", "deliver", "refusal"]


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
