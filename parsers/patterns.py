"""Provides the one {field} pattern compiler and its two uses: path context (the environment and
cluster size a result file's path encodes) and configuration fields from file names.

Studies keep context in folder names (`aws/eks/gpu/size16/results/...`), so the part of the
path between the folder the user gave and a component like `size16`, `16n` or `nodes-16`
becomes `environment` and `nodes`. A user with another layout describes it with a pattern
such as `'{environment}/gpu/size{nodes}/**'` instead of writing code.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath
from typing import Callable, Iterable

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import display_name

# A folder name that states the cluster size. Ordered: the first that matches wins.
NODE_COMPONENT = re.compile(
    r"^(?:size[-_]?(?P<a>\d+)|(?P<b>\d+)[-_]?n(?:odes?)?|nodes?[-_]?(?P<c>\d+)|n(?P<d>\d+))$",
    re.IGNORECASE,
)
NUMERIC_FIELDS = {"nodes", "gpus", "ranks", "tasks", "iter", "iteration", "size", "batch"}


def _nodes_of(component: str) -> int | None:
    match = NODE_COMPONENT.match(component)
    if not match:
        return None
    return int(next(g for g in match.groups() if g is not None))


def default_context(rel: PurePosixPath | str) -> dict[str, object]:
    """environment = folders before the first size-like folder; nodes = that size.
    `rel` is a relative path, or the same as a string with `/` between its parts."""
    folders = rel.split("/")[:-1] if isinstance(rel, str) else rel.parts[:-1]
    for i, part in enumerate(folders):
        nodes = _nodes_of(part)
        if nodes is not None:
            return {"environment": "/".join(folders[:i]) or ".", "nodes": nodes}
    return {"environment": "/".join(folders) or ".", "nodes": None}


def _compile(text: str, option: str, translate: Callable[[str, str], str], tail: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The one {field} compiler: `{name}` becomes a named group, every other character is
    literal except what `translate` turns into regex (`*`, `**`, `?`...). `translate(token,
    after)` gets the token (`{name}`, `**`, `*`, `?`) and the text after it. Raises ValueError
    for a malformed pattern (a command-line mistake, not file content), naming `option`."""
    out: list[str] = []
    fields: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "{":
            end = text.find("}", i)
            name = text[i + 1:end] if end > 0 else ""
            if not name.isidentifier():
                raise ValueError(f"bad field at position {i} in {option} {text!r}: use {{name}}")
            if name in fields:
                raise ValueError(f"field {{{name}}} appears twice in {option} {text!r}")
            fields.append(name)
            out.append(f"(?P<{name}>{translate('{' + name + '}', text[end + 1:])})")
            i = end + 1
            continue
        token = "**" if text.startswith("**", i) else text[i]
        out.append(translate(token, text[i + len(token):]))
        i += len(token)
    return re.compile("^" + "".join(out) + tail), tuple(fields)


def _path_token(token: str, after: str) -> str:
    if token.startswith("{"):
        return r"\d+" if token[1:-1] in NUMERIC_FIELDS else ".+?"
    return {"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token))


def _name_token(token: str, after: str) -> str:
    if token.startswith("{"):
        # Before a literal: shortest text up to it; before '*', another field or the end:
        # one name part (no '_' or '.'), so '{batch}*' on 'bs64_v2' is 64.
        return "[^/]+?" if after[:1] not in ("", "*", "{") else "[^_./]+"
    if token == "**":
        return ".*?.*?"
    return ".*?" if token == "*" else re.escape(token)


@dataclass(frozen=True)
class PathPattern:
    """A user's layout, e.g. `'{environment}/gpu/size{nodes}/**'`.

    `{name}` captures text (it may span folders); `{nodes}` and other count-like names
    capture digits; `*` is any text inside one folder; `**` any number of folders.
    """

    text: str
    regex: re.Pattern[str]
    fields: tuple[str, ...]

    @classmethod
    def compile(cls, text: str) -> "PathPattern":
        pattern = text.strip().strip("/")
        if not pattern:
            raise ValueError("empty --path-pattern")
        # '/.*' (after '**' too) allows files directly under the folder.
        regex, fields = _compile(pattern, "--path-pattern", _path_token, "" if pattern.endswith("**") else "(?:/.*)?")
        return cls(text, re.compile((regex.pattern + "$").replace("/.*", "(?:/.*)?")), fields)

    def match(self, rel: PurePosixPath | str) -> dict[str, object] | None:
        found = self.regex.match(str(rel))
        if not found:
            return None
        return {k: (int(v) if k in NUMERIC_FIELDS else v) for k, v in found.groupdict().items()}


def context_for(rel: PurePosixPath | str, pattern: PathPattern | None) -> dict[str, object] | None:
    """Context of one file, or None when a user's pattern does not match its path."""
    if pattern is None:
        return default_context(rel)
    found = pattern.match(rel)
    if found is None:
        return None
    found.setdefault("environment", ".")
    found.setdefault("nodes", None)
    return found


def is_excluded(rel: PurePosixPath, globs: tuple[str, ...]) -> bool:
    """True when the relative path, or any folder or file name on it, matches a glob."""
    text = str(rel)
    return any(
        fnmatch.fnmatchcase(text, g) or any(fnmatch.fnmatchcase(p, g) for p in rel.parts)
        for g in globs
    )


def strip_common_prefix(environments: list[str]) -> dict[str, str]:
    """Drop leading folders every environment shares (`experiments/aws/eks` -> `aws/eks`)."""
    distinct = sorted(set(environments))
    if len(distinct) < 2:
        return {e: e for e in distinct}
    split = [e.split("/") for e in distinct]
    common = 0
    while all(len(s) > common + 1 and s[common] == split[0][common] for s in split):
        common += 1
    return {e: "/".join(s[common:]) for e, s in zip(distinct, split)}


# ============================================================== fields from file names
# Provides configuration fields from result file names, for comparing many runs at once.
# 
# The seed study (seed 001) names its files
# `run_0_config_{nodes}_{gpus}_{network}_{profiler}_{workers}_{nn}_{data_loader}_{batch_size}_{grad}_{comp}_ret_0_0.gzip`
# (e.g. `run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip`, and the marker
# files the same with a `markers_` prefix and `.csv`). `config_fields` reads those by default; a
# user with another naming describes it with a pattern such as `'exp_{nodes}n_{batch_size}_*'`:
# `{name}` captures text (at least one character; before `*` or at the end, one part without `_` or `.`), `*` any text; the pattern must match the file
# name from its start, and may stop before the end at a `_` or `.`. Values made of digits become
# ints. A name that does not match gives a finding, never an exception.

SEED_FIELDS = ("nodes", "gpus", "network", "profiler", "workers", "nn", "data_loader", "batch_size", "grad", "comp")
DEFAULT_PATTERN = "run_{run}_config_" + "_".join("{%s}" % f for f in SEED_FIELDS) + "_ret_{ret}_{ret_index}"
_SEED_NAME = re.compile(r"(?:^|_)run_(?P<run>\d+)_config_(?P<body>.+?)(?:_ret_(?P<ret>\d+)_(?P<ret_index>\d+))?(?:\.[A-Za-z0-9.]+)?$")


def _value(text: str) -> object:
    return int(text) if text.isdigit() else text


@dataclass(frozen=True)
class NamePattern:
    """A user's file-name pattern, e.g. `'run_{run}_config_{nodes}_{gpus}_*'`: `{name}` captures
    text (at least one character; before `*`, another field or the end, one part without `_` or
    `.`), `*` any text; it matches the name from its start and may stop at a `_` or `.`."""

    text: str
    regex: re.Pattern[str]
    fields: tuple[str, ...]

    @classmethod
    def compile(cls, text: str) -> "NamePattern":
        """Raises ValueError for a malformed pattern (a command-line mistake, not file content)."""
        pattern = text.strip()
        if not pattern:
            raise ValueError("empty --name-pattern")
        regex, fields = _compile(pattern, "--name-pattern", _name_token, r"(?:[._][^/]*)?$")
        return cls(text, regex, fields)

    def match(self, name: str) -> dict[str, object] | None:
        found = self.regex.match(name)
        return None if found is None else {k: _value(v) for k, v in found.groupdict().items()}


def seed_fields(name: str) -> dict[str, object] | None:
    """The seed's naming: run, the ten config fields, ret, ret_index. Extra or missing config parts
    are named `field_N` (1-based) so nothing is dropped; None when the name is not of that form."""
    found = _SEED_NAME.search(name)
    if found is None:
        return None
    parts = found["body"].split("_")
    fields: dict[str, object] = {"run": int(found["run"])}
    names = SEED_FIELDS if len(parts) == len(SEED_FIELDS) else tuple(f"field_{i + 1}" for i in range(len(parts)))
    fields.update({k: _value(v) for k, v in zip(names, parts)})
    if found["ret"] is not None:
        fields["ret"] = int(found["ret"])
        fields["ret_index"] = int(found["ret_index"])
    return fields


def config_fields(path: str | PurePath, pattern: NamePattern | str | None = None) -> tuple[dict[str, object] | None, list[Finding]]:
    """(fields, findings) for one file; fields is None when the name does not match."""
    name = PurePath(str(path)).name
    if isinstance(pattern, str):
        pattern = NamePattern.compile(pattern)
    if pattern is None:
        fields = seed_fields(name)
        if fields is None:
            return None, [Finding("warning", "no-config", f"file name does not follow {DEFAULT_PATTERN}; give --name-pattern", display_name(path))]
        findings = []
        if "field_1" in fields:
            findings.append(Finding("info", "config-fields", f"{len([k for k in fields if k.startswith('field_')])} config parts, not {len(SEED_FIELDS)}; named field_1...", display_name(path)))
        return fields, findings
    fields = pattern.match(name)
    if fields is None:
        return None, [Finding("warning", "no-config", f"file name does not match --name-pattern {pattern.text!r}", display_name(path))]
    return fields, []


def config_frame(paths: Iterable[str | PurePath], pattern: NamePattern | str | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One row per file (`file` plus its fields; fields a file lacks are null) and the findings."""
    if isinstance(pattern, str):
        pattern = NamePattern.compile(pattern)
    rows, findings = [], []
    for path in paths:
        fields, found = config_fields(path, pattern)
        findings.extend(found)
        rows.append({"file": display_name(path), **(fields or {})})
    return pd.DataFrame(rows), findings
