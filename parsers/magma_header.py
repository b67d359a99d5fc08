"""Provides the MAGMA column header model: which token of a data row means what.

Testers print different columns (BLAS testers: GPU first, time in ms; LAPACK testers: CPU
first, time in seconds; batched testers: a BatchCount column), so rows are read through the
header line that precedes them, never through fixed positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SIZE_WORDS = {"batchcount": "batch_count", "m": "m", "n": "n", "k": "k"}
PAIR = re.compile(r"(\S+)\s+Gflop/s\s*\(\s*(ms|sec|s)\s*\)", re.IGNORECASE)
GPU_LABELS = ("magma", "gpu")
REF_LABELS = ("cublas", "hipblas", "rocblas")


@dataclass(frozen=True, slots=True)
class HeaderSpec:
    """Token positions of one tester's data rows (after `(` and `)` become spaces)."""

    text: str
    sizes: tuple[str, ...]
    """Names of the leading integer columns, e.g. ('batch_count', 'm', 'n', 'k')."""
    pairs: tuple[str, ...]
    """Labels of the `Gflop/s (time)` pairs in order, e.g. ('MAGMA', 'cuBLAS', 'CPU')."""
    seconds: bool
    """True when times are printed in seconds (LAPACK testers); converted to ms on read."""

    def pair_index(self, role: str) -> int | None:
        """Index of the pair for `gpu`, `cpu` or `ref` (cuBLAS), or None if absent."""
        low = [p.lower() for p in self.pairs]
        if role == "cpu":
            return low.index("cpu") if "cpu" in low else None
        if role == "ref":
            return next((i for i, p in enumerate(low) if p in REF_LABELS), None)
        found = next((i for i, p in enumerate(low) if p in GPU_LABELS), None)
        if found is None:
            found = next((i for i, p in enumerate(low) if p != "cpu" and p not in REF_LABELS), None)
        return found

    @property
    def first_trailing(self) -> int:
        """Position of the first token after the pairs (the error column)."""
        return len(self.sizes) + 2 * len(self.pairs)


def parse_header(line: str) -> HeaderSpec | None:
    """A spec from a `% ... Gflop/s (ms) ...` header line, or None if it is not one."""
    body = line.lstrip("%# \t")
    first = PAIR.search(body)
    if not first:
        return None
    # Words before the first pair's label are the size columns (BatchCount, M, N, K).
    size_words = [w.lower() for w in body[: first.start()].split()]
    sizes = tuple(SIZE_WORDS[w] for w in size_words if w in SIZE_WORDS)
    if not sizes or len(sizes) != len(size_words):
        return None
    pairs = tuple(m.group(1) for m in PAIR.finditer(body))
    seconds = PAIR.search(body).group(2).lower() != "ms"  # type: ignore[union-attr]
    return HeaderSpec(line.strip(), sizes, pairs, seconds)
