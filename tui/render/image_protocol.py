"""Provides `choose_protocol`: how the image view draws a picture in this terminal (no Textual).

The answer comes from the environment only, never from a query to the terminal: a query
needs the terminal's reply on standard input, which Textual's input thread reads once the app
runs, and one that gets no reply costs a timeout and can swallow a key. So:

- `GPUSCOPE_IMAGES=kitty|sixel|halfblocks` is obeyed as it is (`auto`, the default, guesses);
- not a terminal (tests, pipes): half blocks;
- inside tmux or GNU screen: half blocks. Both drop graphics escapes unless they are wrapped
  for passthrough (tmux: `allow-passthrough on`, which a program cannot see from inside), and
  the drawing library does not wrap them; `GPUSCOPE_IMAGES` overrides;
- kitty and Ghostty (the terminals that show the kitty protocol's Unicode placeholders, which
  is how a picture lives inside a Textual screen): kitty;
- WezTerm, iTerm2, foot, mlterm, Konsole 22.04+ (sixel terminals; WezTerm and Konsole also
  speak the kitty protocol but not its placeholders): sixel;
- anything else (xterm draws sixel only when started as a VT340, which the environment does
  not say): half blocks, which every colour terminal draws.
"""

from __future__ import annotations

from collections.abc import Mapping

ENV = "GPUSCOPE_IMAGES"
PROTOCOLS = ("kitty", "sixel", "halfblocks")

_KITTY_TERMS = ("xterm-kitty", "xterm-ghostty")
_KITTY_PROGRAMS = ("ghostty",)
_SIXEL_PROGRAMS = ("wezterm", "iterm.app")
_SIXEL_TERMS = ("foot", "foot-extra", "mlterm", "wezterm")
_MULTIPLEXER_TERMS = ("screen", "tmux")
_KONSOLE_SIXEL = 220400
"""KONSOLE_VERSION of the first Konsole with sixel (22.04)."""


def choose_protocol(env: Mapping[str, str], is_terminal: bool) -> tuple[str, str]:
    """(protocol, why): one of `PROTOCOLS`, and the environment fact that chose it."""
    asked = env.get(ENV, "").strip().lower()
    if asked in PROTOCOLS:
        return asked, f"{ENV}={asked}"
    note = f"{ENV}={asked!r} unknown, auto: " if asked not in ("", "auto") else ""
    protocol, why = _guess(env, is_terminal)
    return protocol, note + why


def _guess(env: Mapping[str, str], is_terminal: bool) -> tuple[str, str]:
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if not is_terminal:
        return "halfblocks", "not a terminal"
    if env.get("TMUX") or env.get("STY") or term.startswith(_MULTIPLEXER_TERMS):
        return "halfblocks", f"inside tmux or screen; {ENV} overrides"
    if term in _KITTY_TERMS or env.get("KITTY_WINDOW_ID") or program.lower() in _KITTY_PROGRAMS:
        return "kitty", f"TERM={term}" if term in _KITTY_TERMS else (f"TERM_PROGRAM={program}" if program else "KITTY_WINDOW_ID")
    if program.lower() in _SIXEL_PROGRAMS:
        return "sixel", f"TERM_PROGRAM={program}"
    if term.startswith(_SIXEL_TERMS) or env.get("MLTERM"):
        return "sixel", f"TERM={term}" if term.startswith(_SIXEL_TERMS) else "MLTERM"
    konsole = env.get("KONSOLE_VERSION", "")
    if konsole.isdigit() and int(konsole) >= _KONSOLE_SIXEL:
        return "sixel", f"KONSOLE_VERSION={konsole}"
    return "halfblocks", f"TERM={term or '(unset)'}; {ENV} overrides"
