"""Provides the text pieces the live panes are drawn with: meter bars and sparklines.

Plain `rich.text.Text`, built per refresh: drawing 16 GPU rows or 128 cores this way costs
well under a millisecond, where a widget per bar would cost a layout pass each.
"""

from __future__ import annotations

import math
from typing import Sequence

from rich.text import Text

EIGHTHS = " ▏▎▍▌▋▊▉█"
SPARKS = "▁▂▃▄▅▆▇█"


def level_style(percent: float | None) -> str:
    """Green below 50 %, yellow below 80 %, red above: the nvitop/htop convention."""
    if percent is None:
        return "dim"
    if percent < 50:
        return "green"
    return "yellow" if percent < 80 else "red"


def bar(percent: float | None, width: int, style: str | None = None) -> Text:
    """A meter `width` cells wide, filled to `percent` in eighths of a cell; blank when None."""
    width = max(1, width)
    if percent is None or math.isnan(percent):
        return Text("╌" * width, style="dim")
    share = min(max(percent, 0.0), 100.0) / 100.0
    eighths = round(share * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (EIGHTHS[part] if part and full < width else "")
    text = Text(filled, style=style or level_style(percent))
    text.append("·" * (width - len(filled)), style="dim")
    return text


def sparkline(values: Sequence[float], width: int, top: float = 100.0) -> Text:
    """The last `width` values as ▁..█ on a fixed 0..`top` scale (gaps blank), right-aligned
    so the newest sample is always at the right edge."""
    width = max(0, width)
    tail = list(values)[-width:] if width else []
    chars = []
    for v in tail:
        if v is None or math.isnan(v):
            chars.append(" ")
        else:
            chars.append(SPARKS[min(len(SPARKS) - 1, max(0, int(v / top * (len(SPARKS) - 1) + 0.5)))])
    return Text(" " * (width - len(tail)) + "".join(chars), style="cyan")


def fixed(text: str, width: int, right: bool = False) -> str:
    """`text` cut or padded to exactly `width` cells (ASCII-sized names only need this)."""
    if len(text) > width:
        return text[: max(0, width - 1)] + "…" if width > 0 else ""
    return text.rjust(width) if right else text.ljust(width)


def id_ranges(ids: frozenset[int] | tuple[int, ...]) -> str:
    """`{0, 1, 2, 5}` -> `0-2,5`, the cpuset notation."""
    out: list[str] = []
    for i in sorted(ids):
        if out and out[-1].split("-")[-1] == str(i - 1):
            out[-1] = out[-1].split("-")[0] + f"-{i}"
        else:
            out.append(str(i))
    return ",".join(out)
