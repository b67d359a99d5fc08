"""Provides `check_folder`: a result folder's expected ranges (`expected.toml`) checked.

What `gpuscope check DIR` prints and the browser marks: the checks from the expected file,
every file below the folder that a check names read as a table, and one result per check and
file (see `metrics.expected_check`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gpuscope.metrics.expected import Check, CheckResult, evaluate, matches
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import expected, registry
from gpuscope.parsers.files import display_name, walk

MAX_FILES = 1000
"""Files read for one check run: patterns are meant to name a few tables, not a whole tree."""


@dataclass(frozen=True)
class CheckReport:
    """The checks, their results, and what went wrong reading the expected file or the tables."""

    expected_file: Path
    checks: list[Check] = field(default_factory=list)
    results: list[CheckResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    """Problems with the expected file (errors: a check was left out) and with the folder."""

    @property
    def expected_ok(self) -> bool:
        """The expected file was read whole: no check was left out."""
        return bool(self.checks) and not any(f.severity == "error" and f.file == display_name(self.expected_file) for f in self.findings)


def expected_file(folder: Path, given: str | os.PathLike[str] | None = None) -> Path:
    """The expected-ranges file: `given`, else `expected.toml` in `folder`."""
    return Path(given) if given else folder / expected.FILE_NAME


def read_table(path: Path) -> tuple[pd.DataFrame | None, str]:
    """A file as the table the registry's reader of its kind gives (what the table view shows,
    so failed cells mark the same rows), or None and why not."""
    got = registry.read(path)
    if got.table is not None:
        return got.table, ""
    problems = [f.message for f in got.findings if f.severity == "error"] or [f.message for f in got.findings]
    return None, clean(problems[0]) if problems else f"not a table ({got.meta.get('kind', 'unknown kind')})"


def check_folder(folder: str | os.PathLike[str], given: str | os.PathLike[str] | None = None) -> CheckReport:
    """Read the expected file, then every file below `folder` that a check names, and check.
    Never raises: a missing or broken expected file is a finding."""
    folder = Path(folder)
    path = expected_file(folder, given)
    checks, findings = expected.read_checks(path)
    if not checks:
        return CheckReport(path, [], [], findings)
    own = path.resolve() if path.exists() else None
    paths = [p.relative_to(folder).as_posix() for p in walk(folder) if p != folder]
    wanted = [p for p in paths if any(matches(c.file, p) for c in checks) and (folder / p).resolve() != own]
    if len(wanted) > MAX_FILES:
        findings.append(Finding("warning", "too-many", f"{len(wanted):,} files match the checks' patterns; only the first {MAX_FILES:,} were read", display_name(folder)))
        wanted = wanted[:MAX_FILES]
    tables: dict[str, pd.DataFrame] = {}
    unreadable: dict[str, str] = {}
    for rel in wanted:
        table, why = read_table(folder / rel)
        if table is None:
            unreadable[rel] = why
        else:
            tables[rel] = table
    return CheckReport(path, checks, evaluate(checks, tables, unreadable), findings)
