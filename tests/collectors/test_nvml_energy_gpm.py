"""NvmlBackend's energy counter, clock maxima and GPM activity against the fake pynvml raising the
real NVMLError subclasses: no GPM, GPM on some GPUs only, a driver reload resetting the counter,
NOT_SUPPORTED energy, MIG (energy and activity of the whole GPU), buffers freed."""

from __future__ import annotations

import pynvml
import pytest

import gpuscope.collectors.gpm as gpm
from fake_pynvml import HOPPER_GPM, FakeGpu, FakePynvml, gpus, install
from gpuscope.collectors.gpm import FIELDS, FIRST_POLL, NO_GPM_ON_GPU, WHOLE_GPU, GpmReader
from gpuscope.collectors.nvml import WHOLE_GPU_ENERGY, NvmlBackend
from gpuscope.metrics.energy import gpu_energy
from gpuscope.metrics.samples import GpuSample, MigSample

MIB = 1024 * 1024


def _h100(index: int = 0, **overrides: object) -> FakeGpu:
    return FakeGpu(index=index, name="NVIDIA H100 80GB HBM3", gpm=dict(HOPPER_GPM), max_sm_clock=1980, max_mem_clock=2619, **overrides)  # type: ignore[arg-type]


@pytest.fixture
def backend_of(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a factory
    """A factory: NvmlBackend over a fake; GPM's 100 ms spacing is waived (tests do not sleep)."""
    monkeypatch.setattr(gpm, "MIN_INTERVAL_S", 0.0)
    made: list[NvmlBackend] = []

    def make(fake: FakePynvml) -> NvmlBackend:
        install(monkeypatch, fake)
        made.append(NvmlBackend())
        return made[-1]

    yield make
    for backend in made:
        backend.close()


# -- energy counter -----------------------------------------------------------------------------

def test_energy_counter_and_clock_maxima_read(backend_of) -> None:  # noqa: ANN001
    (s,) = backend_of(FakePynvml([_h100()])).sample()
    assert s.energy_mj == 4_200_000_000 and s.energy_note == ""
    assert (s.sm_clock_max_mhz, s.memory_clock_max_mhz) == (1980, 2619) and s.sm_clock_mhz == 1410


@pytest.mark.parametrize(("code", "said", "asked"), [
    pytest.param(pynvml.NVML_ERROR_NOT_SUPPORTED, "no energy counter on this GPU", 1, id="not-supported-asked-once"),
    pytest.param(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND, "driver has no energy counter", 1, id="old-driver-asked-once"),
    pytest.param(pynvml.NVML_ERROR_NO_PERMISSION, "no permission", 3, id="no-permission-asked-again"),
    pytest.param(pynvml.NVML_ERROR_UNKNOWN, "energy counter unreadable: Unknown Error", 3, id="unknown"),
])
def test_energy_unreadable_is_none_with_the_reason(backend_of, code: int, said: str, asked: int) -> None:  # noqa: ANN001
    fake = FakePynvml(gpus(2), errors={("nvmlDeviceGetTotalEnergyConsumption", 0): code})
    backend = backend_of(fake)
    for _ in range(3):
        first, second = backend.sample()
    assert first.energy_mj is None and said in first.energy_note and first.error is None and first.power_w == 312.5
    assert second.energy_mj == 4_200_000_000 and second.energy_note == ""  # the other GPU is unaffected
    assert [args[0].index for name, args in fake.log if name == "nvmlDeviceGetTotalEnergyConsumption"].count(0) == asked


def test_energy_binding_absent_said(backend_of) -> None:  # noqa: ANN001
    (s,) = backend_of(FakePynvml(gpus(1), absent={"nvmlDeviceGetTotalEnergyConsumption"})).sample()
    assert s.energy_mj is None and "nvidia-ml-py cannot read the energy counter" in s.energy_note


def test_counter_reset_by_a_driver_reload_is_summed_and_said(backend_of) -> None:  # noqa: ANN001
    gpu = FakeGpu(energy_mj=10_000_000)
    backend = backend_of(FakePynvml([gpu]))
    readings = []
    for counter in (10_000_000, 10_300_000, 10_600_000, 250_000, 550_000):  # reloaded between the 3rd and 4th
        gpu.energy_mj = counter
        readings.append(backend.sample()[0])
    times = [0.0, 1.0, 2.0, 3.0, 4.0]  # the samples' own stamps are wall time: use a steady 1 s here
    figure = gpu_energy(times, [s.energy_mj for s in readings], [s.power_w for s in readings])
    assert figure.counter_j == pytest.approx(600 + 250 + 300)  # 600 J before, 250 J since the reload, 300 J after
    assert figure.source == "energy counter" and any("reset 1 time" in n and "lower bound" in n for n in figure.notes)


def test_not_supported_energy_falls_back_to_integrated_power_labelled(backend_of) -> None:  # noqa: ANN001
    backend = backend_of(FakePynvml(gpus(1), errors={("nvmlDeviceGetTotalEnergyConsumption", None): pynvml.NVML_ERROR_NOT_SUPPORTED}))
    readings = [backend.sample()[0] for _ in range(4)]
    figure = gpu_energy([0.0, 1.0, 2.0, 3.0], [s.energy_mj for s in readings], [s.power_w for s in readings], note=readings[0].energy_note)
    assert figure.counter_j is None and figure.source == "integrated power" and figure.joules == pytest.approx(3 * 312.5)
    assert figure.notes[0].startswith("no energy counter on this GPU")


def test_mig_energy_is_the_whole_gpu_and_said(backend_of) -> None:  # noqa: ANN001
    mig = _h100(mig_mode=pynvml.NVML_DEVICE_MIG_ENABLE)
    backend = backend_of(FakePynvml([mig, _h100(1)]))
    backend.sample()
    on, off = backend.sample()
    assert on.energy_mj == 4_200_000_000 and on.energy_note == WHOLE_GPU_ENERGY and "MIG" in WHOLE_GPU_ENERGY
    assert off.energy_note == ""
    assert on.sm_active_pct == 12.5 and WHOLE_GPU in on.activity_note and off.activity_note == ""
    assert "energy_mj" in GpuSample.__dataclass_fields__ and "energy_mj" not in MigSample.__dataclass_fields__


def test_max_clock_unsupported_is_none_and_read_once(backend_of) -> None:  # noqa: ANN001
    fake = FakePynvml(gpus(2), errors={("nvmlDeviceGetMaxClockInfo", 1): pynvml.NVML_ERROR_NOT_SUPPORTED})
    backend = backend_of(fake)
    for _ in range(3):
        first, second = backend.sample()
    assert (first.sm_clock_max_mhz, first.memory_clock_max_mhz) == (1410, 1593)
    assert (second.sm_clock_max_mhz, second.memory_clock_max_mhz) == (None, None)
    assert fake.calls["nvmlDeviceGetMaxClockInfo"] == 4  # two clocks per GPU, once per backend


# -- GPM activity -------------------------------------------------------------------------------

def test_no_gpm_gpu_gives_none_with_the_reason_never_zero(backend_of) -> None:  # noqa: ANN001
    fake = FakePynvml(gpus(1))  # an A100: no GPM
    backend = backend_of(fake)
    for _ in range(3):
        (s,) = backend.sample()
    assert all(getattr(s, f) is None for f in FIELDS) and s.activity_note == NO_GPM_ON_GPU
    assert fake.calls["nvmlGpmQueryDeviceSupport"] == 1 and fake.calls["nvmlGpmSampleAlloc"] == 0  # asked once, nothing allocated


def test_gpm_on_some_gpus_only(backend_of) -> None:  # noqa: ANN001
    fake = FakePynvml([_h100(0), FakeGpu(index=1), _h100(2)])
    backend = backend_of(fake)
    first = backend.sample()
    assert [s.activity_note for s in first] == [FIRST_POLL, NO_GPM_ON_GPU, FIRST_POLL]
    assert all(getattr(s, f) is None for s in first for f in FIELDS)  # one reading is no activity yet
    h0, a100, h2 = backend.sample()
    assert (h0.sm_active_pct, h0.sm_occupancy_pct, h0.tensor_active_pct, h0.dram_bw_pct) == (12.5, 8.0, 0.0, 91.0)
    assert h0.tensor_active_pct == 0.0  # a real zero from GPM stays 0: only "cannot tell" is None
    assert (h0.pcie_tx_bytes_per_s, h0.pcie_rx_bytes_per_s) == (100 * MIB, 2.5 * MIB)  # GPM rates are MiB/s
    assert (h0.nvlink_tx_bytes_per_s, h0.nvlink_rx_bytes_per_s) == (4096 * MIB, 1024 * MIB)
    assert h0.activity_note == "" and h2.sm_active_pct == 12.5
    assert a100.sm_active_pct is None and a100.activity_note == NO_GPM_ON_GPU


def test_gpm_values_follow_the_gpu_between_polls(backend_of) -> None:  # noqa: ANN001
    gpu = _h100()
    backend = backend_of(FakePynvml([gpu]))
    backend.sample()
    assert backend.sample()[0].sm_active_pct == 12.5
    gpu.gpm["NVML_GPM_METRIC_SM_UTIL"] = 97.0  # type: ignore[index]
    assert backend.sample()[0].sm_active_pct == 97.0


def test_board_without_nvlink_gives_none_for_it_only(backend_of) -> None:  # noqa: ANN001
    pcie = {k: v for k, v in HOPPER_GPM.items() if "NVLINK" not in k}
    backend = backend_of(FakePynvml([FakeGpu(name="NVIDIA H100 PCIe", gpm=pcie)]))
    backend.sample()
    (s,) = backend.sample()
    assert s.sm_active_pct == 12.5 and s.nvlink_tx_bytes_per_s is None and s.nvlink_rx_bytes_per_s is None
    assert s.activity_note == "not on this board: nvlink_tx_bytes_per_s, nvlink_rx_bytes_per_s"


@pytest.mark.parametrize(("setup", "said"), [
    pytest.param({"not_found": {"nvmlGpmQueryDeviceSupport"}}, "driver has no GPM", id="driver-before-R520"),
    pytest.param({"absent": {"nvmlGpmQueryDeviceSupport"}}, "nvidia-ml-py has no GPM", id="old-binding"),
    pytest.param({"errors": {("nvmlGpmQueryDeviceSupport", None): pynvml.NVML_ERROR_NOT_SUPPORTED}}, NO_GPM_ON_GPU, id="not-supported"),
    pytest.param({"errors": {("nvmlGpmQueryDeviceSupport", None): pynvml.NVML_ERROR_NO_PERMISSION}}, "GPM support unknown", id="no-permission"),
])
def test_gpm_unavailable_reasons(backend_of, setup: dict, said: str) -> None:  # noqa: ANN001
    backend = backend_of(FakePynvml([_h100()], **setup))
    backend.sample()
    (s,) = backend.sample()
    assert s.error is None and s.sm_active_pct is None and said in s.activity_note


def test_gpm_sample_failure_is_said_and_the_next_polls_recover(backend_of) -> None:  # noqa: ANN001
    fake = FakePynvml([_h100()])
    backend = backend_of(fake)
    backend.sample()
    fake.errors[("nvmlGpmSampleGet", None)] = pynvml.NVML_ERROR_UNKNOWN
    (s,) = backend.sample()
    assert s.error is None and s.sm_active_pct is None and "GPM sample failed" in s.activity_note
    assert not fake.gpm_buffers  # the failed GPU's buffers were freed
    del fake.errors[("nvmlGpmSampleGet", None)]
    assert backend.sample()[0].activity_note == FIRST_POLL and backend.sample()[0].sm_active_pct == 12.5


def test_gpm_metrics_failure_is_said(backend_of) -> None:  # noqa: ANN001
    backend = backend_of(FakePynvml([_h100()], errors={("nvmlGpmMetricsGet", None): pynvml.NVML_ERROR_UNKNOWN}))
    backend.sample()
    (s,) = backend.sample()
    assert s.sm_active_pct is None and "GPM metrics failed" in s.activity_note


def test_gpm_buffers_reused_and_freed_at_close(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpm, "MIN_INTERVAL_S", 0.0)
    fake = install(monkeypatch, FakePynvml([_h100(0), _h100(1), FakeGpu(index=2)]))
    backend = NvmlBackend()
    for _ in range(5):
        backend.sample()
    assert fake.calls["nvmlGpmSampleAlloc"] == 4 and len(fake.gpm_buffers) == 4  # two per GPM GPU, reused
    backend.close()
    assert fake.gpm_buffers == {} and fake.calls["nvmlGpmSampleFree"] == 4
    assert fake.log.index(("nvmlShutdown", (None,))) > max(i for i, (name, _) in enumerate(fake.log) if name == "nvmlGpmSampleFree")


def test_lost_gpu_frees_its_gpm_buffers_and_recovers(backend_of) -> None:  # noqa: ANN001
    devices = [_h100(0), _h100(1)]
    fake = FakePynvml(devices)
    backend = backend_of(fake)
    backend.sample()
    backend.sample()
    devices[1].lost = True
    lost = backend.sample()
    assert "GPU is lost" in lost[1].error and lost[0].sm_active_pct == 12.5
    assert len(fake.gpm_buffers) == 2  # GPU 1's two were freed
    devices[1].lost = False
    assert backend.sample()[1].activity_note == FIRST_POLL and backend.sample()[1].sm_active_pct == 12.5


def test_polls_closer_than_nvml_allows_give_no_activity(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePynvml([_h100()])
    fake.nvmlInit()
    reader = GpmReader(fake)
    handle = fake.nvmlDeviceGetHandleByIndex(0)
    assert reader.read(0, handle, 100.0) == {"activity_note": FIRST_POLL}
    assert "less than 0.1 s apart" in reader.read(0, handle, 100.05)["activity_note"]
    values = reader.read(0, handle, 101.0)
    assert values["sm_active_pct"] == 12.5 and values["activity_note"] == ""  # against the reading at 100.0
    reader.close()
    assert fake.gpm_buffers == {}


def test_fake_gpm_raises_genuine_subclasses_and_checks_sample_order() -> None:
    fake = FakePynvml([FakeGpu(), _h100(1)])
    fake.nvmlInit()
    a, b = fake.nvmlGpmSampleAlloc(), fake.nvmlGpmSampleAlloc()
    with pytest.raises(pynvml.NVMLError_NotSupported):
        fake.nvmlGpmSampleGet(fake.nvmlDeviceGetHandleByIndex(0), a)
    h = fake.nvmlDeviceGetHandleByIndex(1)
    fake.nvmlGpmSampleGet(h, a)
    fake.nvmlGpmSampleGet(h, b)
    request = pynvml.c_nvmlGpmMetricsGet_t()
    request.version, request.numMetrics, request.sample1, request.sample2 = pynvml.NVML_GPM_METRICS_GET_VERSION, 1, b, a
    request.metrics[0].metricId = pynvml.NVML_GPM_METRIC_SM_UTIL
    with pytest.raises(pynvml.NVMLError_InvalidArgument):  # newer sample first
        fake.nvmlGpmMetricsGet(request)
    fake.nvmlGpmSampleFree(a)
    with pytest.raises(pynvml.NVMLError_InvalidArgument):  # double free
        fake.nvmlGpmSampleFree(a)


def test_gpm_giving_no_metric_at_all_is_said(backend_of) -> None:  # noqa: ANN001
    backend = backend_of(FakePynvml([FakeGpu(gpm={})]))
    backend.sample()
    (s,) = backend.sample()
    assert all(getattr(s, f) is None for f in FIELDS) and s.activity_note.startswith("GPM gave no metric over the last")
