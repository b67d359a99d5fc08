"""Provides `clean()`: make text from outside (file contents, names, command output) safe to display.

Terminal escape sequences in a file, process or kernel name, or in a command's error message,
could retitle the terminal, clear it or move the cursor when printed, so they are removed
whole; other control characters become a visible `?`. Every place that shows or prints outside
text goes through here (`clean` for one line, `clean_lines` for a message of several).
Markup safety is the renderer's job (always wrap in `rich.text.Text`), not this module's.

Removed (ECMA-48): CSI `ESC [` or 8-bit `0x9b`, parameters, intermediates, final byte;
control strings OSC, DCS, SOS, PM, APC (`ESC ] P X ^ _` or 8-bit `0x9d 0x90 0x98 0x9e 0x9f`)
up to BEL, ST (`ESC \\` or 8-bit `0x9c`) or the end of the text; any other ESC with its
intermediates and final byte (`ESC ( B`, `ESC c`), and a lone ESC.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?"  # OSC DCS SOS PM APC
    r"|\x1b[ -/]*[0-~]?"  # other escape sequences, lone ESC
)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(value: object) -> str:
    """Return `value` as a single-line string without escape sequences or controls."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    text = _ESCAPES.sub("", text)
    text = text.replace("\t", " ").replace("\r\n", " ").replace("\n", " ")
    return _CONTROLS.sub("?", text)


def clean_lines(value: object) -> str:
    """Like `clean`, but line breaks stay (a message of several lines, e.g. a loading error)."""
    text = value if isinstance(value, str) else str(value)
    return "\n".join(clean(line) for line in _ESCAPES.sub("", text).replace("\r\n", "\n").split("\n"))
