"""Provides FileRead, the one result type of every reader, and `Reader`, what every reader module
declares. Its own module, so that the readers return it without importing the registry (which
imports the readers).

A reader module is one file kind. It declares, at module level:

    KIND = "nvprof"                  # the kind's name, as `browse` and `--format json` say it
    TITLE = "nvprof export"          # what a person reads
    VIEW = "kernels"                 # the view that opens it: magma, kernels, scaling, replay,
                                     # table, markdown, log, image, pdf, text
    BOUNDED = False                  # True: read within row / decoded-size budgets, never whole,
                                     # so a file over the full-read limit is still no problem
    def match(name, head) -> str | None      # why the file is of this kind, or None
    def describe(head, size) -> str          # the kind-specific part of a one-line summary
    def read(path) -> FileRead               # never raises on bad content

and the registry lists the module in `READERS`. `match` and `describe` look at the file's name
and at most its head (`files.HEAD_BYTES`), never further.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import Head

__all__ = ["FileRead", "Head", "Reader"]


@dataclass(frozen=True)
class FileRead:
    """The one result type of every reader."""

    table: pd.DataFrame | None
    """A tidy table; None for kinds that are not tables (markdown, image, pdf)."""
    findings: list[Finding] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    """What else the reader learnt, e.g. {"rows": 12, "errors": 3, "pages": 4, "width": 640}."""


class Reader(Protocol):
    """A reader module, seen as an object (a module satisfies this structurally)."""

    KIND: str
    TITLE: str
    VIEW: str
    BOUNDED: bool

    def match(self, name: str, head: Head) -> str | None: ...

    def describe(self, head: Head, size: int) -> str: ...

    def read(self, path: Path) -> FileRead: ...
