"""Asserts that outside text reached the terminal or a pipe without escape sequences."""

from __future__ import annotations

import re
from typing import Any

from textual.app import App


RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udcff]")
"""C0 (but tab and newline) and C1 controls, and undecodable bytes (surrogate escapes)."""


def assert_clean_bytes(data: bytes, where: str, payload: bool = False) -> None:
    """No escape or control byte; `payload`: the OSC's text may remain (JSON keeps a file's
    name as data, its controls escaped as \\u001b)."""
    text = data.decode("utf-8", "surrogateescape")
    assert b"\x1b" not in data, f"{where}: ESC in {text!r}"
    assert not RAW.search(text), f"{where}: control in {text!r}"
    assert payload or "PWNED" not in text, f"{where}: OSC payload in {text!r}"


OWN = re.compile(r"\x1b\[[0-9;:?]*[A-Za-z]")
"""The driver's own CSI sequences (SGR colours, cursor moves): what Textual itself writes."""


def assert_clean_screen(app: App[Any], where: str) -> str:
    """The string the driver would write for the whole screen, checked; its plain text returned."""
    output = app.screen._compositor.render_full_update().render_segments(app.console)
    plain = OWN.sub("", output)
    assert "\x1b" not in plain, f"{where}: foreign escape in {plain!r}"
    assert not RAW.search(plain.replace("\n", "").replace("\r", "")), f"{where}: control in {plain!r}"
    assert "PWNED" not in plain
    strips = app.screen._compositor.render_strips()
    text = "\n".join(s.text for s in strips)
    assert not RAW.search(text.replace("\n", "")), f"{where}: control in strips {text!r}"
    return text
