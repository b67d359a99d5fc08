"""Provides how every command speaks: one cleaned line on stderr, and its output on stdout or
into -o FILE, where a write that fails (a full disk, a closed pipe) is one line and exit 1; or
its screen (`run_screen`), whose Textual modules are imported only when a screen opens."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import Any, Callable, Sequence

from gpuscope.metrics import export
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean_lines


def say(message: object) -> None:
    """One message on stderr: file names, scontrol's words and findings are outside text, so
    cleaned of escape sequences (a folder named `\x1b]0;...` must not retitle the terminal)."""
    print(f"gpuscope: {clean_lines(message)}", file=sys.stderr)


def fail(message: str, code: int = 1) -> int:
    say(message)
    return code


def text_width(args: argparse.Namespace) -> int:
    """--width, else the terminal's width, else 120 (pipes, CI logs)."""
    return args.width or (shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 120)


def write_stdout(text: str) -> None:
    """All of `text` on standard output, or OSError. Unbuffered (`python -u`, PYTHONUNBUFFERED)
    stdout is a raw file whose write may take only part of the bytes (a pipe whose reader has
    gone) without an error: the rest is written again until it goes or fails, so a closed pipe
    is said instead of losing the output silently. A full disk or a closed pipe shows here,
    not at exit."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
    while data:
        written = out.write(data)
        data = data[written if written is not None else 0:]
    out.flush()


def emit(args: argparse.Namespace, fmt: str, text: str) -> int:
    """Write `text` to -o FILE (atomically) or stdout; 0, or 1 with a message when writing fails."""
    if not args.output:
        try:
            write_stdout(text)
        except OSError as exc:
            return stdout_failed(exc)
        return 0
    try:
        export.write_text(args.output, text)
    except OSError as exc:
        return fail(f"cannot write {args.output}: {exc.strerror or exc}")
    print(clean_lines(f"wrote {args.output} ({fmt})"), file=sys.stderr)
    return 0


def stdout_failed(exc: OSError) -> int:
    """Standard output cannot be written (`> /dev/full`, `| head` that has gone): one line, exit 1.

    Standard output then points at /dev/null, as Python's documentation advises for a broken
    pipe: the interpreter flushes it once more at exit, and that must not fail again with an
    "Exception ignored" report."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no descriptor (closed, replaced): nothing to flush at exit
        pass
    try:
        say(f"cannot write to standard output: {exc.strerror or exc}")
    except OSError:  # stderr went the same way (`2>&1 | head`)
        pass
    return 1


def print_findings(findings: Sequence[Finding]) -> None:
    for finding in findings:
        say(f"{finding.where() + ': ' if finding.where() else ''}{finding.message}")


def run_screen(first_screen: Callable[[], Any], hint: str, mode: str | None = None, watch: Callable[[], Any] | None = None) -> int | None:
    """Open the screen; its exit status, or None when stdout is not a terminal (the caller
    prints text instead). No terminal on stdin is a usage error (exit 2, with `hint`).
    `mode`: 'watch' or 'browse' for the app of both modes; `watch` makes the watch screen
    when the browser asks for it."""
    from gpuscope.tui.app import GpuscopeApp, NoTerminal
    from gpuscope.tui.screens.views.image import use_protocol

    use_protocol()  # how pictures are drawn: before Textual starts, which owns the terminal's replies after
    app = GpuscopeApp(first_screen=first_screen, mode=mode, watch=watch)
    try:
        app.run()
    except NoTerminal as exc:
        if exc.stream == "stdout":
            return None
        return fail(f"{exc}; {hint}", 2)
    if app.terminal_lost:
        try:
            fail("the terminal went away: screen closed")
        except OSError:  # stderr was that terminal
            pass
        return 1
    return 0
