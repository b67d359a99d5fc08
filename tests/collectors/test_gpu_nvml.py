"""NvmlBackend against a fake pynvml that raises the real NVMLError subclasses: driver matrix
(init failures, missing bindings), hardware matrix (1, 3, 16 GPUs, MIG, unified memory) and the
'N/A is never 0' rule."""

from __future__ import annotations

import pynvml
import pytest

from fake_pynvml import GIB, NOT_AVAILABLE, FakeGpu, FakeMig, FakeProcess, FakePynvml, gpus, install
from gpuscope.collectors.gpu import GpuBackend, NoGpuBackend, open_backend
from gpuscope.collectors.nvml import NVIDIA_SMI_EQUIVALENTS, NvmlBackend, decode_throttle_reasons
from gpuscope.metrics.samples import GpuSample


def _sample(monkeypatch: pytest.MonkeyPatch, fake: FakePynvml) -> tuple[GpuSample, ...]:
    install(monkeypatch, fake)
    backend = NvmlBackend()
    try:
        return backend.sample()
    finally:
        backend.close()


# -- driver matrix: nvmlInit failures -------------------------------------------------------

@pytest.mark.parametrize(("code", "expected"), [
    pytest.param(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "no NVIDIA driver: NVML library not found (libnvidia-ml.so.1)", id="library-not-found"),
    pytest.param(pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "NVIDIA driver not loaded", id="driver-not-loaded"),
    pytest.param(pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "version mismatch", id="lib-rm-version-mismatch"),
    pytest.param(pynvml.NVML_ERROR_NO_PERMISSION, "no permission", id="no-permission-on-init"),
    pytest.param(pynvml.NVML_ERROR_UNKNOWN, "NVML could not start: Unknown Error", id="unknown"),
])
def test_init_failure_gives_the_no_gpu_backend_with_one_line(monkeypatch: pytest.MonkeyPatch, code: int, expected: str) -> None:
    fake = install(monkeypatch, FakePynvml(errors={("nvmlInit", None): code}))
    backend = open_backend()
    assert isinstance(backend, NoGpuBackend)
    status = backend.status()
    assert status.backend == "none" and expected in status.reason and "\n" not in status.reason
    assert backend.sample() == ()
    backend.close()
    assert fake.calls["nvmlInit"] == 1 and fake.calls["nvmlShutdown"] == 0  # nothing to shut down


def test_zero_gpus_is_no_gpu_view_and_releases_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml([]))
    backend = open_backend()
    assert isinstance(backend, NoGpuBackend) and "no GPU is visible" in backend.status().reason
    assert fake.calls["nvmlShutdown"] == 1


def test_real_pynvml_on_this_machine_never_raises() -> None:
    """The real binding: without a driver (CI, this sandbox) we get the no-GPU backend and a reason."""
    backend = open_backend()
    try:
        status = backend.status()
        assert isinstance(backend, GpuBackend) and "\n" not in status.reason
        if isinstance(backend, NoGpuBackend):
            assert status.backend == "none" and status.reason
        else:  # a GPU node: the real thing must work too
            assert status.backend == "nvml" and all(s.name for s in backend.sample())
    finally:
        backend.close()


def test_constructor_makes_no_nvml_call_and_init_happens_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(2)))
    backend = NvmlBackend()
    assert not fake.calls  # safe to build on the UI thread; the first sample does the work
    for _ in range(3):
        backend.sample()
    assert fake.calls["nvmlInit"] == 1 and backend.status().backend == "nvml" and backend.status().driver_version == "550.90.07"
    backend.close()


# -- one device's problem stays on that device ----------------------------------------------

def test_healthy_gpu_fields_and_units(monkeypatch: pytest.MonkeyPatch) -> None:
    (s,) = _sample(monkeypatch, FakePynvml(gpus(1)))
    assert (s.name, s.uuid, s.bus_id) == ("NVIDIA A100-SXM4-80GB", "GPU-00000000-1111-2222-3333-444455556666", "00000000:07:00.0")
    assert (s.util_gpu, s.util_memory, s.memory_used, s.memory_total) == (87, 41, 30 * GIB, 80 * GIB)
    assert (s.temperature_c, s.power_w, s.power_limit_w, s.sm_clock_mhz, s.memory_clock_mhz) == (61, 312.5, 400.0, 1410, 1593)
    assert s.error is None and not s.simulated and s.throttle_reasons == () and s.mig == ()
    assert [(p.pid, p.used_memory, p.kind) for p in s.processes] == [(1000, GIB, "C")]
    assert set(NVIDIA_SMI_EQUIVALENTS) <= set(GpuSample.__dataclass_fields__)


@pytest.mark.parametrize(("not_found", "used"), [
    pytest.param(set(), 30 * GIB, id="v2-like-nvidia-smi"),
    pytest.param({"nvmlDeviceGetMemoryInfo_v2"}, 30 * GIB + 480 * 2**20, id="pre-R510-driver-v1"),
])
def test_memory_used_leaves_out_the_driver_reserve_like_nvidia_smi(monkeypatch: pytest.MonkeyPatch, not_found: set[str], used: int) -> None:
    # Seen on an H100 (driver 580): v1 said 480 MiB used on an idle GPU, nvidia-smi said 0 (it uses v2).
    (s,) = _sample(monkeypatch, FakePynvml(gpus(1, memory_reserved=480 * 2**20), not_found=not_found))
    assert s.memory_used == used and s.memory_total == 80 * GIB


def test_gpu_lost_on_device_1_of_3(monkeypatch: pytest.MonkeyPatch) -> None:
    devices = gpus(3)
    fake = install(monkeypatch, FakePynvml(devices))
    backend = NvmlBackend()
    first = backend.sample()
    devices[1].lost = True
    lost = backend.sample()
    assert [s.error is None for s in lost] == [True, False, True]
    assert "GPU is lost" in lost[1].error and lost[1].name == first[1].name and lost[1].util_gpu is None
    assert lost[0].util_gpu == 87 and lost[2].processes[0].pid == 1002
    assert "GPU is lost" in backend.sample()[1].error  # still lost: the handle lookup itself fails
    devices[1].lost = False  # after a reset the handle is looked up again and the GPU comes back
    assert backend.sample()[1].error is None
    assert fake.calls["nvmlDeviceGetHandleByIndex"] == 3 + 0 + 1 + 1  # dropped when lost, then retried each sample
    backend.close()


def test_no_permission_on_one_device_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    samples = _sample(monkeypatch, FakePynvml(gpus(2), errors={("nvmlDeviceGetHandleByIndex", 0): pynvml.NVML_ERROR_NO_PERMISSION}))
    assert "no permission" in samples[0].error and samples[1].error is None


@pytest.mark.parametrize(("function", "fields"), [
    pytest.param("nvmlDeviceGetTemperature", ["temperature_c"], id="temperature"),
    pytest.param("nvmlDeviceGetPowerUsage", ["power_w"], id="power"),
    pytest.param("nvmlDeviceGetEnforcedPowerLimit", ["power_limit_w"], id="power-limit"),
    pytest.param("nvmlDeviceGetClockInfo", ["sm_clock_mhz", "memory_clock_mhz"], id="clocks"),
    pytest.param("nvmlDeviceGetUtilizationRates", ["util_gpu", "util_memory"], id="utilization"),
    pytest.param("nvmlDeviceGetMemoryInfo", ["memory_used", "memory_total"], id="memory-unified"),
])
@pytest.mark.parametrize("code", [pynvml.NVML_ERROR_NOT_SUPPORTED, pynvml.NVML_ERROR_NO_PERMISSION, pynvml.NVML_ERROR_UNKNOWN])
def test_unreadable_field_is_none_and_nothing_else_changes(monkeypatch: pytest.MonkeyPatch, function: str, fields: list[str], code: int) -> None:
    (healthy,) = _sample(monkeypatch, FakePynvml(gpus(1)))
    (s,) = _sample(monkeypatch, FakePynvml(gpus(1), errors={(function, None): code}))
    assert s.error is None
    for name in GpuSample.__dataclass_fields__:
        if name != "timestamp":
            assert getattr(s, name) == (None if name in fields else getattr(healthy, name)), name


def test_fake_raises_genuine_subclasses(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePynvml(gpus(1), errors={("nvmlDeviceGetTemperature", None): pynvml.NVML_ERROR_NOT_SUPPORTED})
    fake.nvmlInit()
    with pytest.raises(pynvml.NVMLError_NotSupported):
        fake.nvmlDeviceGetTemperature(fake.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_TEMPERATURE_GPU)


# -- processes: binding matrix, unknown memory, SM % ----------------------------------------

V3, V2, V1 = ("nvmlDeviceGetComputeRunningProcesses" + s for s in ("_v3", "_v2", ""))


@pytest.mark.parametrize(("not_found", "absent", "used"), [
    pytest.param(set(), set(), V3, id="v3"),
    pytest.param({V3}, set(), V2, id="driver-lacks-v3"),
    pytest.param(set(), {V3}, V2, id="binding-lacks-v3"),
    pytest.param({V3, V2}, set(), V1, id="driver-lacks-v3-v2"),
    pytest.param({V3}, {V2}, V1, id="mixed"),
    pytest.param({V3, V2, V1}, set(), None, id="none"),
])
def test_process_list_uses_newest_binding_and_remembers_it(monkeypatch: pytest.MonkeyPatch, not_found: set[str], absent: set[str], used: str | None) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(2), not_found=not_found, absent=absent))
    backend = NvmlBackend()
    for _ in range(3):
        samples = backend.sample()
    assert [[p.pid for p in s.processes] for s in samples] == ([[1000], [1001]] if used else [[], []])
    if used:
        assert fake.calls[used] == 6
    for name in not_found:  # a missing binding is tried once per backend, not per device and sample
        assert fake.calls[name] == 1
    backend.close()


@pytest.mark.parametrize(("raw", "expected"), [
    pytest.param(None, None, id="none"),
    pytest.param(NOT_AVAILABLE, None, id="not-available"),
    pytest.param(0, 0, id="really-zero"),
    pytest.param(5 * GIB, 5 * GIB, id="value"),
])
def test_used_gpu_memory_unknown_is_none_not_zero(monkeypatch: pytest.MonkeyPatch, raw: int | None, expected: int | None) -> None:
    (s,) = _sample(monkeypatch, FakePynvml([FakeGpu(compute=[FakeProcess(7, raw)])]))
    assert s.processes[0].used_memory == expected


def test_sm_percent_first_sample_none_then_previous_timestamp_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu = FakeGpu(compute=[FakeProcess(10), FakeProcess(11), FakeProcess(12)])
    fake = install(monkeypatch, FakePynvml([gpu]))
    backend = NvmlBackend()
    assert [p.sm_percent for p in backend.sample()[0].processes] == [None, None, None]
    assert fake.calls["nvmlDeviceGetProcessUtilization"] == 0  # no previous timestamp: nothing to ask
    gpu.util_samples = [(10, 2**62, 30), (10, 2**62 + 5, 45), (11, 2**62 + 3, 150)]  # newer than any wall clock
    second = backend.sample()[0].processes
    # newest sample per PID; >100 % is driver garbage (unknown); PID 12 had no sample: unknown, not 0
    assert [(p.pid, p.sm_percent) for p in second] == [(10, 45.0), (11, None), (12, None)]
    backend.sample()
    stamps = [args[1] for name, args in fake.log if name == "nvmlDeviceGetProcessUtilization"]
    assert stamps[1] == 2**62 + 5  # the newest NVML timestamp seen becomes the next window start
    assert 0 < stamps[0] < 2**62  # the first window starts at the previous sample's wall clock (us)
    backend.close()


def test_process_utilization_not_found_is_none_not_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(1)))
    backend = NvmlBackend()
    backend.sample()
    (s,) = backend.sample()
    assert fake.calls["nvmlDeviceGetProcessUtilization"] == 1  # it asked, NVML said NOT_FOUND
    assert s.processes[0].sm_percent is None and s.processes[0].used_memory == GIB
    backend.close()


def test_compute_and_graphics_same_pid_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    (s,) = _sample(monkeypatch, FakePynvml([FakeGpu(compute=[FakeProcess(5)], graphics=[FakeProcess(5), FakeProcess(6)])]))
    assert [(p.pid, p.kind) for p in s.processes] == [(5, "C+G"), (6, "G")]


# -- MIG -------------------------------------------------------------------------------------

def _mig_gpu() -> FakeGpu:
    slots: list[FakeMig | None] = [FakeMig(f"MIG-{k}", f"NVIDIA H100 80GB HBM3 MIG {p}", k * GIB, 10 * GIB) for k, p in enumerate(["1g.10gb", "1g.10gb", "2g.20gb"])]
    return FakeGpu(name="NVIDIA H100 80GB HBM3", mig_mode=pynvml.NVML_DEVICE_MIG_ENABLE, mig=[*slots, None, None],
                   compute=[FakeProcess(77, None)], util_samples=[(77, 2**62, 50)])


def test_mig_instances_listed_and_parent_has_no_utilisation(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml([_mig_gpu(), FakeGpu(index=1)]))
    backend = NvmlBackend()
    backend.sample()
    mig_gpu, plain = backend.sample()
    assert [(m.mig_index, m.uuid, m.profile, m.memory_used) for m in mig_gpu.mig] == [(0, "MIG-0", "1g.10gb", 0), (1, "MIG-1", "1g.10gb", GIB), (2, "MIG-2", "2g.20gb", 2 * GIB)]
    assert mig_gpu.util_gpu is None and mig_gpu.memory_total == 80 * GIB and plain.mig == ()
    assert [(p.pid, p.used_memory, p.sm_percent) for p in mig_gpu.processes] == [(77, None, None)]
    assert fake.calls["nvmlDeviceGetProcessUtilization"] == 0  # unsupported on MIG: not even asked
    backend.close()


@pytest.mark.parametrize("function", ["nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetMigMode", V3])
def test_mig_no_permission_keeps_the_gpu(monkeypatch: pytest.MonkeyPatch, function: str) -> None:
    (s,) = _sample(monkeypatch, FakePynvml([_mig_gpu()], errors={(function, None): pynvml.NVML_ERROR_NO_PERMISSION}))
    assert s.error is None and s.memory_total == 80 * GIB
    if function != V3:
        assert s.mig == ()
    else:  # aggregate process info on a MIG parent needs privileges
        assert len(s.mig) == 3 and s.processes == ()


# -- scale, throttle, lifecycle -------------------------------------------------------------

def test_sixteen_gpus_in_index_order_with_handles_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(16)))
    backend = NvmlBackend()
    for _ in range(3):
        samples = backend.sample()
    assert [s.index for s in samples] == list(range(16)) and len({s.uuid for s in samples}) == 16
    assert fake.calls["nvmlDeviceGetHandleByIndex"] == 16  # once per device across 3 samples
    assert fake.calls["nvmlDeviceGetUUID"] == 16  # static identity read once
    assert fake.calls["nvmlDeviceGetCount"] == 1
    backend.close()


@pytest.mark.parametrize(("mask", "names"), [
    (0, ()),
    (0x1, ("gpu_idle",)),
    (0x4 | 0x40, ("sw_power_cap", "hw_thermal_slowdown")),
    (0x8 | 0x80, ("hw_slowdown", "hw_power_brake_slowdown")),
    (0x1000 | 0x4, ("sw_power_cap", "unknown_0x1000")),
])
def test_throttle_reasons_decoded(mask: int, names: tuple[str, ...]) -> None:
    assert decode_throttle_reasons(mask) == names


@pytest.mark.parametrize("missing", [pytest.param({"not_found": {"nvmlDeviceGetCurrentClocksEventReasons"}}, id="driver-lacks-event-reasons"),
                                     pytest.param({"absent": {"nvmlDeviceGetCurrentClocksEventReasons"}}, id="binding-lacks-event-reasons"),
                                     pytest.param({}, id="event-reasons")])
def test_throttle_reasons_from_device_with_fallback(monkeypatch: pytest.MonkeyPatch, missing: dict[str, set[str]]) -> None:
    (s,) = _sample(monkeypatch, FakePynvml([FakeGpu(throttle_mask=0x4 | 0x20)], **missing))
    assert s.throttle_reasons == ("sw_power_cap", "sw_thermal_slowdown")


def test_close_shuts_down_once_and_second_close_is_harmless(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(2)))
    backend = open_backend()
    assert isinstance(backend, NvmlBackend)
    backend.sample()
    backend.close()
    backend.close()
    assert fake.calls["nvmlShutdown"] == 1 and fake.calls["nvmlInit"] == 1
    assert backend.sample() == () and backend.pcie_throughput() == {}  # no NVML call after close


def test_close_before_any_sample_does_not_shut_down(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(1)))
    NvmlBackend().close()
    assert fake.calls["nvmlShutdown"] == 0 and fake.calls["nvmlInit"] == 0


def test_pcie_only_on_demand(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install(monkeypatch, FakePynvml(gpus(2), errors={("nvmlDeviceGetPcieThroughput", 1): pynvml.NVML_ERROR_NOT_SUPPORTED}))
    backend = NvmlBackend()
    backend.sample()
    assert fake.calls["nvmlDeviceGetPcieThroughput"] == 0  # 20 ms each: never part of a sample
    assert backend.pcie_throughput() == {0: (1000 * 1024.0, 4000 * 1024.0), 1: (None, None)}
    backend.close()
