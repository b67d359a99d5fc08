"""A fake `pynvml` for NvmlBackend tests: the real function and constant names, real error classes.

Errors are raised as `pynvml.NVMLError(code)` from the REAL binding, which returns the matching
subclass (NVMLError_NotSupported, NVMLError_GpuIsLost...), so the code under test meets exactly
the exceptions a driver produces. Process-utilisation samples are real ctypes structs, and so are
the GPM ones: sample buffers are real `c_nvmlGpmSample_t` pointers (the fake knows which GPU and
poll filled each, and which are still allocated) and metrics are filled into the real
`c_nvmlGpmMetricsGet_t`. Every call is counted and logged so tests can check call counts and the
timestamps passed through.

Install with `install(monkeypatch, fake)`, which swaps the `pynvml` that collectors.nvml uses.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml as real

GIB = 1024**3
NOT_AVAILABLE = 2**64 - 1  # what the C struct holds when usedGpuMemory is unknown
HOPPER_GPM = {"NVML_GPM_METRIC_SM_UTIL": 12.5, "NVML_GPM_METRIC_SM_OCCUPANCY": 8.0, "NVML_GPM_METRIC_ANY_TENSOR_UTIL": 0.0,
              "NVML_GPM_METRIC_DRAM_BW_UTIL": 91.0, "NVML_GPM_METRIC_PCIE_TX_PER_SEC": 100.0, "NVML_GPM_METRIC_PCIE_RX_PER_SEC": 2.5,
              "NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC": 4096.0, "NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC": 1024.0}
"""What an H100 SXM's GPM gives between two samples of a memory-bound job (percent, MiB/s)."""


@dataclass
class FakeProcess:
    pid: int
    used_memory: int | None = 1 * GIB
    """None as nvidia-ml-py gives it after decoding; NOT_AVAILABLE for a raw value."""


@dataclass
class FakeMig:
    uuid: str
    name: str
    memory_used: int
    memory_total: int


@dataclass
class FakeGpu:
    index: int = 0
    name: str = "NVIDIA A100-SXM4-80GB"
    uuid: str = ""
    bus_id: str = ""
    util_gpu: int = 87
    util_memory: int = 41
    memory_used: int = 30 * GIB
    memory_total: int = 80 * GIB
    memory_reserved: int = 0
    """What the driver keeps back: counted as used by the v1 memory call, not by v2 (nvidia-smi)."""
    temperature: int = 61
    power_mw: int = 312_500
    power_limit_mw: int = 400_000
    sm_clock: int = 1410
    mem_clock: int = 1593
    throttle_mask: int = 0
    mig_mode: int = 0
    mig: list[FakeMig | None] = field(default_factory=list)
    """MIG slots in index order; None is an empty slot (NVML answers NOT_FOUND)."""
    compute: list[FakeProcess] = field(default_factory=list)
    graphics: list[FakeProcess] = field(default_factory=list)
    util_samples: list[tuple[int, int, int]] = field(default_factory=list)
    """(pid, timestamp us, sm %) held in the driver's ring buffer."""
    pcie_kbs: tuple[int, int] = (1000, 4000)
    lost: bool = False
    """GPU fell off the bus: every call on its handle raises GPU_IS_LOST."""
    energy_mj: int = 4_200_000_000
    """nvmlDeviceGetTotalEnergyConsumption: mJ since the driver loaded (set it lower for a reload)."""
    max_sm_clock: int = 1410
    max_mem_clock: int = 1593
    gpm: dict[str, float] | None = None
    """GPM metrics by NVML_GPM_METRIC_* name (None: a GPU before Hopper); a name left out is one
    this board lacks (its nvmlReturn is NOT_SUPPORTED, like NVLink on a PCIe card)."""

    def __post_init__(self) -> None:
        self.uuid = self.uuid or f"GPU-{self.index:08x}-1111-2222-3333-444455556666"
        self.bus_id = self.bus_id or f"00000000:{0x07 + 8 * self.index:02X}:00.0"


@dataclass(frozen=True)
class Handle:
    index: int
    mig: int | None = None


def gpus(n: int, **overrides: Any) -> list[FakeGpu]:
    """n healthy GPUs, each with one compute process (PID 1000 + index)."""
    return [FakeGpu(index=i, compute=[FakeProcess(1000 + i)], **overrides) for i in range(n)]


class FakePynvml:
    """Configurable stand-in for the pynvml module.

    errors: {(function name, device index or None for every device): NVML error code}
    not_found: functions the *driver* lacks (raise FUNCTION_NOT_FOUND, as nvidia-ml-py does)
    absent: functions the *binding* lacks (AttributeError, as an old nvidia-ml-py)
    """

    NVMLError = real.NVMLError

    def __init__(self, devices: list[FakeGpu] | None = None, *, errors: dict[tuple[str, int | None], int] | None = None,
                 not_found: set[str] | frozenset[str] = frozenset(), absent: set[str] | frozenset[str] = frozenset(),
                 driver: str = "550.90.07") -> None:
        self.devices = devices if devices is not None else gpus(1)
        self.errors = dict(errors or {})
        self.not_found = set(not_found)
        self.absent = set(absent)
        self.driver = driver
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, tuple[Any, ...]]] = []
        self.initialised = False
        self.gpm_buffers: dict[int, Any] = {}
        """Allocated GPM sample buffers by address: empty again once every one is freed."""
        self.gpm_filled: dict[int, tuple[int, int]] = {}
        """Buffer address -> (GPU index, how many nvmlGpmSampleGet calls came before)."""

    def __getattribute__(self, name: str) -> Any:
        if name in object.__getattribute__(self, "absent"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("NVML_"):  # constants: the real values, so names cannot drift
            return getattr(real, name)
        raise AttributeError(name)

    # -- plumbing ----------------------------------------------------------------------------

    def _enter(self, name: str, handle: Handle | None = None, *args: Any) -> FakeGpu | None:
        self.calls[name] += 1
        self.log.append((name, (handle, *args)))
        if name in self.not_found:
            raise real.NVMLError(real.NVML_ERROR_FUNCTION_NOT_FOUND)
        if not self.initialised and name != "nvmlInit":
            raise real.NVMLError(real.NVML_ERROR_UNINITIALIZED)
        index = handle.index if handle is not None else None
        code = self.errors.get((name, index), self.errors.get((name, None)))
        if code is not None:
            raise real.NVMLError(code)
        if handle is None:
            return None
        gpu = self.devices[handle.index]
        if gpu.lost:
            raise real.NVMLError(real.NVML_ERROR_GPU_IS_LOST)
        return gpu

    # -- library ------------------------------------------------------------------------------

    def nvmlInit(self) -> None:
        self._enter("nvmlInit")
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._enter("nvmlShutdown")
        self.initialised = False

    def nvmlSystemGetDriverVersion(self) -> str:
        self._enter("nvmlSystemGetDriverVersion")
        return self.driver

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Handle:
        self._enter("nvmlDeviceGetHandleByIndex", Handle(index))
        return Handle(index)

    # -- device getters -----------------------------------------------------------------------

    def _mig(self, h: Handle) -> FakeMig:
        slot = self.devices[h.index].mig[h.mig] if h.mig is not None else None
        assert slot is not None
        return slot

    def nvmlDeviceGetName(self, h: Handle) -> str:
        gpu = self._enter("nvmlDeviceGetName", h)
        return self._mig(h).name if h.mig is not None else gpu.name  # type: ignore[union-attr]

    def nvmlDeviceGetUUID(self, h: Handle) -> str:
        gpu = self._enter("nvmlDeviceGetUUID", h)
        return self._mig(h).uuid if h.mig is not None else gpu.uuid  # type: ignore[union-attr]

    def nvmlDeviceGetPciInfo(self, h: Handle) -> SimpleNamespace:
        gpu = self._enter("nvmlDeviceGetPciInfo", h)
        return SimpleNamespace(busId=gpu.bus_id.encode())  # type: ignore[union-attr]  # a char array: bytes

    def nvmlDeviceGetUtilizationRates(self, h: Handle) -> SimpleNamespace:
        gpu = self._enter("nvmlDeviceGetUtilizationRates", h)
        if gpu.mig_mode:  # type: ignore[union-attr]
            raise real.NVMLError(real.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(gpu=gpu.util_gpu, memory=gpu.util_memory)  # type: ignore[union-attr]

    nvmlMemory_v2 = real.nvmlMemory_v2

    def nvmlDeviceGetMemoryInfo(self, h: Handle, version: int | None = None) -> SimpleNamespace:
        gpu = self._enter("nvmlDeviceGetMemoryInfo", h)
        if version and "nvmlDeviceGetMemoryInfo_v2" in self.not_found:  # a driver before R510
            raise real.NVMLError(real.NVML_ERROR_FUNCTION_NOT_FOUND)
        if h.mig is not None:
            m = self._mig(h)
            return SimpleNamespace(total=m.memory_total, used=m.memory_used, free=m.memory_total - m.memory_used)
        used = gpu.memory_used + (0 if version else gpu.memory_reserved)  # type: ignore[union-attr]
        return SimpleNamespace(total=gpu.memory_total, used=used, free=gpu.memory_total - used)  # type: ignore[union-attr]

    def nvmlDeviceGetTemperature(self, h: Handle, sensor: int) -> int:
        assert sensor == real.NVML_TEMPERATURE_GPU
        return self._enter("nvmlDeviceGetTemperature", h).temperature  # type: ignore[union-attr]

    def nvmlDeviceGetPowerUsage(self, h: Handle) -> int:
        return self._enter("nvmlDeviceGetPowerUsage", h).power_mw  # type: ignore[union-attr]

    def nvmlDeviceGetEnforcedPowerLimit(self, h: Handle) -> int:
        return self._enter("nvmlDeviceGetEnforcedPowerLimit", h).power_limit_mw  # type: ignore[union-attr]

    def nvmlDeviceGetClockInfo(self, h: Handle, clock: int) -> int:
        gpu = self._enter("nvmlDeviceGetClockInfo", h, clock)
        return {real.NVML_CLOCK_SM: gpu.sm_clock, real.NVML_CLOCK_MEM: gpu.mem_clock}[clock]  # type: ignore[union-attr]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: Handle) -> int:
        return self._enter("nvmlDeviceGetCurrentClocksEventReasons", h).throttle_mask  # type: ignore[union-attr]

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: Handle) -> int:
        return self._enter("nvmlDeviceGetCurrentClocksThrottleReasons", h).throttle_mask  # type: ignore[union-attr]

    def nvmlDeviceGetPcieThroughput(self, h: Handle, counter: int) -> int:
        gpu = self._enter("nvmlDeviceGetPcieThroughput", h, counter)
        return gpu.pcie_kbs[counter]  # type: ignore[union-attr]  # TX_BYTES = 0, RX_BYTES = 1

    def nvmlDeviceGetMaxClockInfo(self, h: Handle, clock: int) -> int:
        gpu = self._enter("nvmlDeviceGetMaxClockInfo", h, clock)
        return {real.NVML_CLOCK_SM: gpu.max_sm_clock, real.NVML_CLOCK_MEM: gpu.max_mem_clock}[clock]  # type: ignore[union-attr]

    def nvmlDeviceGetTotalEnergyConsumption(self, h: Handle) -> int:
        return self._enter("nvmlDeviceGetTotalEnergyConsumption", h).energy_mj  # type: ignore[union-attr]

    # -- GPM ----------------------------------------------------------------------------------

    c_nvmlGpmMetricsGet_t = real.c_nvmlGpmMetricsGet_t

    def nvmlGpmQueryDeviceSupport(self, h: Handle) -> Any:
        gpu = self._enter("nvmlGpmQueryDeviceSupport", h)
        support = real.c_nvmlGpmSupport_t()
        support.version = real.NVML_GPM_SUPPORT_VERSION
        support.isSupportedDevice = int(gpu.gpm is not None)  # type: ignore[union-attr]
        return support

    def nvmlGpmSampleAlloc(self) -> Any:
        self._enter("nvmlGpmSampleAlloc")
        buffer = real.struct_c_nvmlGpmSample_t()
        self.gpm_buffers[ctypes.addressof(buffer)] = buffer
        return ctypes.pointer(buffer)

    def nvmlGpmSampleFree(self, sample: Any) -> None:
        self._enter("nvmlGpmSampleFree")
        if self.gpm_buffers.pop(_address(sample), None) is None:  # a double free crashes a real process
            raise real.NVMLError(real.NVML_ERROR_INVALID_ARGUMENT)
        self.gpm_filled.pop(_address(sample), None)

    def nvmlGpmSampleGet(self, h: Handle, sample: Any) -> Any:
        gpu = self._enter("nvmlGpmSampleGet", h)
        if gpu.gpm is None:  # type: ignore[union-attr]
            raise real.NVMLError(real.NVML_ERROR_NOT_SUPPORTED)
        if _address(sample) not in self.gpm_buffers:
            raise real.NVMLError(real.NVML_ERROR_INVALID_ARGUMENT)
        self.gpm_filled[_address(sample)] = (h.index, self.calls["nvmlGpmSampleGet"])
        return sample

    def nvmlGpmMetricsGet(self, request: Any) -> Any:
        """Like NVML: both samples filled, from the same GPU, the first one older; each metric's
        own nvmlReturn says whether this board has it."""
        self._enter("nvmlGpmMetricsGet")
        first, second = (self.gpm_filled.get(_address(s)) for s in (request.sample1, request.sample2))
        if request.version != real.NVML_GPM_METRICS_GET_VERSION or first is None or second is None or first[0] != second[0] or first[1] >= second[1]:
            raise real.NVMLError(real.NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.devices[first[0]]
        by_id = {getattr(real, name): value for name, value in (gpu.gpm or {}).items()}
        for k in range(request.numMetrics):
            metric = request.metrics[k]
            if metric.metricId in by_id:
                metric.value, metric.nvmlReturn = by_id[metric.metricId], real.NVML_SUCCESS
            else:
                metric.value, metric.nvmlReturn = 0.0, real.NVML_ERROR_NOT_SUPPORTED
        return request

    # -- MIG ----------------------------------------------------------------------------------

    def nvmlDeviceGetMigMode(self, h: Handle) -> list[int]:
        gpu = self._enter("nvmlDeviceGetMigMode", h)
        return [gpu.mig_mode, gpu.mig_mode]  # type: ignore[union-attr]

    def nvmlDeviceGetMaxMigDeviceCount(self, h: Handle) -> int:
        gpu = self._enter("nvmlDeviceGetMaxMigDeviceCount", h)
        return 7 if gpu.mig_mode else 0  # type: ignore[union-attr]

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h: Handle, k: int) -> Handle:
        gpu = self._enter("nvmlDeviceGetMigDeviceHandleByIndex", h, k)
        if k >= len(gpu.mig) or gpu.mig[k] is None:  # type: ignore[union-attr]
            raise real.NVMLError(real.NVML_ERROR_NOT_FOUND)
        return Handle(h.index, k)

    # -- processes ----------------------------------------------------------------------------

    def _procs(self, name: str, h: Handle, kind: str) -> list[SimpleNamespace]:
        gpu = self._enter(name, h)
        return [SimpleNamespace(pid=p.pid, usedGpuMemory=p.used_memory, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)
                for p in getattr(gpu, kind)]

    def nvmlDeviceGetComputeRunningProcesses_v3(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetComputeRunningProcesses_v3", h, "compute")

    def nvmlDeviceGetComputeRunningProcesses_v2(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetComputeRunningProcesses_v2", h, "compute")

    def nvmlDeviceGetComputeRunningProcesses(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetComputeRunningProcesses", h, "compute")

    def nvmlDeviceGetGraphicsRunningProcesses_v3(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetGraphicsRunningProcesses_v3", h, "graphics")

    def nvmlDeviceGetGraphicsRunningProcesses_v2(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetGraphicsRunningProcesses_v2", h, "graphics")

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: Handle) -> list[SimpleNamespace]:
        return self._procs("nvmlDeviceGetGraphicsRunningProcesses", h, "graphics")

    def nvmlDeviceGetMPSComputeRunningProcesses_v3(self, h: Handle) -> list[SimpleNamespace]:
        self._enter("nvmlDeviceGetMPSComputeRunningProcesses_v3", h)
        return []  # MPS is not modelled: no server running

    def nvmlDeviceGetProcessUtilization(self, h: Handle, timestamp: int) -> list[Any]:
        """Like NVML: only samples newer than `timestamp`; NOT_FOUND when there are none; MIG refused."""
        gpu = self._enter("nvmlDeviceGetProcessUtilization", h, timestamp)
        if gpu.mig_mode:  # type: ignore[union-attr]
            raise real.NVMLError(real.NVML_ERROR_NOT_SUPPORTED)
        newer = [real.c_nvmlProcessUtilizationSample_t(pid=p, timeStamp=t, smUtil=sm, memUtil=0, encUtil=0, decUtil=0)
                 for p, t, sm in gpu.util_samples if t > timestamp]  # type: ignore[union-attr]
        if not newer:
            raise real.NVMLError(real.NVML_ERROR_NOT_FOUND)
        return newer


def _address(sample: Any) -> int | None:
    """The buffer a c_nvmlGpmSample_t points at."""
    return ctypes.cast(sample, ctypes.c_void_p).value


def install(monkeypatch: Any, fake: FakePynvml) -> FakePynvml:
    """Make collectors.nvml (and so open_backend) use `fake` instead of the real binding."""
    import gpuscope.collectors.nvml as nvml

    monkeypatch.setattr(nvml, "pynvml", fake)
    return fake
