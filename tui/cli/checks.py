"""Provides what the command line checks before any work: option values and where -o writes.

Option values are argparse `type=` functions, so a bad one is a usage error (exit 2) with the
option's name before a file is read or a sample taken: `--duration nan` would otherwise
record forever (no time is ever past NaN), `--width -1` fail deep inside the text layout.

`overwritten_input` keeps a report from replacing what it reports on: `gpuscope magma in.txt
-o in.txt` would otherwise swap the MAGMA output for its own summary. This module imports
nothing of the command line's, so every subcommand's module can use it.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from typing import Iterable

__all__ = ["command_inputs", "finite_float", "overwritten_input", "positive_int"]


def finite_float(text: str) -> float:
    """A number that is not nan, inf or -inf (the range is the option's own check)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of 1 or more (a width, a count)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text!r}")
    return value


def command_inputs(args: argparse.Namespace) -> list[str]:
    """The files and folders the command reads: what its -o must not replace.

    `browse` counts only a file given as its argument: it reads just the first KB of a folder's
    files to name their kinds, and writing the listing into the folder it lists is its normal use.
    A `--demo` scenario is an input when it is a file (`watch --once --demo run.json -o run.json`)."""
    command = getattr(args, "command", None)
    inputs = [*getattr(args, "paths", ()), *getattr(args, "markers", ())]
    if command == "check":
        inputs += [args.folder, *([args.expected] if args.expected else [])]
    elif command == "browse" and not os.path.isdir(args.folder):
        inputs.append(args.folder)
    elif command == "report" and args.recording:
        inputs.append(args.recording)
    demo = getattr(args, "demo", None)
    if demo and os.path.isfile(demo):
        inputs.append(demo)
    return inputs


def overwritten_input(output: str, inputs: Iterable[str]) -> str | None:
    """Why writing `output` would replace one of `inputs`, or None when it would not.

    Replaced means: `output` is an existing regular file that is an input file (the same file
    by device and inode, so a hard link or a symlink to it counts), or lies inside an input
    folder (every file below a folder is read) by its real path or by inode. A file that does
    not exist yet, or a device such as /dev/null, loses nothing."""
    try:
        target = os.stat(output)
    except (OSError, ValueError):  # not there yet, or a name the system refuses: nothing to lose
        return None
    if not stat.S_ISREG(target.st_mode):
        return None
    same = (target.st_dev, target.st_ino)
    real = os.path.realpath(output)
    for given in inputs:
        if os.path.isdir(given):
            folder = os.path.realpath(given)
            if os.path.commonpath([folder, real]) == folder or _inode_below(given, same):
                return f"-o {output} is inside the input folder {given}, which this command reads: write the output outside it"
        elif _inode(given) == same:
            return f"-o {output} is the input {given}: writing would replace it; choose another file"
    return None


def _inode(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)  # follows a symlink: the file it names is what would be lost
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def _inode_below(folder: str, same: tuple[int, int]) -> bool:
    """Whether a file below `folder` (or a symlink there) is the file `same` names: a hard
    link or a symlink from outside the folder to one of its files."""
    for here, _dirs, files in os.walk(folder):
        if any(_inode(os.path.join(here, name)) == same for name in files):
            return True
    return False
