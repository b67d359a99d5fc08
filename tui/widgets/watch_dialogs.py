"""Provides `SignalModal`: confirm a signal to one process, showing pid, user and command;
and `deliver`, which sends it only if the process is (still) the user's own.

The screen refuses other users' rows before opening the dialog; `deliver` checks again right
before `os.kill`, owner and start time, because the pid may have exited and been reused while
the dialog was open (and a demo's made-up pids must never reach a real process).
Enter on the focused Send button sends TERM, the gentle default; KILL and INT are chosen
explicitly (radio buttons or 1/2/3). Escape cancels. Dismisses with the signal number or None.
"""

from __future__ import annotations

import os
import signal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, RadioButton, RadioSet, Static

from gpuscope.metrics.samples import ProcessRow

SIGNALS: tuple[tuple[str, int, str], ...] = (
    ("TERM", int(signal.SIGTERM), "ask it to stop (it may clean up)"),
    ("KILL", int(signal.SIGKILL), "stop it at once, no clean-up"),
    ("INT", int(signal.SIGINT), "like Ctrl+C"),
)
"""The choices, default first."""
START_SLACK_S = 5.0
"""How far a process's start time may be from what the table implied (scan-to-screen delay)."""


class SignalModal(ModalScreen[int | None]):
    """Send TERM, KILL or INT to one of your processes, or cancel."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("1", "choose(0)", "TERM", show=False),
        Binding("2", "choose(1)", "KILL", show=False),
        Binding("3", "choose(2)", "INT", show=False),
    ]
    """Escape cancels; 1/2/3 pick a signal without leaving the Send button."""

    def __init__(self, row: ProcessRow) -> None:
        super().__init__()
        self.row = row
        self.choice = 0
        """Index into SIGNALS."""

    def compose(self) -> ComposeResult:
        row = self.row
        with Vertical(id="signal-dialog"):
            title = Text().append("Send a signal to PID ", style="bold").append(str(row.pid), style="bold reverse")
            title.append(" of user ").append(row.user, style="bold reverse").append("?")
            yield Static(title, id="signal-title", markup=False)
            yield Static(Text(row.command), id="signal-command", markup=False)
            with RadioSet(id="signal-choice", compact=True):
                for i, (name, _, what) in enumerate(SIGNALS):
                    yield RadioButton(Text(f"{i + 1} {name:<5} {what}"), value=i == 0)
            with Horizontal(id="signal-buttons"):
                yield Button("Send TERM", id="signal-send", variant="error", compact=True)
                yield Button("Cancel", id="signal-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#signal-send", Button).focus()

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
    def _send(self) -> None:
        self.dismiss(SIGNALS[self.choice][1])

    @on(Button.Pressed, "#signal-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def pid_owner(pid: int) -> int | None:
    """The uid owning `pid` now (Linux /proc), None where /proc cannot tell.

    Raises ProcessLookupError when the process is gone. Checked again right before a signal
    is sent, because the pid in the table may have exited and been reused meanwhile.
    """
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            raise ProcessLookupError(pid) from None
        return None
    except OSError:
        return None


def refusal(row: ProcessRow) -> str | None:
    """Why `row` must not be signalled, or None. pid 0 and negative pids would reach a whole
    process group or every process (kill(2)); gpuscope itself is left to `q`."""
    if row.pid <= 0:
        return f"PID {row.pid} cannot be signalled."
    if row.pid == os.getpid():
        return "That is gpuscope itself: press q to quit."
    if row.uid != os.getuid():
        return f"PID {row.pid} belongs to {row.user}: not your process. gpuscope only signals your own."
    return None


def start_since_boot(pid: int) -> float | None:
    """When `pid` started, in seconds after boot (/proc/PID/stat field 22); None if unknown.
    Raises ProcessLookupError when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            raise ProcessLookupError(pid) from None
        return None
    except OSError:
        return None
    try:
        return int(stat[stat.rindex(")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")
    except (ValueError, IndexError):
        return None


def same_process(row: ProcessRow) -> bool:
    """Is `row.pid` still the process the table showed? Its start time must match (within
    `START_SLACK_S`): a pid reused meanwhile, or a made-up one in a demo, does not."""
    started = start_since_boot(row.pid)
    if started is None:
        return True  # no procfs to ask: the ownership check is all there is
    return abs(started - row.started) <= START_SLACK_S


def deliver(row: ProcessRow, signum: int, listed: bool = False) -> tuple[str, str]:
    """Send `signum` to `row.pid` if it is still the user's own process: (message, severity).
    With `listed` (the row came from a refresh of the table), the pid's start time must also
    still be the row's: a reused pid is refused."""
    name = next((n for n, number, _ in SIGNALS if number == signum), str(signum))
    if (reason := refusal(row)) is not None:
        return f"{reason} Nothing sent.", "warning"
    try:
        owner = pid_owner(row.pid)
        if owner is not None and owner != os.getuid():
            return f"PID {row.pid} is no longer your process: nothing sent.", "warning"
        if listed and not same_process(row):
            return f"PID {row.pid} is now another process (started at another time): nothing sent.", "warning"
        os.kill(row.pid, signum)
    except ProcessLookupError:
        return f"PID {row.pid} has already exited: nothing sent.", "information"
    except PermissionError:
        return f"Not allowed to signal PID {row.pid}.", "error"
    return f"Sent {name} to PID {row.pid} ({row.command[:60]})", "information"
