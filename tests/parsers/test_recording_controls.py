"""The recording reader's look for control characters in a batch's strings (parsers/recording/read.py:
`_has_controls` over the string bytes found by `_string_data`) agrees with a look at every string."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording import schema as recording_schema


def _control(text: str) -> bool:
    """What safe_text.clean replaces or drops, character by character: C0, DEL and C1."""
    return any(ch < " " or "\x7f" <= ch <= "\x9f" for ch in text)


def _look(array: pa.Array) -> bool:
    return recording._has_controls([array], [recording._string_data(array.type)])


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), TEXT), max_size=8), st.lists(st.lists(TEXT, max_size=3), max_size=5))
def test_controls_found_exactly_where_a_string_holds_one(texts: list[str | None], nested: list[list[str]]) -> None:
    plain = pa.array(texts, pa.string())
    assert _look(plain) == any(_control(t) for t in texts if t is not None)
    rows = pa.array([{"name": "gpu", "reasons": names, "n": i} for i, names in enumerate(nested)],
                    pa.struct([("name", pa.string()), ("reasons", pa.list_(pa.string())), ("n", pa.int64())]))
    assert _look(rows) == any(_control(t) for names in nested for t in names)


def test_bytes_that_look_like_a_c1_lead_are_not_controls() -> None:
    assert not _look(pa.array(["£ 5", "Ä", "\u00a0", "日本"]))  # C2 A3, C3 84, C2 A0, 3-byte characters
    assert _look(pa.array(["ok", "next\u0085line"]))  # C2 85: NEL, a C1 control
    assert _look(pa.array(["bell\x07"])) and _look(pa.array(["del\x7f"])) and _look(pa.array(["\x1b[2J"]))
    assert not _look(pa.array([], pa.string())) and not _look(pa.array([None], pa.string()))


def test_every_string_of_the_recording_schema_is_found() -> None:
    """Every string column of a recording, however deep, is looked at: a null row holds no
    control, a GPU's name (a string in a struct in a list) with an escape sequence does."""
    schema = recording_schema.SCHEMA
    for field in schema:
        if not recording._string_data(field.type):
            continue
        assert not _look(pa.array([None], field.type)), field.name
    gpu_names = pa.array([[{"name": "A100\x1b]0;owned\x07", "index": 0}]], schema.field("gpus").type)
    assert _look(gpu_names)
    assert not _look(pa.array([[{"name": "A100", "index": 0}]], schema.field("gpus").type))
