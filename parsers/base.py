"""Provides FileRead, the one result type of every reader. Its own module, so that the readers
return it without importing the registry (which imports the readers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from gpuscope.metrics.findings import Finding


@dataclass(frozen=True)
class FileRead:
    """The one result type of every reader."""

    table: pd.DataFrame | None
    """A tidy table; None for kinds that are not tables (markdown, image, pdf)."""
    findings: list[Finding] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    """What else the reader learnt, e.g. {"rows": 12, "errors": 3, "pages": 4, "width": 640}."""
