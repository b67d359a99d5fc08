"""Property tests for marker CSVs: generated files read back to their markers, and arbitrary
bytes never raise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import markers

names = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters=',"\r\n\x85'), max_size=20).map(str.strip)
rows = st.lists(st.tuples(names, st.integers(-(2**62), 2**62)), max_size=30)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(rows)
def test_generated_markers_read_back(marks: list[tuple[str, int]]) -> None:
    text = "name_str,timestamp\n" + "".join(f"{n},{t}\n" for n, t in marks)
    read = markers.parse_markers(text, "gen")
    assert list(zip(read.table["name_str"].astype(str), read.table["timestamp"].astype(int))) == marks
    assert all(f.kind == "no-markers" for f in read.findings) and bool(read.findings) == (not marks)


@SETTINGS
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("m") / "markers_x.csv"
    path.write_bytes(data)
    read = markers.read_markers(path)
    markers.batch_duration_s(read.table)
    markers.parse_markers(data.decode("utf-8", "replace"))
