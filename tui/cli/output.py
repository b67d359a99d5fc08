"""Provides how every command speaks: one cleaned line on stderr, and its output on stdout or
into -o FILE, where a write that fails (a full disk, a closed pipe) is one line and exit 1; or
its screen (`run_screen`), whose Textual modules are imported only when a screen opens."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from gpuscope.metrics import export
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean_lines
from gpuscope.tui.cli.checks import positive_int


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


def text_limit(args: argparse.Namespace) -> int | None:
    """The width text tables must fit: --width, else the terminal's when printing to one;
    None (natural width) for a pipe or a file, which is read later, not on this screen."""
    if args.width:
        return args.width
    if getattr(args, "output", None) is None and sys.stdout.isatty():
        return shutil.get_terminal_size((120, 24)).columns
    return None


def write_stdout(text: str) -> None:
    """All of `text` on standard output, or OSError. Unbuffered (`python -u`, PYTHONUNBUFFERED)
    stdout is a raw file whose write may take only part of the bytes (a pipe whose reader has
    gone) without an error: the rest is written again until it goes or fails, so a closed pipe
    is said instead of losing the output silently. A full disk or a closed pipe shows here,
    not at exit. A character the terminal's encoding lacks (a box line on Latin-1) is
    written as `?`, never a traceback."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    errors = sys.stdout.errors if sys.stdout.errors not in (None, "strict") else "replace"
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", errors))
    while data:
        written = out.write(data)
        data = data[written if written is not None else 0:]
    out.flush()


def add_output_options(parser: argparse.ArgumentParser, tables: Sequence[str] = (), *, screen: bool = False,
                       formats: Sequence[str] = export.FORMATS, format_help: str | None = None, output_help: str | None = None) -> None:
    """--format (one of `formats`), -o, --table (only `tables`, the subcommand's own; none: no
    --table) and --width. `screen`: the command opens a screen unless one of them is given."""
    if screen:
        format_help = format_help or "print (or write with -o) instead of opening the screen (the default when stdout is not a terminal: text)"
        output_help = output_help or "write to FILE (format from --format or the extension)"
    parser.add_argument("--format", choices=formats, help=format_help or "output format (default: from -o's extension, else text)")
    parser.add_argument("-o", "--output", metavar="FILE", help=output_help or "write to FILE instead of stdout")
    if tables:
        default = "kernels" if "kernels" in tables else tables[0]
        parser.add_argument("--table", choices=tables, help=f"which table to print (default: {default} for csv, all for the other formats)")
    parser.add_argument("--width", type=positive_int, metavar="COLS", help="text width (default: terminal width or 120)")
    parser.set_defaults(formats=tuple(formats))  # what `unknown_extension` lists


def unknown_extension(args: argparse.Namespace) -> str | None:
    """Why -o FILE names no format the command writes (`-o out.xlsx` without --format), or None.
    A name without an extension (`-o /dev/stdout`, `-o report`) is text."""
    if args.format or not args.output:
        return None
    suffix = Path(args.output).suffix
    if not suffix or export.EXTENSIONS.get(suffix.lower()) in args.formats:
        return None
    names = ", ".join(f"{fmt} ({', '.join(e for e, f in export.EXTENSIONS.items() if f == fmt)})" for fmt in args.formats)
    return f"-o {args.output}: {suffix!r} names no format this command writes; use one of {names}, or give --format"


def output_format(args: argparse.Namespace) -> str:
    """--format, else what -o's extension names, else text."""
    return args.format or (export.format_for_path(args.output) if args.output else "text")


def missing_path(paths: Sequence[str]) -> int | None:
    """Exit status 2 with a message naming the first path that does not exist; None when all do."""
    for path in paths:
        if not os.path.exists(path):
            return fail(f"no such file or folder: {path}", 2)
    return None


def on_screen(args: argparse.Namespace, open_screen: Callable[[argparse.Namespace], int | None]) -> int | None:
    """Without --format and -o: `open_screen(args)`, the screen's exit status (None when stdout is
    not a terminal); None too when the command prints instead."""
    return open_screen(args) if args.format is None and args.output is None else None


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
