"""Provides the texts a study reads from the paths a user gave: every file of the folders
(through the one folder walker, `files.walk`) less the excluded ones, and each file given by
itself; all read under one budget of bytes and lines (the texts are kept together until the
table is built), each with the context its path gives.

    texts, findings = tree.read_texts(["experiments/"], mentions_magma, "MAGMA", exclude=("attempt-1",))
    texts[0].label, texts[0].data, texts[0].context["environment"]

`context_columns` gives a tidy table the columns of each row's file: its label and what its path says.
A file met in a folder that is not the study's kind (`accept` says no), empty or binary is
skipped, and one finding names the skipped files; a file given by itself is read whatever it
holds, and a problem with it is a finding of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import MAX_BYTES, MAX_LINES, MB, decode, display_name, read_bytes, too_many_lines, walk
from gpuscope.parsers.patterns import PathPattern, context_for, is_excluded, strip_common_prefix

SKIPPED_NAMED = 20
"""How many of the skipped files the finding names."""
KEY_BYTES = 4096
"""Bytes of a text's head and tail that, with its size, say which texts may be byte-identical."""


@dataclass
class Text:
    """One file read."""

    label: str
    """Its path relative to the folder given (or, for a file given by itself, to `root`)."""
    data: bytes
    """UTF-8 text ending with a newline."""
    context: dict[str, object]
    findings: list[Finding]
    cut: bool
    """The file ended mid-line (the newline was added)."""
    digest: str = ""
    """For byte-identical files, the label of the first of them; "" for a file unlike the others."""


def read_texts(paths: Sequence[str | os.PathLike[str]], accept: Callable[[bytes], bool], name: str, *, path_pattern: str | None = None,
               exclude: Sequence[str] = (), root: str | os.PathLike[str] | None = None,
               budget: tuple[int, int] = (MAX_BYTES, MAX_LINES)) -> tuple[list[Text], list[Finding]]:
    """The texts of `paths` that are the study's kind (`name`, as findings say it: "MAGMA"), and
    findings for what could not be read; `budget`: bytes and lines for all texts together. The
    environments lose the leading folders they all share."""
    pattern = PathPattern.compile(path_pattern) if path_pattern else None
    candidates, findings = discover(paths, exclude, root)
    texts: list[Text] = []
    skipped: list[str] = []
    left = list(budget)
    for base, path, explicit in candidates:
        loaded = _load(base, path, explicit, pattern, accept, name, (left[0], left[1]))
        if isinstance(loaded, str):
            skipped.append(f"{_label(base, path)} ({loaded})")
        elif isinstance(loaded, Finding):
            if loaded.kind == "huge" and left != list(budget):
                loaded = Finding("error", "huge", f"{loaded.message}; the limit is what the files read before it left of the budget of one read "
                                 f"({budget[0] // MB} MB and {budget[1]:,} lines of text for all files)", loaded.file)
            findings.append(loaded)
        else:
            text, lines = loaded
            texts.append(text)
            left[0] -= len(text.data)
            left[1] -= lines
    if skipped:
        named = ", ".join(skipped[:SKIPPED_NAMED]) + (f" and {len(skipped) - SKIPPED_NAMED} more" if len(skipped) > SKIPPED_NAMED else "")
        findings.append(Finding("info", "skipped", f"{len(skipped)} file(s) under the given folders hold no {name} output and were skipped: {named}",
                                count=len(skipped)))
    if not texts and not findings:
        findings.append(Finding("warning", "no-data", f"no {name} output files found"))
    rename = strip_common_prefix([str(t.context.get("environment", ".")) for t in texts])
    for t in texts:
        t.context["environment"] = rename.get(str(t.context.get("environment", ".")), t.context.get("environment"))
    # Byte-identical files: only texts alike in size, head and tail are hashed and compared whole.
    alike: dict[tuple[int, bytes, bytes], list[Text]] = {}
    for t in texts:
        alike.setdefault((len(t.data), t.data[:KEY_BYTES], t.data[-KEY_BYTES:]), []).append(t)
    for group in (g for g in alike.values() if len(g) > 1):
        first: dict[bytes, Text] = {}
        for t in group:
            same = first.setdefault(t.data, t)
            if same is not t:
                same.digest = t.digest = same.label
    return texts, findings


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = (),
             root: str | os.PathLike[str] | None = None) -> tuple[list[tuple[Path, Path, bool]], list[Finding]]:
    """(folder labels are relative to, file, given by itself) for every candidate file, and
    findings for missing paths and folders that cannot be listed. A file given by itself is
    labelled relative to `root`, by default its folder."""
    found: list[tuple[Path, Path, bool]] = []
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in walk(path):
                if exclude and is_excluded(PurePosixPath(file.relative_to(path).as_posix()), tuple(exclude)):
                    continue
                if os.path.isdir(file):  # a link to a folder is not followed; a folder yielded itself cannot be listed
                    if not os.path.islink(file):
                        findings.append(Finding("warning", "unreadable", "cannot list folder", _label(path, file)))
                    continue
                found.append((path, file, False))
        elif path.exists() or path.is_symlink():  # a symlink loop: read, to say so
            found.append((Path(root) if root is not None else path.parent, path, True))
        else:
            findings.append(Finding("error", "missing", "no such file or folder", display_name(path)))
    return found, findings


def _label(root: Path, path: Path) -> str:
    return display_name(path.relative_to(root).as_posix() if path != root else path.name)


def _load(root: Path, path: Path, explicit: bool, pattern: PathPattern | None, accept: Callable[[bytes], bool], name: str,
          budget: tuple[int, int]) -> tuple[Text, int] | Finding | str:
    """One file's text and its lines; a finding when it cannot be read; for a file met while
    walking a folder that is not the study's kind, why (a few words)."""
    label = _label(root, path)
    data, problems = read_bytes(path, label, budget[0], max_lines=None)  # lines counted once, here
    if data is None:
        return problems[0] if explicit or problems[0].kind not in ("binary", "empty") else problems[0].kind
    lines = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))  # newlines: numpy's vector loop, not a byte at a time
    if lines > budget[1]:
        return too_many_lines(lines, budget[1], label)
    if not explicit and not accept(data):
        return f"no {name} header"
    if not data.isascii():  # ASCII is valid UTF-8: only other bytes need decoding
        text, problems = decode(data, label)
        data = text.encode("utf-8")
    context = context_for(label, pattern)
    if context is None:
        problems.append(Finding("warning", "path", f"path does not match --path-pattern {pattern.text!r}; environment unknown", label))  # type: ignore[union-attr]
        context = {"environment": ".", "nodes": None}
    cut = not data.endswith(b"\n")
    return Text(label, data + b"\n" if cut else data, context, list(problems), cut), lines + cut


def categorical(codes: np.ndarray, labels: Sequence[object]) -> pd.Categorical:
    """Per row, the label its code picks (None: missing), categories in first-seen label order."""
    index: dict = {}
    remap = np.array([-1 if x is None else index.setdefault(x, len(index)) for x in labels] or [0], np.int64)
    return pd.Categorical.from_codes(remap[codes] if codes.size else codes, categories=pd.Index(list(index), dtype=object))


def integers(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Whole numbers as an Int64 column, NaN as missing."""
    missing = np.isnan(values)
    return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)


def context_columns(file_of: np.ndarray, texts: Sequence[Text]) -> dict[str, object]:
    """Per row, what its file's path says: `environment`, `nodes` and any other field of the
    path pattern, by name."""
    nodes = np.array([np.nan if t.context.get("nodes") is None else float(t.context["nodes"]) for t in texts] or [np.nan])  # type: ignore[arg-type]
    columns: dict[str, object] = {"environment": categorical(file_of, [str(t.context.get("environment", ".")) for t in texts]),
                                  "nodes": integers(nodes[file_of])}
    for name in sorted({key for t in texts for key in t.context} - {"environment", "nodes"}):
        columns[name] = categorical(file_of, [t.context.get(name) for t in texts])
    return columns
