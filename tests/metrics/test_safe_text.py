"""`metrics.safe_text.clean`: no escape sequence or control character from outside text
(file names, process names, scontrol's messages) ever reaches the terminal."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.safe_text import clean, clean_lines

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b]0;PWNED\x07b", "ab"),  # OSC ended by BEL (retitles the terminal)
        ("a\x1b]0;PWNED\x1b\\b", "ab"),  # OSC ended by ST
        ("a\x1b]8;;http://x\x9cb", "ab"),  # OSC ended by the 8-bit ST
        ("a\x1b[2Jb", "ab"),  # CSI (clears the screen)
        ("a\x1b[1;31mb", "ab"),
        ("a\x1b[ qb", "ab"),  # CSI with an intermediate byte (cursor shape)
        ("a\x1b[?1049hb", "ab"),  # private CSI (alternate screen)
        ("a\x9b31mb", "ab"),  # 8-bit CSI
        ("a\x9d0;x\x9cb", "ab"),  # 8-bit OSC ended by 8-bit ST
        ("a\x9d0;x\x07b", "ab"),  # 8-bit OSC ended by BEL
        ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),  # DCS (sixel) ... ST
        ("a\x1b_Gf=100;AAAA\x1b\\b", "ab"),  # APC (kitty graphics)
        ("a\x1b^secret\x1b\\b", "ab"),  # PM
        ("a\x1bXsos\x1b\\b", "ab"),  # SOS
        ("a\x90payload\x9cb", "ab"),  # 8-bit DCS
        ("a\x9fapc\x9cb", "ab"),  # 8-bit APC
        ("a\x1b", "a"),  # lone ESC at the end
        ("a\x1bcb", "ab"),  # ESC c (full reset)
        ("a\x1b7b", "ab"),  # ESC 7 (save cursor)
        ("a\x1b(Bb", "ab"),  # charset designation (an intermediate byte)
        ("tab\there", "tab here"),
        ("two\nlines", "two lines"),
        ("bell\x07", "bell?"),
        ("del\x7f", "del?"),
        ("c1\x85", "c1?"),
        ("plain [bold]markup[/] stays", "plain [bold]markup[/] stays"),
        ("ünïcødé 名前", "ünïcødé 名前"),
    ],
)
def test_clean_removes_sequences(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_clean_unterminated_osc_and_dcs_hide_the_rest() -> None:
    assert clean("a\x1b]0;title") == "a"
    assert clean("a\x1bPpayload") == "a"
    assert not CONTROL.search(clean("a\x9d0;x"))


def test_clean_non_strings() -> None:
    assert clean(42) == "42"
    assert clean(ValueError("bad \x1b[2J name")) == "bad  name"


def test_clean_lines_keeps_line_breaks() -> None:
    assert clean_lines("one \x1b[2J\ntwo\x1b]0;x\x07\r\nthree") == "one \ntwo\nthree"


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x2FF)))
def test_clean_never_leaves_a_control(text: str) -> None:
    out = clean(text)
    assert not CONTROL.search(out)
    assert "\n" not in out
    assert not CONTROL.search(clean_lines(text).replace("\n", ""))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["\x1b", "[", "]", "P", "\\", "\x07", "\x9b", "\x9c", "\x9d", "\x90", "0", ";", "m", "a", "\n", " ", "é"]), max_size=40))
def test_clean_never_leaves_a_control_sequence_soup(parts: list[str]) -> None:
    assert not CONTROL.search(clean("".join(parts)))


def test_clean_is_fast_on_long_hostile_text() -> None:
    import time

    text = "\x1b]" + "x" * 1_000_000 + "\x1b[" * 100_000
    start = time.process_time()  # CPU time the OS recorded: the same on a busy machine
    clean(text)
    assert time.process_time() - start < 1.0
