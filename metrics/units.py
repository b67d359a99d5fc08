"""Provides human-readable sizes and rates for tables, verdicts and exports."""

from __future__ import annotations

import math
import re

_SLURM_SIZE = re.compile(r"(?P<n>[0-9]+(?:\.[0-9]+)?)(?P<unit>[KMGTP]?)(?P<per>[nc]?)", re.IGNORECASE)
"""Slurm sizes: `10G`, `500M`, `163M`, `10748K`, `3000` (bare), and ReqMem's `4000Mn` /
`4000Mc` (per node / per CPU, before 21.08)."""


def slurm_size(text: str | None, bare: str = "M") -> tuple[int | None, str]:
    """Bytes of a Slurm size and its per-node/per-CPU mark ('n', 'c' or ''); (None, '') when
    it is not one. `bare`: the unit of a number without one (scontrol's `Mem=3000` is MB,
    sacct's `MaxRSS` of `0` is bytes: pass '')."""
    m = _SLURM_SIZE.fullmatch((text or "").strip())
    if not m:
        return None, ""
    unit = (m.group("unit") or bare).upper()
    value = float(m.group("n")) * 1024 ** ("KMGTP".index(unit) + 1 if unit else 0)
    return (int(value) if math.isfinite(value) and value < 2**62 else None), m.group("per").lower()


def human_bytes(n: float | None) -> str:
    """`1536` -> `1.5 KiB`; None -> `n/a` (unknown is never shown as 0)."""
    if n is None:
        return "n/a"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover


def percent(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}%"
