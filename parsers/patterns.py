"""Provides path context: the environment and cluster size a result file's path encodes.

Studies keep context in folder names (`aws/eks/gpu/size16/results/...`), so the part of the
path between the folder the user gave and a component like `size16`, `16n` or `nodes-16`
becomes `environment` and `nodes`. A user with another layout describes it with a pattern
such as `'{environment}/gpu/size{nodes}/**'` instead of writing code.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

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
        out, fields, i = [], [], 0
        while i < len(pattern):
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
            elif pattern[i] == "*":
                out.append("[^/]*")
                i += 1
            elif pattern[i] == "?":
                out.append("[^/]")
                i += 1
            elif pattern[i] == "{":
                end = pattern.find("}", i)
                name = pattern[i + 1 : end] if end > 0 else ""
                if not name.isidentifier():
                    raise ValueError(f"bad field at position {i} in --path-pattern {text!r}: use {{name}}")
                if name in fields:
                    raise ValueError(f"field {{{name}}} appears twice in --path-pattern {text!r}")
                fields.append(name)
                out.append(f"(?P<{name}>\\d+)" if name in NUMERIC_FIELDS else f"(?P<{name}>.+?)")
                i = end + 1
            else:
                out.append(re.escape(pattern[i]))
                i += 1
        regex = "^" + "".join(out) + ("" if pattern.endswith("**") else "(?:/.*)?") + "$"
        # '/.*' after '**' allows files directly under the folder too.
        regex = regex.replace("/.*", "(?:/.*)?")
        return cls(text, re.compile(regex), tuple(fields))

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
