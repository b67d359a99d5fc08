"""Provides `clean()`: make text from outside (file contents, names) safe to display.

Terminal escape sequences in a process or kernel name could move the cursor or change
colours when printed, so they are removed; other control characters become visible `?`.
Markup safety is the renderer's job (always wrap in `rich.text.Text`), not this module's.
"""

from __future__ import annotations

import re

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), and two-byte ESC sequences.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(value: object) -> str:
    """Return `value` as a single-line string without escape sequences or controls."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    text = _ESCAPES.sub("", text)
    text = text.replace("\t", " ").replace("\r\n", " ").replace("\n", " ")
    return _CONTROLS.sub("?", text)
