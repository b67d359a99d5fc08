"""Merging a job's output files by the timestamps their lines carry (parsers/log_merge.py)."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.parsers import log_merge

EPOCH = datetime(2024, 5, 1, 12, 0, 0)


def at(seconds: float, fmt: str = "iso") -> str:
    moment = EPOCH + timedelta(seconds=seconds)
    if fmt == "logging":
        return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{moment.microsecond // 1000:03d}"
    if fmt == "bracket":
        return moment.strftime("[%Y/%m/%d %H:%M:%S]")
    return moment.isoformat(timespec="microseconds")


BASE = calendar.timegm(EPOCH.timetuple())

# A line: a stamp (seconds after EPOCH, in one of the formats) or none, then a message.
lines_st = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 10_000)), st.sampled_from(["iso", "logging", "bracket"]),
              st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)),
    max_size=25,
)


def render(rows: list[tuple[int | None, str, str]]) -> list[str]:
    return [(f"{at(t, fmt)} " if t is not None else "  ") + message for t, fmt, message in rows]


def test_stamps_in_the_formats_logs_write() -> None:
    assert log_merge.stamp("2024-05-01T12:00:00 start") == BASE
    assert log_merge.stamp("2024-05-01 12:00:01,250 INFO x") == BASE + 1.25
    assert log_merge.stamp("[2024/05/01 12:00:02] step") == BASE + 2
    assert log_merge.stamp("2024-05-01T14:00:00+02:00 zoned") == BASE  # `date -Is`
    assert log_merge.stamp("2024-05-01T12:00:00Z") == BASE
    assert log_merge.stamp("rank 0: loss 0.1") is None
    assert log_merge.stamp("2024-13-01 12:00:00 not a month") is None
    assert log_merge.stamp("x" * 60 + " 2024-05-01 12:00:00 quoted late in the line") is None


def test_merge_interleaves_by_time_and_keeps_continuations_with_their_line() -> None:
    out = ["2024-05-01T12:00:00 out starts", "2024-05-01T12:00:05 out step", "plain continuation of step"]
    err = ["2024-05-01T12:00:02 Traceback (most recent call last):", '  File "x.py", line 1', "2024-05-01T12:00:09 err ends"]
    merged = log_merge.merge([out, err])
    assert [(m.source, m.text) for m in merged] == [
        (0, out[0]), (1, err[0]), (1, err[1]), (0, out[1]), (0, out[2]), (1, err[2])]
    assert merged[2].time is None and merged[1].time == BASE + 2


def test_files_without_stamps_follow_whole() -> None:
    merged = log_merge.merge([["no stamp a", "no stamp b"], ["2024-05-01T12:00:00 stamped"]])
    assert [(m.source, m.number) for m in merged] == [(1, 0), (0, 0), (0, 1)]


@settings(max_examples=80, deadline=None)
@given(st.lists(lines_st, max_size=4))
def test_merge_is_a_permutation_keeping_each_files_order(files: list[list[tuple[int | None, str, str]]]) -> None:
    sources = [render(rows) for rows in files]
    merged = log_merge.merge(sources)
    assert sorted((m.source, m.number) for m in merged) == [(i, n) for i, s in enumerate(sources) for n in range(len(s))]
    for index, lines in enumerate(sources):
        mine = [m for m in merged if m.source == index]
        assert [m.number for m in mine] == list(range(len(lines)))
        assert [m.text for m in mine] == lines


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10_000), max_size=20).map(sorted), max_size=4), st.sampled_from(["iso", "logging", "bracket"]))
def test_stamped_lines_come_out_in_time_order(times: list[list[int]], fmt: str) -> None:
    sources = [[f"{at(t, fmt)} line {k}" for k, t in enumerate(ts)] for ts in times]
    merged = log_merge.merge(sources)
    stamps = [m.time for m in merged]
    assert all(t is not None for t in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert stamps == sorted(BASE + t for ts in times for t in ts)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_stamp_never_raises(text: str) -> None:
    value = log_merge.stamp(text)
    assert value is None or isinstance(value, (int, float))


@settings(max_examples=60, deadline=None)
@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)))
def test_stamp_reads_back_an_iso_time(moment: datetime) -> None:
    text = moment.replace(tzinfo=timezone.utc).isoformat()
    assert abs(log_merge.stamp(text + " msg") - moment.replace(tzinfo=timezone.utc).timestamp()) < 1e-6  # type: ignore[operator]


def test_read_merges_real_files_cleans_escapes_and_names_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "rank-0.log", tmp_path / "b" / "rank-0.log"
    first.write_bytes(b"2024-05-01T12:00:00 \x1b[31mred\x1b[0m start\n2024-05-01T12:00:04 done\n")
    second.write_bytes(b"2024-05-01T12:00:02 epoch 1\nprogress 10%\rprogress 100%\n\xff\xfe binary-ish\n")
    merged = log_merge.read([str(first), str(second), str(tmp_path / "missing.out"), str(tmp_path)])
    assert merged.labels[:2] == ["a/rank-0.log", "b/rank-0.log"]  # same name: the folder tells them apart
    assert [m.text for m in merged.lines] == ["2024-05-01T12:00:00 red start", "2024-05-01T12:00:02 epoch 1", "progress 100%", "\ufffd\ufffd binary-ish",
                                              "2024-05-01T12:00:04 done"]
    assert len(merged.findings) == 2 and {f.severity for f in merged.findings} == {"error"}
    assert merged.cut == []


def test_read_takes_the_tail_of_a_large_file(tmp_path: Path) -> None:
    big = tmp_path / "slurm-1.out"
    big.write_text("".join(f"line {k}\n" for k in range(20_000)))
    merged = log_merge.read([str(big)], limit=1000)
    assert merged.cut == ["slurm-1.out"]
    assert merged.lines[-1].text == "line 19999" and all(m.text.startswith("line ") for m in merged.lines)
