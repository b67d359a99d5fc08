"""A fake `pynvml` for NvmlBackend tests: the real function and constant names, real error classes.

Errors are raised as `pynvml.NVMLError(code)` from the REAL binding, which returns the matching
subclass (NVMLError_NotSupported, NVMLError_GpuIsLost...), so the code under test meets exactly
the exceptions a driver produces. Process-utilisation samples are real ctypes structs. Every call
is counted and logged so tests can check call counts and the timestamps passed through.

Install with `install(monkeypatch, fake)`, which swaps the `pynvml` that collectors.nvml uses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml as real

GIB = 1024**3
NOT_AVAILABLE = 2**64 - 1  # what the C struct holds when usedGpuMemory is unknown


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


def install(monkeypatch: Any, fake: FakePynvml) -> FakePynvml:
    """Make collectors.nvml (and so open_backend) use `fake` instead of the real binding."""
    import gpuscope.collectors.nvml as nvml

    monkeypatch.setattr(nvml, "pynvml", fake)
    return fake
