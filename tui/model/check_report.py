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

from gpuscope.metrics.expected_check import Check, CheckResult, evaluate, matches
from gpuscope.metrics.findings import Finding
from gpuscope.parsers import expected
from gpuscope.parsers.textfile import MAX_BYTES, check_regular, display_name

MAX_FILES = 1000
"""Files read for one check run: patterns are meant to name a few tables, not a whole tree."""
SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}


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


def _walk(folder: Path) -> tuple[list[str], list[Finding]]:
    """Relative POSIX paths of the files below `folder`, sorted; symlinked folders not followed."""
    paths: list[str] = []
    findings: list[Finding] = []

    def failed(exc: OSError) -> None:
        findings.append(Finding("warning", "unreadable", f"cannot list: {exc.strerror or exc}", display_name(exc.filename or folder)))

    for root, dirs, files in os.walk(folder, onerror=failed):
        dirs.sort()
        rel = Path(root).relative_to(folder)
        paths.extend((rel / name).as_posix() for name in sorted(files))
    return paths, findings


def read_table(path: Path) -> tuple[pd.DataFrame | None, str]:
    """A CSV / TSV / Parquet / JSON file as a DataFrame of its cells as written (text for CSV,
    so `15.85×` and `1,234` reach `metrics.cells` intact), or None and why not."""
    label = display_name(path)
    problem = check_regular(path, label)
    if problem is not None:
        return None, problem.message
    try:
        if path.stat().st_size > MAX_BYTES:
            return None, f"larger than the {MAX_BYTES // 2**20} MB limit for a result file"
        suffix = path.suffix.lower()
        if suffix in SEPARATORS:
            return pd.read_csv(path, sep=SEPARATORS[suffix], dtype=str, keep_default_na=False, encoding_errors="replace"), ""
        if suffix == ".parquet":
            return pd.read_parquet(path), ""
        if suffix == ".json":
            return pd.read_json(path, dtype=False), ""
    except Exception as exc:  # pandas and pyarrow raise many kinds on bad content: one message
        return None, f"cannot be read as a table: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None, "not a table (CSV, TSV, Parquet or JSON)"


def check_folder(folder: str | os.PathLike[str], given: str | os.PathLike[str] | None = None) -> CheckReport:
    """Read the expected file, then every file below `folder` that a check names, and check.
    Never raises: a missing or broken expected file is a finding."""
    folder = Path(folder)
    path = expected_file(folder, given)
    checks, findings = expected.read(path)
    if not checks:
        return CheckReport(path, [], [], findings)
    paths, walk_findings = _walk(folder)
    findings += walk_findings
    own = path.resolve() if path.exists() else None
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
