"""Provides which files the run-log readers look at: every file of the folders given (through
the one folder walker, `files.walk_kinds`), each once however it is reached, with the label it is
shown by and the names the name rule reads resources from; and the job scripts in a log's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple, Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import display_name, walk_kinds
from gpuscope.parsers.runlogs import formats as fmt


class Candidate(NamedTuple):
    path: Path
    label: str
    parts: tuple[str, ...]
    """The file's stem, then its folders inwards-out up to the folder given (the name rule's order)."""
    explicit: bool
    """Given by itself, not met in a folder: saying it holds no run is then worth a finding."""


def _stem(name: str) -> str:
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name  # Path.stem


def candidates(paths: Sequence[str | os.PathLike[str]], findings: list[Finding]) -> list[Candidate]:
    """Every candidate file of `paths`, in walking order; a missing path is a finding."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            base = path.parent
            # per file only strings (a Path per file and a stat cost more than the rest of the
            # walk; links are told by the listing); the folder's own values once per folder
            folders: dict[str, tuple[str, tuple[str, ...], str]] = {}
            real_root = os.path.realpath(path)
            top = path.name
            for file, kind in walk_kinds(path):
                full = os.fspath(file)
                if kind == "folder" or (kind == "link" and os.path.isdir(full)):
                    continue  # a link to a folder, or one that cannot be listed: not followed
                here_text, name = os.path.split(full)
                if here_text not in folders:  # its real path, its parts below `path`, the labels' prefix
                    here = file.parent
                    inner_parts = here.relative_to(path).parts
                    # the walk enters no link to a folder: below the real `path`, a folder's real path is its name
                    prefix = str(here.relative_to(base)) if str(base) not in ("", ".") else str(here)
                    # os.path.join(folder, "") + name is os.path.join(folder, name) for a bare name: joined once per folder
                    folders[here_text] = (os.path.join(real_root, *inner_parts, ""), (*reversed(inner_parts), top),
                                          "" if prefix == "." else os.path.join(prefix, ""))
                real, folder_parts, prefix = folders[here_text]
                # a file's real path is its folder's plus its name, unless it is a link itself
                key = os.path.realpath(full) if kind == "link" else real + name
                if key in seen:
                    continue
                seen.add(key)
                found.append(Candidate(file, display_name(prefix + name), (_stem(name), *folder_parts), False))  # label: str(Path(prefix) / name)
        elif path.exists():
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            found.append(Candidate(path, display_name(given), (path.stem, path.parent.name), True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", display_name(given)))
    return found


def job_scripts(folder: Path) -> list[Path]:
    """The job scripts of a folder (by their suffix, `fmt.SCRIPT_SUFFIXES`), by name; none when it cannot be listed."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)  # one folder: by name is by path
    except OSError:
        return []
    out = []
    for entry in entries:
        dot = entry.name.rfind(".")
        suffix = entry.name[dot:].lower() if 0 < dot < len(entry.name) - 1 else ""  # Path.suffix
        try:
            if suffix in fmt.SCRIPT_SUFFIXES and entry.is_file():
                out.append(folder / entry.name)
        except OSError:
            continue
    return out
