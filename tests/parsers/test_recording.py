"""Recording files: the schema round trip, batching, a kill -9 mid-recording, cut and foreign
files, permissions, and the version-1 file kept in tests/data (every later gpuscope reads it)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_recordings as hostile
from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder, RecordingError
from gpuscope.metrics.samples import JobScope
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording import read as recording

DATA = Path(__file__).parent.parent / "data" / "recordings"
REPO = Path(__file__).resolve().parents[2]


def snapshots(n: int, **kwargs):
    source = FakeSource(**kwargs)
    return [source.poll() for _ in range(n)]


def test_round_trip_is_exact(tmp_path: Path) -> None:
    taken = snapshots(25, gpus=4, processes=30, mig=True)
    with Recorder(tmp_path / "r.gsrec", batch_samples=10) as rec:
        for s in taken:
            rec.add(s)
    back = recording.read(tmp_path / "r.gsrec")
    assert back.version == recording_schema.VERSION and back.complete and back.findings == []
    assert back.samples == 25 and rec.batches_written == 3
    assert [back.snapshot(i) for i in range(25)] == taken  # every field, None stays None
    assert list(back.times) == [s.host.timestamp for s in taken]


def test_no_gpu_and_none_values_stay_none(tmp_path: Path) -> None:
    taken = snapshots(3, backend="none", processes=5)
    with Recorder(tmp_path / "r.gsrec") as rec:
        for s in taken:
            rec.add(s)
    back = recording.read(tmp_path / "r.gsrec")
    assert [back.snapshot(i) for i in range(3)] == taken
    assert back.snapshot(0).gpus == () and back.snapshot(0).gpu_status.backend == "none"


def test_batch_by_time(tmp_path: Path) -> None:
    now = [0.0]
    rec = Recorder(tmp_path / "r.gsrec", batch_samples=1000, batch_seconds=10.0, clock=lambda: now[0])
    for s in snapshots(6, processes=3):
        rec.add(s)
        now[0] += 3.0
    # samples at 0, 3, 6, 9 s wait; the one at 12 s finds the batch 12 s old and writes all 5
    assert rec.batches_written == 1 and rec.pending == 1
    rec.close()
    assert recording.read(tmp_path / "r.gsrec").samples == 6


def test_never_overwrites_and_not_world_writable(tmp_path: Path) -> None:
    path = tmp_path / "r.gsrec"
    path.write_text("precious")
    with pytest.raises(RecordingError, match="never overwrites"):
        Recorder(path)
    assert path.read_text() == "precious"
    old = os.umask(0)
    try:
        with Recorder(tmp_path / "open.gsrec"):
            pass
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "open.gsrec").stat().st_mode)
    assert not mode & stat.S_IWOTH and mode & stat.S_IRUSR
    with pytest.raises(RecordingError, match="folder does not exist"):
        Recorder(tmp_path / "no" / "such.gsrec")


def test_write_error_is_a_plain_error_and_earlier_batches_stay(tmp_path: Path) -> None:
    """A child whose file size limit (RLIMIT_FSIZE) stops the writes, as a full disk would:
    RecordingError with a plain message, and the batches written before still read."""
    out = tmp_path / "limited.gsrec"
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from fake_watch import FakeSource
        from gpuscope.collectors.recorder import Recorder, RecordingError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))
        source = FakeSource(gpus=2, processes=40)
        rec = Recorder({str(out)!r}, batch_samples=5)
        try:
            for _ in range(400):
                rec.add(source.poll())
        except RecordingError as exc:
            print("error:", exc)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error: ") and "Traceback" not in done.stdout + done.stderr
    back = recording.read(out)
    assert back.samples >= 5 and back.samples % 5 == 0


def test_disk_full_message() -> None:
    import errno

    from gpuscope.collectors.recorder import _message

    assert "disk is full" in _message(OSError(errno.ENOSPC, "No space left on device"), "r.gsrec")
    assert "cannot write here" in _message(OSError(errno.EACCES, "Permission denied"), "/r.gsrec")


def test_kill_9_keeps_every_written_batch(tmp_path: Path) -> None:
    """A child records fast and is killed with SIGKILL mid-run: the file reads, with the
    whole batches, and says it was cut (or ends cleanly at a batch boundary)."""
    out = tmp_path / "killed.gsrec"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from fake_watch import FakeSource
        from gpuscope.collectors.recorder import Recorder
        source = FakeSource(gpus=2, processes=10)
        rec = Recorder({str(out)!r}, batch_samples=5)
        n = 0
        while True:
            rec.add(source.poll()); n += 1
            if n == 23:
                print("ready", flush=True)
            time.sleep(0.001)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    back = recording.read(out)
    assert back.samples >= 20 and back.samples % 5 == 0  # whole batches only
    assert back.snapshot(back.samples - 1).host.hostname


def test_cut_mid_batch_keeps_the_batches_before(tmp_path: Path) -> None:
    path = tmp_path / "r.gsrec"
    with Recorder(path, batch_samples=4) as rec:
        for s in snapshots(12, processes=8):
            rec.add(s)
    data = path.read_bytes()
    sizes = []
    for cut in (len(data) - 9, len(data) * 2 // 3, len(data) // 2):
        (tmp_path / "cut.gsrec").write_bytes(data[:cut])
        back = recording.read(tmp_path / "cut.gsrec")
        assert back.samples % 4 == 0 and back.samples < 12 or back.samples == 12
        assert back.samples == 12 or any(f.kind == "cut" for f in back.findings) or not back.complete
        sizes.append(back.samples)
    assert sizes[0] >= sizes[1] >= sizes[2] and sizes[2] >= 4


@pytest.mark.parametrize("content", [b"", b"time,value\n1,2\n", b"\xff\xff\xff\xff" + b"\x00" * 40, os.urandom(300)], ids=["empty", "csv", "marker-only", "random"])
def test_foreign_files_give_one_finding(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.gsrec"
    path.write_bytes(content)
    back = recording.read(path)
    assert back.samples == 0 and back.findings and back.findings[0].severity == "error"


def test_another_arrow_stream_is_not_a_recording(tmp_path: Path) -> None:
    path = tmp_path / "other.arrow"
    table = pa.table({"a": [1, 2]})
    with pa.ipc.new_stream(str(path), table.schema) as writer:
        writer.write_table(table)
    back = recording.read(path)
    assert back.samples == 0 and "not a gpuscope recording" in back.findings[0].message


def test_newer_version_is_named(tmp_path: Path) -> None:
    path = tmp_path / "v99.gsrec"
    schema = recording_schema.SCHEMA.with_metadata({recording_schema.VERSION_KEY: b"99"})
    with pa.ipc.new_stream(str(path), schema):
        pass
    back = recording.read(path)
    assert back.version == 99 and "update gpuscope" in back.findings[0].message


def test_fifo_is_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    back = recording.read(fifo)
    assert back.samples == 0 and back.findings  # returned at all: a FIFO opened for reading would wait for a writer


def test_version_1_file_kept_in_the_tests_reads() -> None:
    """tests/data/recordings/v1.gsrec was written by schema version 1 (make it again only for a
    new version's file, never over this one): every later gpuscope must read it."""
    back = recording.read(DATA / "v1.gsrec")
    assert back.version == 1 and back.samples == 12 and back.complete
    first = back.snapshot(0)
    assert len(first.gpus) == 2 and first.gpus[0].simulated and len(first.processes) >= 6
    assert first.scope.kind == "job"


def test_version_2_file_kept_in_the_tests_reads() -> None:
    """tests/data/recordings/v2.gsrec: FakeSource(gpus=2), 12 samples in batches of 5, written
    by schema version 2 (the scope a struct). Never written again: every later gpuscope reads it."""
    back = recording.read(DATA / "v2.gsrec")
    assert back.version == 2 and back.samples == 12 and back.complete and back.findings == []
    first = back.snapshot(0)
    assert len(first.gpus) == 2 and first.gpus[0].simulated and len(first.processes) >= 6
    assert first.scope.kind == "job" and first.scope.job_id == "4242" and first.scope.pids and first.scope.gpus[0].uuid


def test_a_recording_written_now_has_a_struct_scope_column(tmp_path: Path) -> None:
    """The scope is a struct of JobScope's fields (the pid set a sorted list), as pyarrow alone reads it."""
    taken = snapshots(6, gpus=2, processes=8)
    with Recorder(tmp_path / "r.gsrec") as rec:
        for s in taken:
            rec.add(s)
    raw = pa.ipc.open_stream(str(tmp_path / "r.gsrec")).read_all()
    assert raw.schema.metadata[recording_schema.VERSION_KEY] == str(recording_schema.VERSION).encode() and recording_schema.VERSION == 4
    kind = raw.schema.field("scope").type
    assert pa.types.is_struct(kind) and [f.name for f in kind] == [f.name for f in dataclasses.fields(JobScope)]
    assert kind.field("pids").type == pa.list_(pa.int32()) and pa.types.is_struct(kind.field("gpus").type.value_type)
    row = raw.column("scope")[0].as_py()
    scope = taken[0].scope
    assert row["kind"] == scope.kind and row["pids"] == sorted(scope.pids) and row["memory_used"] == scope.memory_used
    assert row["gpus"] == [{"index": g.index, "uuid": g.uuid, "evidence": g.evidence} for g in scope.gpus]
    assert recording_schema.scope_from(row) == scope


def test_an_old_version_reads_the_same_scope() -> None:
    """The version 1 file's scope JSON text, parsed by json.loads, is the scope read back: as a
    struct in the table (the current layout) and as the snapshot's JobScope."""
    raw = pa.ipc.open_stream(str(DATA / "v1.gsrec")).read_all()
    assert raw.schema.field("scope").type == pa.string()
    back = recording.read(DATA / "v1.gsrec")
    assert back.table.schema.field("scope").type == recording_schema.SCOPE_TYPE
    for i, text in enumerate(raw.column("scope").to_pylist()):
        data = json.loads(text)
        struct = back.table.column("scope")[i].as_py()
        assert {k: v for k, v in struct.items() if v is not None} == {k: v for k, v in data.items() if v is not None}
        scope = back.snapshot(i).scope
        assert scope.pids == frozenset(data["pids"]) and scope.label == data["label"] and scope.memory_peak == data["memory_peak"]
        assert [g.uuid for g in scope.gpus] == [g["uuid"] for g in data["gpus"]] and list(scope.evidence) == data["evidence"]


@pytest.mark.parametrize("order", [sorted, lambda keys: list(reversed(list(keys)))], ids=["sorted keys", "reversed keys"])
def test_a_version_1_scope_in_any_key_order_reads_as_version_2(tmp_path: Path, order) -> None:
    taken = snapshots(8, gpus=2, processes=6)
    old = recording.read(hostile.scope_json_v1(tmp_path / "v1.gsrec", taken, order))
    assert old.version == 1 and old.findings == []
    assert [old.snapshot(i) for i in range(8)] == taken


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4000), cut=st.integers(min_value=0, max_value=6000))
def test_any_bytes_after_a_real_start_never_raise(tmp_path: Path, data: bytes, cut: int) -> None:
    real = (DATA / "v1.gsrec").read_bytes()
    path = tmp_path / "fuzz.gsrec"
    path.write_bytes(real[:cut] + data)
    back = recording.read(path)
    assert back.samples >= 0
    for i in range(min(back.samples, 2)):
        back.snapshot(i)


def test_without_processes_reads_the_rest(tmp_path: Path) -> None:
    taken = snapshots(8, gpus=2, processes=20)
    with Recorder(tmp_path / "r.gsrec", batch_samples=3) as rec:
        for s in taken:
            rec.add(s)
    light = recording.read(tmp_path / "r.gsrec", processes=False)
    assert light.samples == 8 and "processes" not in light.table.column_names
    first = light.snapshot(0)
    assert first.processes == () and first.gpus == taken[0].gpus and first.host == taken[0].host


def test_a_new_recording_is_readable_before_its_first_batch(tmp_path: Path) -> None:
    rec = Recorder(tmp_path / "r.gsrec")
    rec.add(snapshots(1, processes=3)[0])  # still in the open batch
    back = recording.read(tmp_path / "r.gsrec")  # as after a kill -9 now
    assert back.version == recording_schema.VERSION and back.samples == 0 and not any(f.severity == "error" for f in back.findings)
    rec.close()
    assert recording.read(tmp_path / "r.gsrec").samples == 1


def test_a_clock_set_back_is_said_and_the_report_span_stays_forward(tmp_path: Path) -> None:
    """Samples keep the wall-clock time they were taken at; a clock stepped back 1 h mid-way
    is named by the reader, and the report's span counts forward time only (4 s, not -3596 s)."""
    from gpuscope.metrics.job.report import report
    from gpuscope.parsers.recording.usage import usage_from_snapshots

    source = FakeSource(gpus=1, processes=3)
    snaps = [source.poll() for _ in range(5)]
    times = [1000.0, 1001.0, 1002.0 - 3600, 1003.0 - 3600, 1004.0 - 3600]
    snaps = [dataclasses.replace(s, host=dataclasses.replace(s.host, timestamp=t)) for s, t in zip(snaps, times)]
    path = tmp_path / "jump.gsrec"
    with Recorder(path) as recorder:
        for snap in snaps:
            recorder.add(snap)
    rec = recording.read(path)
    assert rec.samples == 5
    assert [f.kind for f in rec.findings] == ["clock-back"]
    assert "went back 3,599.0 s after sample 2 of 5" in rec.findings[0].message
    node = report([usage_from_snapshots([rec.snapshot(i) for i in range(5)])]).tables[0].records()[0]
    assert node["span_s"] == 3.0  # 1 + (the jump: 0) + 1 + 1


def test_an_empty_file_and_a_recording_cut_inside_its_schema_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty.gsrec").write_bytes(b"")
    assert recording.read(tmp_path / "empty.gsrec").findings[0].message == "an empty file, not a recording"
    whole = tmp_path / "whole.gsrec"
    with Recorder(whole) as rec:
        rec.add(FakeSource(gpus=1, processes=2).poll())
    (tmp_path / "cut.gsrec").write_bytes(whole.read_bytes()[:600])
    found = recording.read(tmp_path / "cut.gsrec").findings
    assert [f.kind for f in found] == ["cut"] and "before its first batch" in found[0].message


def test_version_3_file_kept_in_the_tests_reads() -> None:
    """tests/data/recordings/v3.gsrec: as v2.gsrec, written by schema version 3 (the scope with
    the job's time limit and error file). Never written again: every later gpuscope reads it."""
    back = recording.read(DATA / "v3.gsrec")
    assert back.version == 3 and back.samples == 12 and back.complete and back.findings == []
    scope = back.snapshot(0).scope
    assert scope.job_id == "4242" and scope.time_limit_s == 5400.0 and scope.stderr == "/scratch/run/slurm-4242.err"


def test_a_version_2_file_has_no_time_limit_or_error_file() -> None:
    """Fields a later version added are n/a in an older file, never made up."""
    scope = recording.read(DATA / "v2.gsrec").snapshot(0).scope
    assert scope.job_id == "4242" and scope.time_limit_s is None and scope.stderr is None


def test_the_kind_checks_the_readers_magic() -> None:
    """The kind refuses non-Arrow files before importing the reader: both name the same bytes."""
    from gpuscope.parsers.recording import kind, read

    assert kind.ARROW_STREAM == read.MAGIC
