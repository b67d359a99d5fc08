"""Hostile recordings (tests/hostile_recordings.py writes them): outside strings holding
terminal escapes come back cleaned exactly as live ones are, in `read`, the report's stream,
the replay's model and its screen; batches that claim more than they hold are refused before
they are decoded, in bounded memory; crafted and foreign files give one message and exit 1;
a recording of one-sample batches reports the same as one of big batches."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_recordings as hostile
from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.metrics.job.report import report
from gpuscope.parsers.recording.usage import usage_per_node
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.recording import read as recording
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.cli.main import main
from gpuscope.tui.model.replay import open_replay
from gpuscope.tui.screens.replay import ReplayScreen
from clean_asserts import RAW, assert_clean_bytes, assert_clean_screen

GPUSCOPE = [sys.executable, "-m", "gpuscope.tui.cli.main"]


def strings(value: Any) -> Iterator[str]:
    """Every string in a snapshot or rows (dataclasses, dicts, tuples, sets)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from strings(getattr(value, f.name))
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, (tuple, list, frozenset)):
        for v in value:
            yield from strings(v)


def assert_clean(texts: Iterator[str] | list[str], where: str) -> int:
    count = 0
    for text in texts:
        assert not RAW.search(text) and "PWNED" not in text, f"{where}: {text!r}"
        count += 1
    return count


def test_read_cleans_every_outside_string(tmp_path: Path) -> None:
    rec = recording.read(hostile.escapes(tmp_path / "hostile.gsrec"))
    assert rec.samples == 30 and rec.findings == []
    snap = rec.snapshot(1)
    assert assert_clean(strings(snap), "snapshot") >= 40
    assert snap.host.hostname == "nodex" and snap.gpus[0].name.endswith("x") and snap.gpu_status.driver_version == "550x"
    assert snap.scope.label.endswith("x") and snap.gpus[0].throttle_reasons == ("hw_slowdownx",)
    assert snap.gpus[0].energy_note == "whole GPUx" and snap.gpus[1].activity_note == "no GPMx"
    assert snap.rapl.reason == "root onlyx" and snap.rapl.zones[0].name == "package-0x"


def test_the_report_and_replay_read_clean_strings(tmp_path: Path) -> None:
    path = hostile.escapes(tmp_path / "hostile.gsrec")
    rows = [row for batch in recording.Stream(path).batches() for row in batch.to_pylist()]  # what the report reduces
    scopes = [recording_schema.scope_from(row.pop("scope")) for row in rows]  # the struct's strings, read back as a JobScope
    assert len(rows) == 30 and assert_clean(strings(rows), "stream") > 30 * 30 and assert_clean(strings(scopes), "scopes") > 30 * 5
    replay = open_replay(path)
    try:
        assert replay.nodes == ("nodex",)
        assert replay.events and assert_clean([e.text for e in replay.events], "events")
        assert assert_clean(strings(replay.snapshot(5)), "replay snapshot") >= 40 and replay.snapshot(5).processes
    finally:
        replay.close()


def test_report_prints_no_escape(tmp_path: Path, gpuscope_cli_bytes) -> None:
    path = hostile.escapes(tmp_path / "hostile.gsrec")
    for fmt in ("text", "markdown", "json"):
        proc = gpuscope_cli_bytes("report", "--recording", path, "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert_clean_bytes(proc.stdout, f"report {fmt}")
        assert_clean_bytes(proc.stderr, f"report {fmt} stderr")
        assert b"nodex" in proc.stdout


async def test_replay_screen_shows_no_escape(tmp_path: Path) -> None:
    path = hostile.escapes(tmp_path / "hostile.gsrec")
    replay = open_replay(path)
    app = GpuscopeApp(first_screen=lambda: ReplayScreen(path, replay))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):
            if isinstance(app.screen, ReplayScreen) and app.screen.cursor is not None:
                break
            await pilot.pause(0.05)
        screen = app.screen
        for key in ("n", "full_stop", "end"):  # an event's note, another sample, the last one
            await pilot.press(key)
            await pilot.pause(0.1)
            text = assert_clean_screen(app, f"replay after {key}")
            for title in (screen.title, screen.sub_title, app.title, app.sub_title):
                assert "\x1b" not in (title or "") and "PWNED" not in (title or "")
        assert "nodex" in text or "nodex" in (screen.sub_title or "")
    replay.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_any_string_reads_back_as_clean_makes_it(tmp_path: Path, text: str) -> None:
    snap = FakeSource(gpus=1, processes=2).poll()
    snap = dataclasses.replace(snap, host=dataclasses.replace(snap.host, hostname=text),
                               processes=tuple(dataclasses.replace(p, command=text) for p in snap.processes))
    path = tmp_path / "r.gsrec"
    path.unlink(missing_ok=True)
    with Recorder(path) as rec:
        rec.add(snap)
    back = recording.read(path).snapshot(0)
    assert back.host.hostname == clean(text) and {p.command for p in back.processes} == {clean(text)}


# --- decoded size is budgeted -------------------------------------------------------------------

MEASURE = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(proc.stderr)
"""


def run_measured(*args: str) -> tuple[int, int, str]:
    """(exit status, peak RSS in KiB, stderr) of the CLI, measured in a child of its own."""
    proc = subprocess.run([sys.executable, "-c", MEASURE, *GPUSCOPE, *args], capture_output=True, text=True, timeout=120)
    code, rss = proc.stdout.split()
    return int(code), int(rss), proc.stderr


@pytest.mark.parametrize("make, said", [(hostile.claims_rows, "claims 2,147,483,648 rows"), (hostile.huge_string, "1.0 GiB decoded")],
                         ids=["2^31 rows", "1 GiB string"])
def test_a_batch_claiming_too_much_is_refused_in_bounded_memory(tmp_path: Path, make, said: str) -> None:
    path = make(tmp_path / "big.gsrec")
    assert path.stat().st_size < 100_000
    found = recording.read(path).findings
    assert [f.kind for f in found] == ["too-large"] and said in found[0].message
    for command in (["report", "--recording", str(path)], ["replay", str(path)]):
        code, rss, err = run_measured(*command)
        assert code == 1 and said in err and "Traceback" not in err, err
        assert rss < 1024 * 1024, f"{command[0]}: peak RSS {rss} KiB"


def test_a_bigger_batch_after_good_ones_keeps_them(tmp_path: Path) -> None:
    good = (hostile.one_row_batches(tmp_path / "good.gsrec", 3)).read_bytes()
    bad = hostile.claims_rows(tmp_path / "bad.gsrec").read_bytes()
    first_batch = hostile._messages(bad)[1][0]
    end = len(good) - 8  # before the end-of-stream marker
    (tmp_path / "both.gsrec").write_bytes(good[:end] + bad[first_batch:])
    rec = recording.read(tmp_path / "both.gsrec")
    assert rec.samples == 3 and [f.kind for f in rec.findings] == ["too-large"] and "the 3 samples before are kept" in rec.findings[0].message


# --- crafted and foreign recordings ---------------------------------------------------------

NEWER = recording_schema.VERSION + 1
CRAFTED = {
    "missing column": (hostile.missing_column, "no column gpus"),
    "no RAPL column": (lambda p: hostile.missing_column(p, "node_rapl"), "no column node_rapl"),
    "every column a string": (hostile.all_strings, "timestamp is string, not double"),
    "scope not JSON": (lambda p: hostile.scope_text(p, "{not json"), "scope is not JSON"),
    "scope nested 100,000 deep": (lambda p: hostile.scope_text(p, hostile.deep_json()), "nested too deep"),
    "scope of wrong types": (lambda p: hostile.scope_text(p, hostile.scope_wrong_types()), "its pids are not a list of int"),
    **{f"version {v!r}": (lambda p, v=v: hostile.version(p, v.encode()), f"recording version {v!r} is not one gpuscope writes")
       for v in ("1.0", "abc", "-1", "0", "")},
    "scope with no kind": (hostile.scope_without, "it has no kind"),
    "a newer version": (lambda p: hostile.version(p, str(NEWER).encode()), f"written by a newer gpuscope (recording version {NEWER}"),
}


@pytest.mark.parametrize("case", CRAFTED)
def test_crafted_recordings_are_one_message_and_exit_1(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    make, said = CRAFTED[case]
    path = make(tmp_path / "crafted.gsrec")
    for command in (["report", "--recording", str(path)], ["replay", str(path)]):
        assert main(command) == 1, command
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (command, err)
        assert ("newer gpuscope" in err) == (case == "a newer version")


# --- many small batches --------------------------------------------------------------------


def test_one_row_batches_report_as_big_batches_do(tmp_path: Path) -> None:
    """200 one-sample batches (the report joins them before reducing; bench/record_bench.py
    times 10,000) give the report of the same samples in 60-sample batches."""
    small = hostile.one_row_batches(tmp_path / "small.gsrec", 200)
    stream = recording.Stream(small)
    usages = usage_per_node(stream.batches())
    assert stream.samples == 200 and stream.complete
    big = tmp_path / "big.gsrec"
    taken = recording.read(small)
    with Recorder(big, batch_samples=60) as rec:
        for i in range(taken.samples):
            rec.add(taken.snapshot(i))
    expected = usage_per_node(recording.Stream(big).batches())
    assert report(usages).tables[1].records() == report(expected).tables[1].records()
    assert report(usages).tables[0].records() == report(expected).tables[0].records()
    assert report(usages).advice == report(expected).advice
