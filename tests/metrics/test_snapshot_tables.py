"""`metrics.snapshot_tables`: what `gpuscope watch --once --format json|text|csv` prints."""

from __future__ import annotations

import dataclasses
import json
import math

from fake_watch import MARKUP_COMMAND, NO_GPU_REASON, FakeSource
from gpuscope.metrics import export
from gpuscope.metrics.samples import Verdict
from gpuscope.metrics.snapshot_tables import busy_cores, scope_processes, snapshot_dict, snapshot_tables


def test_tables_cover_scope_verdicts_gpus_host_and_processes() -> None:
    snap = FakeSource().poll()
    tables = snapshot_tables(snap)
    assert [t.title for t in tables] == ["Scope", "Verdicts", "GPUs", "Host", "Top 6 processes by CPU"]
    scope, verdicts, gpus, host, procs = tables
    items = dict(scope.rows)
    assert items["cpus allocated"] == "2" and items["cpu ids"] == "4,5" and items["memory limit"] == "500.0 MiB"
    assert items["gpus allocated"] == "0, 1, 2, 3"
    assert any(n.startswith("evidence: cpus from cgroup") for n in scope.notes)
    texts = [row[1] for row in verdicts.rows]
    assert verdicts.rows[0][0] == "problem" and "asked for 2 cores, using 1.0" in texts
    assert len(gpus.rows) == 8 and gpus.records()[3]["util_percent"] == 0.0
    assert "SIMULATED: these GPUs are not real" in gpus.notes
    assert dict(host.rows)["cores"] == "16"
    assert [r["pid"] for r in procs.records()][0] in {1001, 1002, 1003, 1004}
    assert MARKUP_COMMAND in [r["command"] for r in procs.records()]


def test_text_export_shows_markup_literally_and_csv_keeps_numbers() -> None:
    tables = snapshot_tables(FakeSource().poll())
    text = export.render(tables, "text", width=160)
    assert "[bold]big[/]" in text and "SIMULATED" in text and "\x1b" not in text
    csv = export.to_csv(tables[2])
    assert csv.splitlines()[0].startswith("index,name,util_percent,memory_used_bytes")


def test_no_gpu_and_node_scope() -> None:
    snap = FakeSource(backend="none", scope="node").poll()
    gpus = snapshot_tables(snap)[2]
    assert gpus.rows == () and gpus.notes == (f"No GPU view: {NO_GPU_REASON}",)
    assert scope_processes(snap) == snap.processes
    assert snapshot_dict(snap)["verdicts"] == []  # nothing to judge without a job


def test_snapshot_dict_is_json_safe() -> None:
    snap = FakeSource().poll()
    snap = dataclasses.replace(snap, gpus=(dataclasses.replace(snap.gpus[0], util_gpu=math.nan),) + snap.gpus[1:])
    data = snapshot_dict(snap)
    assert data["scope"]["pids"] == sorted(snap.scope.pids)  # frozenset -> sorted list
    assert data["gpus"][0]["util_gpu"] is None  # NaN -> null
    assert data["host"]["load_avg"] == list(snap.host.load_avg)
    assert data["gpu_status"] == {"backend": "simulated", "reason": "", "driver_version": None}
    assert data["verdicts"] and {"severity", "text"} <= set(data["verdicts"][0])
    json.dumps(data, allow_nan=False)  # strict JSON: no NaN, no sets, no tuples left
    own = dataclasses.replace(snap, verdicts=(Verdict("ok", "from the source"),))
    assert snapshot_dict(own)["verdicts"] == [{"severity": "ok", "text": "from the source"}]


def test_busy_cores() -> None:
    rows = FakeSource().poll().processes
    assert busy_cores(()) is None
    assert math.isclose(busy_cores(rows[:1]) or 0.0, 0.0)


def test_processes_carry_their_start_and_how_long_they_have_run() -> None:
    snap = FakeSource().poll()
    snap = dataclasses.replace(snap, host=dataclasses.replace(snap.host, uptime=10_000.0))
    data = json.loads(json.dumps(snapshot_dict(snap)))
    first, row = data["processes"][0], snap.processes[0]
    assert first["started"] == row.started and first["elapsed"] == 10_000.0 - row.started
    top = {t.title.split()[0]: t for t in snapshot_tables(snap)}["Top"]
    index = top.keys.index("cpu_time_s")  # TIME+ is CPU time, on screen and in the export
    assert all(r[index] == round(next(p.cpu_time for p in snap.processes if p.pid == r[0]), 2) for r in top.rows)
    no_uptime = snapshot_dict(FakeSource().poll())
    assert no_uptime["processes"][0]["elapsed"] == 0.0  # unknown uptime: 0, as before
