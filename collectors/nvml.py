"""Provides NvmlBackend: real NVIDIA GPUs through NVML (nvidia-ml-py, imported as `pynvml`).

The only module that imports pynvml. Design rules, from how other monitors broke:
* one nvmlInit per backend, device handles cached: re-initialising per sample costs ~22 ms per
  device with persistence mode off and stalls the caller;
* every per-field call is wrapped: an unsupported or forbidden field is None, never 0 and never
  an exception; only GPU_IS_LOST marks the whole device (that GpuSample gets `error`, the others
  still work);
* no NVML call happens in the constructor; callers run `start()`/`sample()` in a worker thread.

Beyond nvidia-smi's fields each sample carries the energy counter (mJ since the driver loaded,
with the reason when a GPU has none), the clocks' maxima, and GPM activity between this sample
and the previous one (collectors/gpm.py: Hopper and later, else None and why).

nvidia_smi_equivalents: NVIDIA_SMI_EQUIVALENTS maps each GpuSample field to the
`nvidia-smi --query-gpu=` field it should match, so a GPU node can cross-check us against it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pynvml

from gpuscope.collectors.gpm import GpmReader
from gpuscope.metrics.samples import GpuProcess, GpuSample, GpuStatus, MigSample

NVIDIA_SMI_EQUIVALENTS = {
    "name": "name",  # nvmlDeviceGetName
    "uuid": "uuid",  # nvmlDeviceGetUUID
    "bus_id": "pci.bus_id",  # nvmlDeviceGetPciInfo().busId
    "util_gpu": "utilization.gpu",  # nvmlDeviceGetUtilizationRates().gpu
    "util_memory": "utilization.memory",  # nvmlDeviceGetUtilizationRates().memory
    "memory_used": "memory.used",  # nvmlDeviceGetMemoryInfo().used (bytes here, MiB there)
    "memory_total": "memory.total",  # nvmlDeviceGetMemoryInfo().total
    "temperature_c": "temperature.gpu",  # nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)
    "power_w": "power.draw",  # nvmlDeviceGetPowerUsage (mW)
    "power_limit_w": "enforced.power.limit",  # nvmlDeviceGetEnforcedPowerLimit (mW)
    "sm_clock_mhz": "clocks.sm",  # nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
    "memory_clock_mhz": "clocks.mem",  # nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)
    "sm_clock_max_mhz": "clocks.max.sm",  # nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)
    "memory_clock_max_mhz": "clocks.max.memory",  # nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)
    "throttle_reasons": "clocks_event_reasons.active",  # nvmlDeviceGetCurrentClocksEventReasons
}

# Bits of nvmlClocksEventReason* (ABI-stable values), named like nvidia-smi's
# clocks_event_reasons.<name> query fields so users can look them up.
THROTTLE_REASONS = (
    (0x001, "gpu_idle"),
    (0x002, "applications_clocks_setting"),
    (0x004, "sw_power_cap"),
    (0x008, "hw_slowdown"),
    (0x010, "sync_boost"),
    (0x020, "sw_thermal_slowdown"),
    (0x040, "hw_thermal_slowdown"),
    (0x080, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
    (0x200, "board_limit"),
    (0x400, "reliability"),
)
_KNOWN_BITS = sum(bit for bit, _ in THROTTLE_REASONS)

# Newest binding first: _v3 exists from R510 on, _v2 from R470; older bindings or drivers raise
# FUNCTION_NOT_FOUND (or lack the attribute), and we move to the next one (gpustat#161, nvitop#93).
_PROCESS_CALLS = (
    ("C", ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses")),
    ("G", ("nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses")),
    ("M", ("nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses")),
)
_THROTTLE_CALLS = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
_NOT_AVAILABLE = 2**64 - 1  # NVML_VALUE_NOT_AVAILABLE_ulonglong: usedGpuMemory on WDDM / MIG

_INIT_REASONS = {
    pynvml.NVML_ERROR_LIBRARY_NOT_FOUND: "no NVIDIA driver: NVML library not found (libnvidia-ml.so.1)",
    pynvml.NVML_ERROR_DRIVER_NOT_LOADED: "NVIDIA driver not loaded: libnvidia-ml is present but the nvidia kernel module is not",
    pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH: "NVIDIA driver/library version mismatch: the kernel module and libnvidia-ml differ (reboot or reload the module)",
    pynvml.NVML_ERROR_NO_PERMISSION: "no permission to open the NVIDIA devices (/dev/nvidia*)",
}
_ENERGY_REASONS = {
    pynvml.NVML_ERROR_NOT_SUPPORTED: "no energy counter on this GPU (Volta or later, and not every board): energy from power samples only",
    pynvml.NVML_ERROR_FUNCTION_NOT_FOUND: "the NVIDIA driver has no energy counter call: energy from power samples only",
    pynvml.NVML_ERROR_NO_PERMISSION: "no permission to read this GPU's energy counter",
}
_ENERGY_FOR_GOOD = (pynvml.NVML_ERROR_NOT_SUPPORTED, pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
"""Answers that will not change while the driver stays loaded: not asked again."""
WHOLE_GPU_ENERGY = "whole GPU: NVML has no energy per MIG instance"
_DEVICE_ERRORS = {
    pynvml.NVML_ERROR_GPU_IS_LOST: "GPU is lost (fell off the bus or needs a reset)",
    pynvml.NVML_ERROR_NO_PERMISSION: "no permission to read this GPU (not allocated to this job?)",
}


def decode_throttle_reasons(mask: int) -> tuple[str, ...]:
    """Names of the set bits of a clocks-event (throttle) bitmask; unknown bits stay visible."""
    names = tuple(name for bit, name in THROTTLE_REASONS if mask & bit)
    unknown = mask & ~_KNOWN_BITS
    return names + ((f"unknown_0x{unknown:x}",) if unknown else ())


def _text(value: Any) -> str:
    """Old bindings return bytes, new ones str; a failed field (None) is ''."""
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _memory(value: Any) -> int | None:
    """usedGpuMemory: None or NVML_VALUE_NOT_AVAILABLE mean 'unknown', never 0 bytes."""
    return None if value is None or value >= _NOT_AVAILABLE else int(value)


def _mig_profile(name: str) -> str:
    """'NVIDIA A100-SXM4-40GB MIG 1g.5gb' -> '1g.5gb' (the MIG device name carries the profile)."""
    return name.rpartition("MIG ")[2].strip() if "MIG " in name else name


class NvmlBackend:
    """GpuBackend over NVML. Thread-safe: one lock guards the cached handles and timestamps."""

    def __init__(self) -> None:
        self._nv: Any = pynvml  # looked up now, so tests can monkeypatch this module's `pynvml`
        self._lock = threading.Lock()
        self._started = self._inited = self._closed = False
        self._reason: str | None = None
        self._driver: str | None = None
        self._count = 0
        self._handles: dict[int, Any] = {}
        self._static: dict[int, tuple[str, str, str]] = {}  # index -> (uuid, name, bus id)
        self._last_ts: dict[int, int] = {}  # index -> newest process-utilisation timestamp (us)
        self._chosen: dict[tuple[str, ...], int] = {}  # binding family -> first one that exists
        self._max_clocks: dict[int, tuple[int | None, int | None]] = {}  # index -> (SM, memory) MHz
        self._no_energy: dict[int, str] = {}  # index -> why its energy counter is never readable
        self._gpm = GpmReader(self._nv)

    def start(self) -> str | None:
        """Initialises NVML once; returns why there is no GPU view (one line), or None if usable."""
        with self._lock:
            return self._start()

    def _start(self) -> str | None:
        if self._started:
            return self._reason
        self._started = True
        nv = self._nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as err:
            self._reason = _INIT_REASONS.get(err.value, f"NVML could not start: {err}")
            return self._reason
        self._inited = True
        try:
            self._driver = _text(nv.nvmlSystemGetDriverVersion()) or None
        except nv.NVMLError:
            self._driver = None  # cosmetic: the GPU view works without it
        try:
            self._count = int(nv.nvmlDeviceGetCount())
        except nv.NVMLError as err:
            self._reason = f"NVML started but cannot count GPUs: {err}"
            return self._reason
        if self._count == 0:
            self._reason = "NVIDIA driver loaded but no GPU is visible"
        return self._reason

    def status(self) -> GpuStatus:
        if self._reason is not None:
            return GpuStatus(backend="none", reason=self._reason, driver_version=self._driver)
        return GpuStatus(backend="nvml", driver_version=self._driver)

    def sample(self) -> tuple[GpuSample, ...]:
        with self._lock:
            if self._closed or self._start() is not None:
                return ()
            now = time.time()
            return tuple(self._device(i, now) for i in range(self._count))

    def pcie_throughput(self) -> dict[int, tuple[float | None, float | None]]:
        """PCIe TX/RX bytes/s (NVML gives KB/s over a 20 ms window: 40 ms per GPU, blocking)."""
        with self._lock:
            if self._closed or self._start() is not None:
                return {}
            rates: dict[int, tuple[float | None, float | None]] = {}
            for i in range(self._count):
                try:
                    h = self._handle(i)
                    tx, rx = (self._field("nvmlDeviceGetPcieThroughput", h, c) for c in (self._nv.NVML_PCIE_UTIL_TX_BYTES, self._nv.NVML_PCIE_UTIL_RX_BYTES))
                except self._nv.NVMLError:
                    continue  # lost GPU: sample() reports it
                rates[i] = (None if tx is None else tx * 1024.0, None if rx is None else rx * 1024.0)
            return rates

    def close(self) -> None:
        with self._lock:
            if self._inited and not self._closed:
                self._gpm.close()  # frees the GPM sample buffers while NVML is still up
                try:
                    self._nv.nvmlShutdown()
                except self._nv.NVMLError:
                    pass  # nothing useful to do at exit
            self._closed = True
            self._handles.clear()

    # -- per device -------------------------------------------------------------------------

    def _handle(self, i: int) -> Any:
        if i not in self._handles:
            self._handles[i] = self._nv.nvmlDeviceGetHandleByIndex(i)
        return self._handles[i]

    def _field(self, name: str, *args: Any) -> Any:
        """One NVML getter; None when unsupported, forbidden or absent. Re-raises GPU_IS_LOST."""
        fn = getattr(self._nv, name, None)
        if fn is None:
            return None  # an nvidia-ml-py older than this getter
        try:
            return fn(*args)
        except self._nv.NVMLError as err:
            if err.value == self._nv.NVML_ERROR_GPU_IS_LOST:
                raise
            return None

    def _newest(self, names: tuple[str, ...], *args: Any) -> Any:
        """Calls the newest binding of a family the driver has (remembered across devices)."""
        nv = self._nv
        for k in range(self._chosen.get(names, 0), len(names)):
            fn = getattr(nv, names[k], None)
            if fn is None:
                continue
            try:
                value = fn(*args)
            except nv.NVMLError as err:
                if err.value == nv.NVML_ERROR_FUNCTION_NOT_FOUND:
                    continue
                self._chosen[names] = k  # it exists; this device just cannot answer
                if err.value == nv.NVML_ERROR_GPU_IS_LOST:
                    raise
                return None
            self._chosen[names] = k
            return value
        self._chosen[names] = len(names)  # none exists: stop asking
        return None

    def _device(self, i: int, now: float) -> GpuSample:
        try:
            return self._read(i, self._handle(i), now)
        except self._nv.NVMLError as err:
            self._handles.pop(i, None)  # look the handle up again next time (GPU may be reset)
            self._gpm.forget(i)
            uuid, name, bus = self._static.get(i, ("", "", ""))
            error = _DEVICE_ERRORS.get(err.value, f"NVML error: {err}")
            return GpuSample(index=i, uuid=uuid, name=name, bus_id=bus, timestamp=now, error=error)

    def _read(self, i: int, h: Any, now: float) -> GpuSample:
        nv, f = self._nv, self._field
        if i not in self._static:
            pci = f("nvmlDeviceGetPciInfo", h)
            self._static[i] = (_text(f("nvmlDeviceGetUUID", h)), _text(f("nvmlDeviceGetName", h)), _text(getattr(pci, "busId", None)))
        uuid, name, bus = self._static[i]
        util, mem = f("nvmlDeviceGetUtilizationRates", h), self._memory_info(h)
        power, limit = f("nvmlDeviceGetPowerUsage", h), f("nvmlDeviceGetEnforcedPowerLimit", h)
        mask = self._newest(_THROTTLE_CALLS, h)
        mig_on = (f("nvmlDeviceGetMigMode", h) or (None,))[0] == nv.NVML_DEVICE_MIG_ENABLE
        if i not in self._max_clocks:
            self._max_clocks[i] = (f("nvmlDeviceGetMaxClockInfo", h, nv.NVML_CLOCK_SM), f("nvmlDeviceGetMaxClockInfo", h, nv.NVML_CLOCK_MEM))
        sm_max, mem_max = self._max_clocks[i]
        return GpuSample(
            index=i, uuid=uuid, name=name, bus_id=bus, timestamp=now,
            util_gpu=getattr(util, "gpu", None), util_memory=getattr(util, "memory", None),
            memory_used=getattr(mem, "used", None), memory_total=getattr(mem, "total", None),
            temperature_c=f("nvmlDeviceGetTemperature", h, nv.NVML_TEMPERATURE_GPU),
            power_w=None if power is None else power / 1000.0,
            power_limit_w=None if limit is None else limit / 1000.0,
            sm_clock_mhz=f("nvmlDeviceGetClockInfo", h, nv.NVML_CLOCK_SM),
            memory_clock_mhz=f("nvmlDeviceGetClockInfo", h, nv.NVML_CLOCK_MEM),
            throttle_reasons=() if mask is None else decode_throttle_reasons(int(mask)),
            mig=self._mig(i, h) if mig_on else (),
            processes=self._processes(i, h, mig_on),
            sm_clock_max_mhz=sm_max, memory_clock_max_mhz=mem_max,
            **self._energy(i, h, mig_on),
            **self._gpm.read(i, h, now, mig_on),
        )

    def _energy(self, i: int, h: Any, mig_on: bool) -> dict[str, Any]:
        """energy_mj and energy_note: the counter, or None with why (unsupported is asked once)."""
        nv = self._nv
        reason = self._no_energy.get(i)
        if reason is not None:
            return {"energy_note": reason}
        read = getattr(nv, "nvmlDeviceGetTotalEnergyConsumption", None)
        if read is None:
            self._no_energy[i] = reason = "this nvidia-ml-py cannot read the energy counter: energy from power samples only"
            return {"energy_note": reason}
        try:
            value = read(h)
        except nv.NVMLError as err:
            if err.value == nv.NVML_ERROR_GPU_IS_LOST:
                raise
            reason = _ENERGY_REASONS.get(err.value, f"energy counter unreadable: {err}")
            if err.value in _ENERGY_FOR_GOOD:
                self._no_energy[i] = reason
            return {"energy_note": reason}
        return {"energy_mj": int(value), "energy_note": WHOLE_GPU_ENERGY if mig_on else ""}

    def _memory_info(self, h: Any) -> Any:
        """Memory as nvidia-smi shows it: the v2 call, whose `used` leaves out what the driver
        reserves (480 MiB on an idle H100 with driver 580: v1 said 480 MiB used where
        nvidia-smi said 0), else v1 on drivers before R510 or bindings without v2."""
        version = getattr(self._nv, "nvmlMemory_v2", None)
        mem = None if version is None else self._field("nvmlDeviceGetMemoryInfo", h, version)
        return mem if mem is not None else self._field("nvmlDeviceGetMemoryInfo", h)

    def _mig(self, i: int, h: Any) -> tuple[MigSample, ...]:
        """MIG instances (nvidia-smi -L / mig.*); slots without an instance are NOT_FOUND, skipped."""
        out = []
        for k in range(self._field("nvmlDeviceGetMaxMigDeviceCount", h) or 0):
            m = self._field("nvmlDeviceGetMigDeviceHandleByIndex", h, k)
            if m is None:
                continue
            mem = self._memory_info(m)
            out.append(MigSample(gpu_index=i, mig_index=k, uuid=_text(self._field("nvmlDeviceGetUUID", m)),
                                 profile=_mig_profile(_text(self._field("nvmlDeviceGetName", m))),
                                 memory_used=getattr(mem, "used", None), memory_total=getattr(mem, "total", None)))
        return tuple(out)

    def _processes(self, i: int, h: Any, mig_on: bool) -> tuple[GpuProcess, ...]:
        """nvidia-smi --query-compute-apps=pid,used_memory (+ graphics and MPS), SM % like pmon."""
        found: dict[int, GpuProcess] = {}
        for kind, names in _PROCESS_CALLS:
            for p in self._newest(names, h) or ():
                pid = int(p.pid)
                if pid in found:  # listed as compute and graphics: nvidia-smi says "C+G"
                    found[pid] = GpuProcess(pid, i, found[pid].used_memory, kind=found[pid].kind + "+" + kind)
                else:
                    found[pid] = GpuProcess(pid, i, _memory(getattr(p, "usedGpuMemory", None)), kind=kind)
        sm = self._sm_percent(i, h, ask=bool(found) and not mig_on)
        return tuple(GpuProcess(p.pid, i, p.used_memory, sm.get(p.pid), p.kind) for p in found.values())

    def _sm_percent(self, i: int, h: Any, ask: bool) -> dict[int, float]:
        """SM % per PID since the previous sample's NVML timestamp. NVML lists only processes that
        ran in the window (NOT_FOUND when none) and refuses MIG GPUs: missing PIDs stay None.
        Not asked without processes or on MIG; the window then restarts now."""
        last = self._last_ts.get(i)
        if last is None or not ask:
            self._last_ts[i] = int(time.time() * 1e6)  # first sample: no window yet, so no value
            return {}
        samples = self._field("nvmlDeviceGetProcessUtilization", h, last) or ()
        newest: dict[int, Any] = {}
        for s in samples:
            if s.pid not in newest or s.timeStamp > newest[s.pid].timeStamp:
                newest[s.pid] = s
        self._last_ts[i] = max((int(s.timeStamp) for s in samples), default=last)
        # Some drivers report garbage above 100 % for exited processes: unknown, not 100.
        return {pid: float(s.smUtil) for pid, s in newest.items() if 0 <= s.smUtil <= 100}


def local_gpu_names() -> tuple[str, ...]:
    """Names of this machine's GPUs, in NVML index order; () without a driver or on any NVML error.

    For the kernels screen's peak when a profile does not name its GPU: one init, one query per
    device, shutdown. Never raises: no GPU is a normal answer here.
    """
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVMLError subclasses, or a broken binding: no local GPU
        return ()
    try:
        count = pynvml.nvmlDeviceGetCount()
        return tuple(_text(pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))) for i in range(count))
    except Exception:  # noqa: BLE001 - same: a partial answer is no answer
        return ()
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001, S110 - shutting down is best effort
            pass
