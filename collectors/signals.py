"""Decides whether gpuscope may send a signal to a process, and sends it.

The watch screen's `k` asks here twice: `refusal` before the confirmation dialog opens (from
the table's row), and `send` after it is confirmed, which checks again against /proc right
before `os.kill`, because the pid may have exited and been reused while the dialog was open
(and a demo's made-up pids must never reach a real process). A signal is refused to:

- pid 0 and negative pids (kill(2) would reach a process group or every process);
- gpuscope itself (`q` quits);
- PID 1 (init: TERM may shut the node down), even as root;
- kernel threads (kthreadd, PID 2, its children, and anything with PF_KTHREAD in its flags);
- rows whose process /proc does not show (uid -1: a GPU process from another PID namespace);
- processes outside the watched scope (a job, a user, a process tree): the `a` view lists
  every process on the node, but only the scope's may be signalled;
- other users' processes, unless gpuscope runs as root;
- a pid whose start time or owner has changed since the table listed it (reused).

As root in node scope every process passes the checks above, so `typed_confirmation` says the
dialog must make the user type the PID.

F7/F8 renice by the same rules, stricter on the owner: only your own processes, even as root
(`renice_refusal`), and with the same checks against /proc right before `os.setpriority`
(`renice`). Raising a priority (a lower nice value) is the kernel's to allow: a user without
CAP_SYS_NICE, or a RLIMIT_NICE that allows it, is refused (EACCES), and the message says why.
A `--demo` run's simulated processes have made-up pids: neither is ever sent to them.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from gpuscope.collectors import procfs
from gpuscope.collectors.simulated import is_simulated
from gpuscope.metrics.samples import JobScope, ProcessRow

SIGNALS: tuple[tuple[str, int, str], ...] = (
    ("TERM", int(signal.SIGTERM), "ask it to stop (it may clean up)"),
    ("KILL", int(signal.SIGKILL), "stop it at once, no clean-up"),
    ("INT", int(signal.SIGINT), "like Ctrl+C"),
)
"""The signals gpuscope offers, the default first: (name, number, what it does)."""
START_SLACK_S = 5.0
"""How far a process's start time may be from the table's (the scan-to-screen delay)."""
PF_KTHREAD = 0x00200000
"""/proc/PID/stat field 9 (flags): set for kernel threads."""
KTHREADD_PID = 2
NICE_RANGE = (-20, 19)
"""Linux nice values, highest priority first."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who gpuscope runs as."""

    uid: int
    root: bool


def caller() -> Caller:
    """The effective uid (tests replace this function to act as root, or as a user)."""
    uid = os.geteuid()
    return Caller(uid, uid == 0)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What `send` did: a message for the user, its severity ('information', 'warning',
    'error') and whether the signal went out."""

    message: str
    severity: str
    sent: bool = False


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The /proc/PID/stat fields the checks need."""

    ppid: int
    flags: int
    started: float
    """Seconds after boot."""


def signal_name(signum: int) -> str:
    return next((n for n, number, _ in SIGNALS if number == signum), str(signum))


def read_stat(pid: int, root: str = "/") -> ProcStat | None:
    """ppid, flags and start time of `pid`; None where /proc cannot tell (no procfs, hidden).
    Raises ProcessLookupError when the process is gone."""
    proc = procfs.proc_dir(root)
    try:
        stat = procfs.read_bytes(f"{proc}/{pid}/stat").decode("ascii", "replace")
    except (FileNotFoundError, ProcessLookupError):
        if os.path.isdir(f"{proc}/self") or root != "/":
            raise ProcessLookupError(pid) from None
        return None
    except OSError:
        return None
    try:
        fields = stat[stat.rindex(")") + 2 :].split()  # field 3 (state) is fields[0]
        return ProcStat(int(fields[1]), int(fields[6]), int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (ValueError, IndexError):
        return None


def owner(pid: int, root: str = "/") -> int | None:
    """The uid owning /proc/PID now; None where /proc cannot tell. Raises ProcessLookupError
    when the process is gone."""
    proc = procfs.proc_dir(root)
    try:
        return os.stat(f"{proc}/{pid}").st_uid
    except FileNotFoundError:
        if os.path.isdir(f"{proc}/self") or root != "/":
            raise ProcessLookupError(pid) from None
        return None
    except OSError:
        return None


def is_kernel_thread(pid: int, ppid: int, flags: int | None = None) -> bool:
    """kthreadd (PID 2), its children, or PF_KTHREAD set in the stat flags."""
    return pid == KTHREADD_PID or ppid == KTHREADD_PID or (flags is not None and bool(flags & PF_KTHREAD))


def refusal(row: ProcessRow, scope: JobScope, who: Caller | None = None) -> str | None:
    """Why `row` must not be signalled, judged from the table (no /proc read), or None."""
    who = who or caller()
    if row.pid == os.getpid():
        return "That is gpuscope itself: press q to quit."
    reason = _refusal(row, scope, "signalled", "gpuscope only signals processes in it")
    if reason is None and not who.root and row.uid != who.uid:
        reason = f"PID {row.pid} belongs to {row.user}: not your process. gpuscope only signals your own."
    return reason


def renice_refusal(row: ProcessRow, scope: JobScope, who: Caller | None = None) -> str | None:
    """Why `row`'s priority must not be changed, judged from the table, or None: the signal
    rules, and only your own processes, even as root."""
    who = who or caller()
    reason = _refusal(row, scope, "reniced", "gpuscope only renices processes in it")
    if reason is None and row.uid != who.uid:
        reason = f"PID {row.pid} belongs to {row.user}: not your process. gpuscope only renices your own."
    return reason


def _refusal(row: ProcessRow, scope: JobScope, done: str, only: str) -> str | None:
    """What signals and renice both refuse: not a process, init, kernel threads, rows /proc
    does not show, processes outside the watched scope."""
    pid = row.pid
    if is_simulated(row):
        return f"PID {pid} is a simulated process (--demo): there is no such process to act on."
    if pid <= 0:
        return f"PID {pid} cannot be {done}."
    if pid == 1:
        return f"PID 1 is init: gpuscope never {'signals' if done == 'signalled' else 'renices'} it."
    if is_kernel_thread(pid, row.ppid):
        return f"PID {pid} is a kernel thread: gpuscope never touches those."
    if row.uid < 0:
        return f"PID {pid} is not in this /proc (another PID namespace): gpuscope cannot check it, so leaves it alone."
    if scope.kind != "node" and pid not in scope.pids:
        return f"PID {pid} is outside the watched {scope.label or scope.kind}: {only}."
    return None


def typed_confirmation(scope: JobScope, who: Caller | None = None) -> bool:
    """Must the user type the PID to confirm? As root in node scope, where nothing else
    narrows what one key press may stop."""
    return (who or caller()).root and scope.kind == "node"


def send(row: ProcessRow, signum: int, scope: JobScope, *, listed: bool = True, root: str = "/",
         who: Caller | None = None) -> Outcome:
    """Send `signum` to `row.pid` if `refusal` allows it and /proc still shows the process the
    table listed: same owner, not a kernel thread and, with `listed` (the row came from a
    refresh of the table), the same start time. Never raises for a gone or forbidden pid."""
    who = who or caller()
    if signum not in {number for _, number, _ in SIGNALS}:
        return Outcome(f"Signal {signum} is not one gpuscope sends: nothing sent.", "warning")
    if (reason := refusal(row, scope, who)) is not None:
        return Outcome(f"{reason} Nothing sent.", "warning")
    pid = row.pid
    try:
        if (changed := _changed(row, listed, root, who)) is not None:
            return Outcome(f"{changed}: nothing sent.", "warning")
        os.kill(pid, signum)
    except ProcessLookupError:
        return Outcome(f"PID {pid} has already exited: nothing sent.", "information")
    except PermissionError:
        return Outcome(f"Not allowed to signal PID {pid}.", "error")
    return Outcome(f"Sent {signal_name(signum)} to PID {pid} ({row.command[:60]})", "information", sent=True)


def _changed(row: ProcessRow, listed: bool, root: str, who: Caller) -> str | None:
    """Why /proc no longer shows the process the table listed (owner, kernel thread, start
    time), or None. Raises ProcessLookupError when it is gone."""
    pid = row.pid
    now = owner(pid, root)
    if now is not None and (now != row.uid or not who.root and now != who.uid):
        return f"PID {pid} is no longer the process listed (its owner changed)"
    stat = read_stat(pid, root)
    if stat is not None and is_kernel_thread(pid, stat.ppid, stat.flags):
        return f"PID {pid} is a kernel thread"
    if listed and stat is not None and not abs(stat.started - row.started) <= START_SLACK_S:  # NaN: not the same
        return f"PID {pid} is now another process (started at another time)"
    return None


def nice_of(pid: int) -> int | None:
    """The nice value of `pid` now; None when it is gone or hidden."""
    try:
        return os.getpriority(os.PRIO_PROCESS, pid)
    except OSError:
        return None


def renice(row: ProcessRow, step: int, scope: JobScope, *, listed: bool = True, root: str = "/",
           who: Caller | None = None) -> Outcome:
    """Change `row.pid`'s nice value by `step` (-1: higher priority, F7; +1: lower, F8), if
    `renice_refusal` allows it and /proc still shows the process listed (as `send` checks).
    The kernel's refusal is said with its reason. Never raises for a gone or forbidden pid."""
    who = who or caller()
    if step not in (-1, 1):
        return Outcome(f"A nice step of {step} is not one gpuscope makes: nothing changed.", "warning")
    if (reason := renice_refusal(row, scope, who)) is not None:
        return Outcome(f"{reason} Nothing changed.", "warning")
    pid = row.pid
    try:
        if (changed := _changed(row, listed, root, who)) is not None:
            return Outcome(f"{changed}: nothing changed.", "warning")
        before = os.getpriority(os.PRIO_PROCESS, pid)
        after = min(max(before + step, NICE_RANGE[0]), NICE_RANGE[1])
        if after == before:
            end = "highest priority (nice -20)" if step < 0 else "lowest priority (nice 19)"
            return Outcome(f"PID {pid} is already at the {end}: nothing changed.", "information")
        os.setpriority(os.PRIO_PROCESS, pid, after)
    except ProcessLookupError:
        return Outcome(f"PID {pid} has already exited: nothing changed.", "information")
    except PermissionError:
        if step < 0 and not who.root:
            return Outcome(f"The kernel refused to raise PID {pid}'s priority (nice {before} to {after}): lowering a "
                           "nice value needs root or CAP_SYS_NICE (or a RLIMIT_NICE that allows it). Nothing changed.", "error")
        return Outcome(f"Not allowed to renice PID {pid}. Nothing changed.", "error")
    return Outcome(f"PID {pid} ({row.command[:60]}): nice {before} → {after} "
                   f"({'higher' if step < 0 else 'lower'} priority)", "information", sent=True)
