"""Recording version 4: each GPU's clock maxima, energy counter and GPM activity (with their
notes), and the node's RAPL counters, written and read back exactly (None stays None); every
older version reads with them n/a; the kept version 4 file; RAPL rows that gpuscope did not
write; the JSON lines `collect --stream` sends."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energy_readings import FIRST_POLL, NO_GPM, with_energy
from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder
from gpuscope.metrics.energy import RaplSample, RaplZone, rapl_energy
from gpuscope.metrics.samples import GpuSample
from gpuscope.metrics.snapshot_tables import snapshot_dict
from gpuscope.parsers.recording import read as recording
from gpuscope.parsers.recording import schema as recording_schema

DATA = Path(__file__).parent.parent / "data" / "recordings"
NEW_GPU_FIELDS = ("sm_clock_max_mhz", "memory_clock_max_mhz", "energy_mj", "energy_note", "sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
                  "dram_bw_pct", "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s", "activity_note")


def write(path: Path, snapshots, batch: int = 60) -> Path:
    with Recorder(path, batch_samples=batch) as rec:
        for s in snapshots:
            rec.add(s)
    return path


def test_the_gpu_columns_are_gpu_samples_fields_in_order() -> None:
    assert [name for name, _ in recording_schema.GPU] == [f.name for f in dataclasses.fields(GpuSample)]
    assert tuple(name for name, _ in recording_schema.GPU[len(recording_schema.GPU_V3):]) == NEW_GPU_FIELDS
    kinds = dict(recording_schema.GPU)
    assert kinds["energy_mj"] == pa.int64() and kinds["sm_clock_max_mhz"] == pa.int32() and kinds["energy_note"] == pa.string()
    assert all(kinds[n] == pa.float64() for n in NEW_GPU_FIELDS if n.endswith(("_pct", "_per_s")))


MAYBE_PCT = st.none() | st.floats(min_value=0, max_value=100, allow_nan=False)
MAYBE_RATE = st.none() | st.floats(min_value=0, max_value=1e12, allow_nan=False)
MAYBE_CLOCK = st.none() | st.integers(min_value=0, max_value=2**31 - 1)
NOTE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=30)
GPU_ENERGY = st.fixed_dictionaries({
    "sm_clock_max_mhz": MAYBE_CLOCK, "memory_clock_max_mhz": MAYBE_CLOCK, "energy_mj": st.none() | st.integers(min_value=0, max_value=2**63 - 1),
    "energy_note": NOTE, "sm_active_pct": MAYBE_PCT, "sm_occupancy_pct": MAYBE_PCT, "tensor_active_pct": MAYBE_PCT, "dram_bw_pct": MAYBE_PCT,
    "pcie_tx_bytes_per_s": MAYBE_RATE, "pcie_rx_bytes_per_s": MAYBE_RATE, "nvlink_tx_bytes_per_s": MAYBE_RATE, "nvlink_rx_bytes_per_s": MAYBE_RATE,
    "activity_note": NOTE,
})
ZONE = st.builds(RaplZone, st.sampled_from(["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:1"]), st.sampled_from(["package-0", "dram", "core"]),
                 st.none() | st.integers(min_value=0, max_value=2**63 - 1), st.none() | st.integers(min_value=0, max_value=2**63 - 1))
RAPL = st.none() | st.builds(RaplSample, st.floats(min_value=0, max_value=2e9, allow_nan=False), st.lists(ZONE, max_size=4).map(tuple), NOTE)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.tuples(GPU_ENERGY, GPU_ENERGY, RAPL), min_size=1, max_size=6))
def test_every_new_field_round_trips(tmp_path: Path, values) -> None:
    """Any values of the new fields, None included, in any mix over samples and GPUs, read back
    as written (a None is never read as 0, a '' note stays '')."""
    source = FakeSource(gpus=2, processes=3)
    taken = []
    for gpu0, gpu1, rapl in values:
        snap = source.poll()
        gpus = (dataclasses.replace(snap.gpus[0], **gpu0), dataclasses.replace(snap.gpus[1], **gpu1))
        taken.append(dataclasses.replace(snap, gpus=gpus, rapl=rapl))
    path = tmp_path / "r.gsrec"
    path.unlink(missing_ok=True)
    back = recording.read(write(path, taken, batch=4))
    assert back.findings == [] and [back.snapshot(i) for i in range(len(taken))] == taken


def test_a_recording_of_energy_readings_round_trips_and_rapl_is_a_node_figure(tmp_path: Path) -> None:
    source = FakeSource(gpus=2, processes=6, mig=True)
    taken = with_energy([source.poll() for _ in range(8)])
    taken[3] = dataclasses.replace(taken[3], rapl=None)  # not read at this sample
    back = recording.read(write(tmp_path / "r.gsrec", taken, batch=3))
    assert [back.snapshot(i) for i in range(8)] == taken
    column = back.table.column("node_rapl")
    assert column.null_count == 1 and not column[3].is_valid
    assert all(back.snapshot(i).rapl.scope == "node" for i in (0, 7))
    cpu = rapl_energy([s.rapl for s in (back.snapshot(i) for i in range(8)) if s.rapl is not None])
    assert cpu.scope == "node" and cpu.package_j is not None and cpu.dram_j == pytest.approx(7 * 15.0)


def test_version_4_file_kept_in_the_tests_reads() -> None:
    """tests/data/recordings/v4.gsrec (tests/make_recording_v4.py): as v3.gsrec with the GPUs'
    energy and activity and the node's RAPL. Never written again: every later gpuscope reads it."""
    back = recording.read(DATA / "v4.gsrec")
    assert back.version == 4 and back.samples == 12 and back.complete and back.findings == []
    first, later = back.snapshot(0), back.snapshot(5)
    assert first.gpus[0].activity_note == FIRST_POLL and first.gpus[0].sm_active_pct is None
    assert later.gpus[0].sm_active_pct is not None and later.gpus[0].tensor_active_pct is not None and later.gpus[0].activity_note == ""
    assert later.gpus[1].activity_note == NO_GPM and later.gpus[1].sm_active_pct is None  # n/a with why, never 0
    assert later.gpus[0].energy_mj > first.gpus[0].energy_mj and later.gpus[0].sm_clock_max_mhz == 1980
    assert [z.name for z in later.rapl.zones] == ["package-0", "dram", "package-1"] and later.rapl.zones[0].max_energy_range_uj
    assert later.scope.job_id == "4242" and later.gpus[0].simulated


@pytest.mark.parametrize("version", [1, 2, 3])
def test_older_versions_read_with_the_new_fields_na(version: int) -> None:
    back = recording.read(DATA / f"v{version}.gsrec")
    assert back.version == version and back.samples == 12 and back.findings == []
    assert back.table.schema.equals(recording_schema.SCHEMA)  # one layout, whatever the version
    for i in (0, 11):
        snap = back.snapshot(i)
        assert snap.rapl is None and snap.gpus
        for gpu in snap.gpus:
            assert gpu.energy_note == "" and gpu.activity_note == ""
            assert all(getattr(gpu, n) is None for n in NEW_GPU_FIELDS if not n.endswith("_note"))
    assert recording.read(DATA / f"v{version}.gsrec", processes=False).snapshot(3).gpus[0].energy_mj is None


def test_rapl_rows_gpuscope_did_not_write_read_as_what_they_hold(tmp_path: Path) -> None:
    """A RAPL row without its time reads as not read; a zone without its id or name is left out."""
    snaps = with_energy([FakeSource(gpus=1, processes=2).poll() for _ in range(2)])
    batch = recording_schema.to_batch(snaps)
    rapl = batch.column("node_rapl")
    zones = rapl.field("zones")
    names = pa.array([None, *zones.values.field("name").to_pylist()[1:]], pa.string())
    zones = pa.ListArray.from_arrays(zones.offsets, pa.StructArray.from_arrays(
        [names if f.name == "name" else zones.values.field(f.name) for f in zones.type.value_type], fields=list(zones.type.value_type)))
    times = pa.array([None, rapl.field("timestamp")[1].as_py()], pa.float64())
    crafted = pa.StructArray.from_arrays([times, zones, rapl.field("reason")], fields=list(rapl.type))
    batch = batch.set_column(batch.schema.get_field_index("node_rapl"), "node_rapl", crafted)
    path = tmp_path / "crafted.gsrec"
    with pa.ipc.new_stream(str(path), recording_schema.SCHEMA) as writer:
        writer.write_batch(batch)
    back = recording.read(path)
    assert back.findings == [] and back.snapshot(0).rapl is None
    assert back.snapshot(1).rapl.zones == snaps[1].rapl.zones


def test_collect_stream_json_carries_the_new_fields() -> None:
    """`collect --stream` sends `snapshot_dict`; the multi-node reader gets the same snapshot back."""
    snap = with_energy([FakeSource(gpus=2, processes=4).poll() for _ in range(3)])[2]
    back = recording_schema.from_json_dict(snapshot_dict(snap))
    assert back.gpus == snap.gpus and back.rapl == snap.rapl and back.rapl.zones
    data = snapshot_dict(snap)
    data["rapl"]["zones"][0]["energy_uj"] = "12"
    with pytest.raises(ValueError, match="not a gpuscope snapshot"):
        recording_schema.from_json_dict(data)
    data["rapl"] = None
    assert recording_schema.from_json_dict(data).rapl is None
