"""Provides configuration fields from result file names, for comparing many runs at once.

The seed study (seed 001) names its files
`run_0_config_{nodes}_{gpus}_{network}_{profiler}_{workers}_{nn}_{data_loader}_{batch_size}_{grad}_{comp}_ret_0_0.gzip`
(e.g. `run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip`, and the marker
files the same with a `markers_` prefix and `.csv`). `config_fields` reads those by default; a
user with another naming describes it with a pattern such as `'exp_{nodes}n_{batch_size}_*'`:
`{name}` captures text (at least one character; before `*` or at the end, one part without `_` or `.`), `*` any text; the pattern must match the file
name from its start, and may stop before the end at a `_` or `.`. Values made of digits become
ints. A name that does not match gives a finding, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterable

import pandas as pd

from gpuscope.metrics.findings import Finding

SEED_FIELDS = ("nodes", "gpus", "network", "profiler", "workers", "nn", "data_loader", "batch_size", "grad", "comp")
DEFAULT_PATTERN = "run_{run}_config_" + "_".join("{%s}" % f for f in SEED_FIELDS) + "_ret_{ret}_{ret_index}"
_SEED_NAME = re.compile(r"(?:^|_)run_(?P<run>\d+)_config_(?P<body>.+?)(?:_ret_(?P<ret>\d+)_(?P<ret_index>\d+))?(?:\.[A-Za-z0-9.]+)?$")


def _value(text: str) -> object:
    return int(text) if text.isdigit() else text


@dataclass(frozen=True)
class NamePattern:
    """A user's file-name pattern, e.g. `'run_{run}_config_{nodes}_{gpus}_*'`."""

    text: str
    regex: re.Pattern[str]
    fields: tuple[str, ...]

    @classmethod
    def compile(cls, text: str) -> "NamePattern":
        """Raises ValueError for a malformed pattern (a command-line mistake, not file content)."""
        pattern = text.strip()
        if not pattern:
            raise ValueError("empty --name-pattern")
        out: list[str] = []
        fields: list[str] = []
        i = 0
        while i < len(pattern):
            ch = pattern[i]
            if ch == "*":
                out.append(".*?")
                i += 1
            elif ch == "{":
                end = pattern.find("}", i)
                name = pattern[i + 1:end] if end > 0 else ""
                if not name.isidentifier():
                    raise ValueError(f"bad field at position {i} in --name-pattern {text!r}: use {{name}}")
                if name in fields:
                    raise ValueError(f"field {{{name}}} appears twice in --name-pattern {text!r}")
                fields.append(name)
                literal_next = end + 1 < len(pattern) and pattern[end + 1] not in "*{"
                # Before a literal: shortest text up to it; before '*', another field or the end:
                # one name part (no '_' or '.'), so '{batch}*' on 'bs64_v2' is 64.
                out.append(f"(?P<{name}>[^/]+?)" if literal_next else f"(?P<{name}>[^_./]+)")
                i = end + 1
            else:
                out.append(re.escape(ch))
                i += 1
        regex = re.compile("^" + "".join(out) + r"(?:[._][^/]*)?$")
        return cls(text, regex, tuple(fields))

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
            return None, [Finding("warning", "no-config", f"file name does not follow {DEFAULT_PATTERN}; give --name-pattern", str(path))]
        findings = []
        if "field_1" in fields:
            findings.append(Finding("info", "config-fields", f"{len([k for k in fields if k.startswith('field_')])} config parts, not {len(SEED_FIELDS)}; named field_1...", str(path)))
        return fields, findings
    fields = pattern.match(name)
    if fields is None:
        return None, [Finding("warning", "no-config", f"file name does not match --name-pattern {pattern.text!r}", str(path))]
    return fields, []


def config_frame(paths: Iterable[str | PurePath], pattern: NamePattern | str | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """One row per file (`file` plus its fields; fields a file lacks are null) and the findings."""
    if isinstance(pattern, str):
        pattern = NamePattern.compile(pattern)
    rows, findings = [], []
    for path in paths:
        fields, found = config_fields(path, pattern)
        findings.extend(found)
        rows.append({"file": str(path), **(fields or {})})
    return pd.DataFrame(rows), findings
