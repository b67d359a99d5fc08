"""Provides `Finding`: one thing a reader skipped, doubted or wants the user to know.

Parsers return findings instead of raising, so a bad file never hides the good ones and
nothing is dropped silently: every excluded row or unreadable file is accounted for here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """A message about a file (or one of its lines), with how many rows it concerns."""

    severity: Severity
    kind: str
    """Short machine-readable category, e.g. `failed`, `warmup`, `impossible`, `truncated`."""
    message: str
    file: str = ""
    line: int | None = None
    count: int = 1
    """How many rows or lines the finding stands for (1 for a single event)."""

    def where(self) -> str:
        """`file:line`, `file`, or an empty string."""
        if self.file and self.line is not None:
            return f"{self.file}:{self.line}"
        return self.file


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then info; stable within a severity."""
    return sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
