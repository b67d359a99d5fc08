"""Provides human-readable sizes and rates for tables, verdicts and exports."""

from __future__ import annotations


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
