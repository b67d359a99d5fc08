"""The Prometheus exposition (collectors/prometheus/exposition.py): parsed back with
prometheus-client's own parsers and checked against the snapshot it came from."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from gpuscope.collectors.prometheus.exposition import (
    TEXTFILE_NAME,
    Reading,
    SnapshotCollector,
    Tracker,
    cpu_busy_seconds,
    registry_for,
    textfile_problem,
    write_textfile,
)
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import AllocatedGpu, GpuSample, GpuStatus, HostSample, JobScope, MemoryUse, ProcessRow, Snapshot

GIB = 1024**3


def host(name: str = "node1") -> HostSample:
    memory = MemoryUse(total=64 * GIB, available=40 * GIB, used=24 * GIB, cached=0, buffers=0, swap_total=0, swap_used=0)
    return HostSample(timestamp=1_700_000_000.0, hostname=name, cpu_percent=(50.0, 100.0), load_avg=(1.5, 1.0, 0.5), memory=memory, cpu_count=2)


def hopper(index: int = 0, **changes: object) -> GpuSample:
    fields: dict[str, object] = dict(index=index, uuid=f"GPU-{index}", name="NVIDIA H100", bus_id="0", timestamp=1.0, util_gpu=50.0, util_memory=20.0,
                                     memory_used=10 * GIB, memory_total=80 * GIB, temperature_c=61.0, power_w=350.5, power_limit_w=700.0,
                                     sm_clock_mhz=1980, memory_clock_mhz=2619, energy_mj=123_456_789, sm_active_pct=40.0, sm_occupancy_pct=25.0,
                                     tensor_active_pct=10.0, dram_bw_pct=30.0)
    fields.update(changes)
    return GpuSample(**fields)  # type: ignore[arg-type]


def snapshot(gpus: tuple[GpuSample, ...] = (), scope: JobScope | None = None, processes: tuple[ProcessRow, ...] = (), hostname: str = "node1",
             backend: str = "nvml") -> Snapshot:
    return Snapshot(host(hostname), processes, gpus, GpuStatus(backend), scope or JobScope(kind="node", label="node"))


def exposed(reading: Reading, per_process: bool = False, openmetrics: bool = False) -> dict[str, list[tuple[dict[str, str], float]]]:
    """sample name -> [(labels, value)], parsed back from the text a scrape returns."""
    collector = SnapshotCollector(per_process)
    collector.reading = reading
    registry = registry_for(collector)
    if openmetrics:
        families = parse_openmetrics(generate_openmetrics(registry).decode())
    else:
        families = text_string_to_metric_families(generate_latest(registry).decode())
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in families:
        for sample in family.samples:
            out.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return out


def one(series: dict[str, list[tuple[dict[str, str], float]]], metric: str, /, **labels: str) -> float:
    found = [v for lab, v in series.get(metric, []) if all(lab.get(k) == want for k, want in labels.items())]
    assert len(found) == 1, (metric, labels, series.get(metric))
    return found[0]


def test_gpu_series_in_base_units_and_gpm_absent_where_missing() -> None:
    old = hopper(1, uuid="GPU-old", name="Tesla V100", sm_active_pct=None, sm_occupancy_pct=None, tensor_active_pct=None, dram_bw_pct=None)
    series = exposed(Reading(snapshot((hopper(0), old))))
    g = {"gpu": "0", "uuid": "GPU-0", "name": "NVIDIA H100", "node": "node1"}
    assert one(series, "gpuscope_gpu_utilization_ratio", **g) == pytest.approx(0.5)
    assert one(series, "gpuscope_gpu_memory_used_bytes", **g) == 10 * GIB
    assert one(series, "gpuscope_gpu_memory_total_bytes", **g) == 80 * GIB
    assert one(series, "gpuscope_gpu_power_watts", **g) == 350.5
    assert one(series, "gpuscope_gpu_energy_joules_total", **g) == pytest.approx(123_456.789)  # mJ -> J
    assert one(series, "gpuscope_gpu_temperature_celsius", **g) == 61.0
    assert one(series, "gpuscope_gpu_sm_clock_hertz", **g) == 1980e6
    assert one(series, "gpuscope_gpu_memory_clock_hertz", **g) == 2619e6
    assert one(series, "gpuscope_gpu_sm_active_ratio", **g) == pytest.approx(0.4)
    assert one(series, "gpuscope_gpu_tensor_active_ratio", **g) == pytest.approx(0.1)
    assert one(series, "gpuscope_gpu_dram_active_ratio", **g) == pytest.approx(0.3)
    for name in ("gpuscope_gpu_sm_active_ratio", "gpuscope_gpu_sm_occupancy_ratio", "gpuscope_gpu_tensor_active_ratio", "gpuscope_gpu_dram_active_ratio"):
        assert [lab["gpu"] for lab, _ in series[name]] == ["0"], name  # the V100 has no GPM: no series, not 0
    assert one(series, "gpuscope_gpu_utilization_ratio", gpu="1") == pytest.approx(0.5)
    assert one(series, "gpuscope_simulated", node="node1") == 0


def test_unreadable_gpu_fields_are_absent_never_zero() -> None:
    lost = GpuSample(index=3, uuid="GPU-3", name="NVIDIA A100", bus_id="0", timestamp=1.0, error="GPU is lost")
    series = exposed(Reading(snapshot((lost,))))
    assert not [name for name in series if name.startswith("gpuscope_gpu_")]


def test_node_series_and_cpu_busy_counter_from_proc_stat(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text("cpu  100 20 30 1000 50 5 5 0 7 0\ncpu0 50 10 15 500 25 2 3 0 0 0\n")
    busy = cpu_busy_seconds(str(tmp_path))
    import os

    assert busy == pytest.approx((100 + 20 + 30 + 5 + 5) / os.sysconf("SC_CLK_TCK"))  # idle, iowait out; guest is inside user
    series = exposed(Tracker(str(tmp_path)).update(snapshot()))
    assert one(series, "gpuscope_node_cpu_busy_seconds_total", node="node1") == pytest.approx(busy)
    assert one(series, "gpuscope_node_memory_total_bytes") == 64 * GIB
    assert one(series, "gpuscope_node_memory_used_bytes") == 24 * GIB
    assert one(series, "gpuscope_node_load1") == 1.5
    assert one(series, "gpuscope_node_cpus") == 2
    (tmp_path / "stat").write_text("garbage\n")
    assert "gpuscope_node_cpu_busy_seconds_total" not in exposed(Tracker(str(tmp_path)).update(snapshot()))


def job_scope(**changes: object) -> JobScope:
    fields: dict[str, object] = dict(kind="job", label="job 42", pids=frozenset({10, 11}), job_id="42", cpus_allocated=4, memory_limit=8 * GIB,
                                     memory_peak=3 * GIB, gpus=(AllocatedGpu(0, None, "SLURM_JOB_GPUS"),))
    fields.update(changes)
    return JobScope(**fields)  # type: ignore[arg-type]


def row(pid: int, cpu: float | None) -> ProcessRow:
    return ProcessRow(pid, 1, "alice", 1000, "R", cpu, 100 * 1024**2, 1, 0.0, "python train.py", cpu_time=12.5)


def test_job_series_and_gpu_energy_since_first_seen() -> None:
    tracker = Tracker()
    scope = job_scope()
    rows = (row(10, 150.0), row(11, 50.0), row(99, 100.0))  # pid 99 is not the job's
    first = exposed(tracker.update(snapshot((hopper(0, energy_mj=1_000_000), hopper(1, energy_mj=5)), scope, rows)))
    assert one(first, "gpuscope_job_cpus_allocated", jobid="42", node="node1") == 4
    assert one(first, "gpuscope_job_cpus_busy", jobid="42") == pytest.approx(2.0)
    assert one(first, "gpuscope_job_memory_requested_bytes", jobid="42") == 8 * GIB
    assert one(first, "gpuscope_job_memory_peak_bytes", jobid="42") == 3 * GIB
    assert one(first, "gpuscope_job_gpus_allocated", jobid="42") == 1
    assert one(first, "gpuscope_job_gpu_energy_joules_total", jobid="42") == 0
    assert set(first["gpuscope_job_cpus_busy"][0][0]) == {"node", "jobid"}  # few labels: cardinality
    second = exposed(tracker.update(snapshot((hopper(0, energy_mj=1_250_000), hopper(1, energy_mj=999_999)), scope, rows)))
    assert one(second, "gpuscope_job_gpu_energy_joules_total", jobid="42") == pytest.approx(250.0)  # GPU 1 is not the job's
    reloaded = exposed(tracker.update(snapshot((hopper(0, energy_mj=40_000),), scope, rows)))  # the driver reloaded: counts from 0 again
    assert one(reloaded, "gpuscope_job_gpu_energy_joules_total", jobid="42") == pytest.approx(290.0)
    ended = exposed(tracker.update(snapshot((hopper(0),))))
    assert not [name for name in ended if name.startswith("gpuscope_job_")]


def test_job_without_readings_has_no_made_up_series() -> None:
    scope = job_scope(cpus_allocated=None, memory_limit=None, memory_peak=None, gpus=(), problems=("scontrol not found",))
    series = exposed(Tracker().update(snapshot((hopper(0, energy_mj=None),), scope, (row(10, None),))))
    assert not [name for name in series if name.startswith("gpuscope_job_")]


def test_hostile_label_values_are_escaped_and_cleaned() -> None:
    name = 'evil"GPU\\ \x1b]0;owned\x07\nnext'
    series = exposed(Reading(snapshot((hopper(0, name=name, uuid='GPU-"x'),), hostname="n\x1b[31mode")), openmetrics=True)
    labels = series["gpuscope_gpu_power_watts"][0][0]
    assert labels["name"] == clean(name) == 'evil"GPU\\  next'
    assert labels["uuid"] == 'GPU-"x'
    assert labels["node"] == "node"
    assert exposed(Reading(snapshot((hopper(0, name=name),))))["gpuscope_gpu_power_watts"][0][0]["name"] == clean(name)


def test_per_process_only_when_asked() -> None:
    reading = Reading(snapshot(processes=(row(10, 50.0),)))
    assert not [n for n in exposed(reading) if n.startswith("gpuscope_process_")]
    series = exposed(reading, per_process=True)
    assert one(series, "gpuscope_process_cpu_seconds_total", pid="10", command="python", user="alice") == 12.5
    assert one(series, "gpuscope_process_cpu_ratio", pid="10") == pytest.approx(0.5)


def test_simulated_gpus_are_labelled() -> None:
    assert one(exposed(Reading(snapshot((hopper(0, simulated=True),), backend="simulated"))), "gpuscope_simulated") == 1


def test_before_the_first_sample_a_scrape_is_empty() -> None:
    assert generate_latest(registry_for(SnapshotCollector())) == b""


FIELDS = ("util_gpu", "memory_used", "power_w", "energy_mj", "temperature_c", "sm_clock_mhz", "sm_active_pct", "dram_bw_pct")
NAMES = {"util_gpu": ("gpuscope_gpu_utilization_ratio", 0.01), "memory_used": ("gpuscope_gpu_memory_used_bytes", 1),
         "power_w": ("gpuscope_gpu_power_watts", 1), "energy_mj": ("gpuscope_gpu_energy_joules_total", 0.001),
         "temperature_c": ("gpuscope_gpu_temperature_celsius", 1), "sm_clock_mhz": ("gpuscope_gpu_sm_clock_hertz", 1e6),
         "sm_active_pct": ("gpuscope_gpu_sm_active_ratio", 0.01), "dram_bw_pct": ("gpuscope_gpu_dram_active_ratio", 0.01)}
values = st.one_of(st.none(), st.just(float("nan")), st.just(float("inf")), st.floats(0, 1e12, allow_nan=False), st.integers(0, 2**53))


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({f: values for f in FIELDS}))
def test_unknown_values_never_become_zero(fields: dict[str, object]) -> None:
    series = exposed(Reading(snapshot((hopper(0, **fields),))))
    for field, value in fields.items():
        name, scale = NAMES[field]
        if value is None or not math.isfinite(float(value)):  # type: ignore[arg-type]
            assert name not in series, (field, value, series.get(name))
        else:
            assert one(series, name) == pytest.approx(float(value) * scale, rel=1e-9)  # type: ignore[arg-type]


def test_textfile_is_replaced_whole_while_a_reader_reads(tmp_path: Path) -> None:
    small = b"# TYPE gpuscope_simulated gauge\ngpuscope_simulated 1.0\n"
    big = small + b"".join(b"gpuscope_node_load1{node=\"n%d\"} 1.0\n" % i for i in range(5000))
    write_textfile(str(tmp_path), small)
    seen: set[bytes] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add((tmp_path / TEXTFILE_NAME).read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(60):
            write_textfile(str(tmp_path), big if i % 2 else small)
    finally:
        done.set()
        reader.join()
    assert seen <= {small, big}  # never a half file
    assert sorted(p.name for p in tmp_path.iterdir()) == [TEXTFILE_NAME]  # no temporary left behind
    assert (tmp_path / TEXTFILE_NAME).stat().st_mode & 0o644 == 0o644


def test_textfile_folder_problems(tmp_path: Path) -> None:
    assert "no such folder" in (textfile_problem(str(tmp_path / "missing")) or "")
    (tmp_path / "file").write_text("x")
    assert "no such folder" in (textfile_problem(str(tmp_path / "file")) or "")
    assert "cannot write there" in (textfile_problem("/proc") or "")
    assert textfile_problem(str(tmp_path)) is None
