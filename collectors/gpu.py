"""Provides the GpuBackend seam: one interface for real GPUs (NVML), a simulated node, or none.

The UI and the recorder only see `GpuBackend`; which one they get is decided once by
`open_backend`. Backends never raise from `sample()` for a missing GPU or field: a missing field
is None, a broken device is a GpuSample with `error`, a missing driver is `NoGpuBackend` whose
status says why in one line. That way gpuscope always shows the host view and exits 0 on a node
without NVIDIA hardware.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from gpuscope.metrics.samples import GpuSample, GpuStatus

PcieRates = dict[int, tuple[float | None, float | None]]
"""GPU index -> (TX, RX) PCIe throughput in bytes/s; None where the driver cannot tell."""


@runtime_checkable
class GpuBackend(Protocol):
    """What the watch view needs from a GPU source. Call `sample()` off the UI thread: the NVML
    backend initialises the driver on first use, which can take seconds when persistence mode is off."""

    def status(self) -> GpuStatus:
        """Which backend this is ('nvml', 'simulated', 'none') and, for 'none', why (one line)."""
        ...

    def sample(self) -> tuple[GpuSample, ...]:
        """One reading of every GPU, in index order; () when there are none."""
        ...

    def pcie_throughput(self) -> PcieRates:
        """PCIe TX/RX per GPU. Costly on real GPUs (NVML samples a 20 ms window per direction per
        device), so call it only while a pane that shows it is visible."""
        ...

    def close(self) -> None:
        """Release the driver; safe to call twice."""
        ...


class NoGpuBackend:
    """Stands in when there is no usable GPU source; carries the one-line reason for the UI."""

    def __init__(self, reason: str) -> None:
        # One line: the UI shows it in a single status row instead of the GPU panel.
        self._status = GpuStatus(backend="none", reason=" ".join(reason.split()))

    def status(self) -> GpuStatus:
        return self._status

    def sample(self) -> tuple[GpuSample, ...]:
        return ()

    def pcie_throughput(self) -> PcieRates:
        return {}

    def close(self) -> None:
        return None


def open_backend(demo: str | None = None) -> GpuBackend:
    """Picks the GPU source: the simulated scenario `demo` (a shipped name such as
    'a100x8-training', '' for the default, or a path to a JSON file), else NVML, else NoGpuBackend.

    Without `demo` this initialises NVML once (the backend keeps that session, no second init):
    instant on a machine without a driver, but possibly seconds on a GPU node with persistence mode
    off, so call it from a worker thread or before the app starts, never from a UI handler.
    An unknown demo name raises ValueError (a user typo, not a missing driver).
    """
    if demo is not None:
        from gpuscope.collectors.simulated import SimulatedBackend

        return SimulatedBackend(demo)
    try:
        from gpuscope.collectors.nvml import NvmlBackend
    except ImportError as err:  # nvidia-ml-py is a dependency, but a broken install must not crash
        return NoGpuBackend(f"no GPU view: nvidia-ml-py (pynvml) cannot be imported ({err})")
    backend = NvmlBackend()
    reason = backend.start()
    if reason is not None:
        backend.close()
        return NoGpuBackend(reason)
    return backend
