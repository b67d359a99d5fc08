"""Provides `GpmReader`: what the SMs, tensor cores, DRAM and links really did, from NVML GPM.

"GPU utilization" is the share of time any kernel ran; GPM (GPU Performance Monitoring, Hopper
and later, driver R520+) counts what ran: the share of SMs busy, warps resident, tensor-core
and DRAM-bandwidth use, PCIe and NVLink bytes. A metric is computed from two samples taken at
two instants, so the reader keeps each GPU's previous sample and gives the metrics between two
polls; the first poll of a GPU has none yet.

A GPU without GPM (before Hopper, an old driver or nvidia-ml-py) gives None with the reason in
`activity_note`, never 0; so does one metric the board lacks (NVLink on a PCIe card). Each GPU
holds two sample buffers (reused, swapped each poll), freed when its GPU is forgotten and at
`close()`. The reader is handed the pynvml module by NvmlBackend and makes no NVML call of its
own accord; calls happen under the backend's lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024
MIN_INTERVAL_S = 0.1
"""NVML asks for more than 100 ms between the two samples of a metric."""

# GpuSample field <- NVML_GPM_METRIC_* name, and the factor to its unit (GPM rates are MiB/s).
METRICS = (
    ("sm_active_pct", "NVML_GPM_METRIC_SM_UTIL", 1.0),
    ("sm_occupancy_pct", "NVML_GPM_METRIC_SM_OCCUPANCY", 1.0),
    ("tensor_active_pct", "NVML_GPM_METRIC_ANY_TENSOR_UTIL", 1.0),
    ("dram_bw_pct", "NVML_GPM_METRIC_DRAM_BW_UTIL", 1.0),
    ("pcie_tx_bytes_per_s", "NVML_GPM_METRIC_PCIE_TX_PER_SEC", MIB),
    ("pcie_rx_bytes_per_s", "NVML_GPM_METRIC_PCIE_RX_PER_SEC", MIB),
    ("nvlink_tx_bytes_per_s", "NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC", MIB),
    ("nvlink_rx_bytes_per_s", "NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC", MIB),
)
FIELDS = tuple(name for name, _, _ in METRICS)

NO_GPM_ON_GPU = "no GPM on this GPU (Hopper or later): SM, tensor and DRAM activity n/a"
FIRST_POLL = "activity from the next refresh on (GPM compares two readings)"
WHOLE_GPU = "activity of the whole GPU (all its MIG instances)"


@dataclass
class _Gpu:
    previous: Any = None
    """The sample of the previous poll (a pynvml c_nvmlGpmSample_t), or None."""
    spare: Any = None
    """The buffer the next poll reads into; swapped with `previous` after each poll."""
    at: float = 0.0
    """When `previous` was taken."""


class GpmReader:
    """GPM metrics per GPU between consecutive `read` calls."""

    def __init__(self, nv: Any) -> None:
        self._nv = nv
        self._unsupported: dict[int, str] = {}  # GPU index -> why there is no GPM (asked once)
        self._gpus: dict[int, _Gpu] = {}

    def read(self, index: int, handle: Any, now: float, mig: bool = False) -> dict[str, Any]:
        """GpuSample keyword arguments: the GPM fields and `activity_note`. Raises GPU_IS_LOST
        (the backend marks the device); any other NVML error gives None with the reason."""
        nv = self._nv
        reason = self._unsupported.get(index)
        if reason is None and index not in self._gpus:
            reason = self._support(handle)
            if reason:
                self._unsupported[index] = reason
        if reason:
            return {"activity_note": reason}
        gpu = self._gpus.setdefault(index, _Gpu())
        try:
            if gpu.previous is not None and now - gpu.at < MIN_INTERVAL_S:
                return {"activity_note": f"readings less than {MIN_INTERVAL_S} s apart: activity n/a this time"}
            if gpu.spare is None:
                gpu.spare = nv.nvmlGpmSampleAlloc()
            nv.nvmlGpmSampleGet(handle, gpu.spare)
        except nv.NVMLError as err:
            if err.value == nv.NVML_ERROR_GPU_IS_LOST:
                raise
            self.forget(index)
            return {"activity_note": f"GPM sample failed: {err}"}
        gpu.previous, gpu.spare, before = gpu.spare, gpu.previous, gpu.at
        gpu.at = now
        if gpu.spare is None:
            return {"activity_note": FIRST_POLL}
        fields = self._metrics(gpu.spare, gpu.previous)
        if isinstance(fields, str):
            return {"activity_note": fields}
        missing = [name for name in FIELDS if fields[name] is None]
        notes = [WHOLE_GPU] if mig else []
        if 0 < len(missing) < len(FIELDS):
            notes.append("not on this board: " + ", ".join(missing))
        elif missing:
            notes.append(f"GPM gave no metric over the last {now - before:.1f} s")
        return {**fields, "activity_note": "; ".join(notes)}

    def forget(self, index: int) -> None:
        """Drop a GPU's samples (it was lost or reset): the next poll starts afresh."""
        gpu = self._gpus.pop(index, None)
        if gpu is not None:
            for sample in (gpu.previous, gpu.spare):
                self._free(sample)

    def close(self) -> None:
        for index in list(self._gpus):
            self.forget(index)
        self._unsupported.clear()

    def _support(self, handle: Any) -> str:
        """'' when the GPU has GPM, else why not (one line)."""
        nv = self._nv
        query = getattr(nv, "nvmlGpmQueryDeviceSupport", None)
        if query is None:
            return "this nvidia-ml-py has no GPM calls: activity n/a"
        try:
            support = query(handle)
        except nv.NVMLError as err:
            if err.value == nv.NVML_ERROR_GPU_IS_LOST:
                raise
            if err.value == nv.NVML_ERROR_FUNCTION_NOT_FOUND:
                return "the NVIDIA driver has no GPM (R520 or later): activity n/a"
            if err.value == nv.NVML_ERROR_NOT_SUPPORTED:
                return NO_GPM_ON_GPU
            return f"GPM support unknown ({err}): activity n/a"
        return "" if getattr(support, "isSupportedDevice", 0) else NO_GPM_ON_GPU

    def _metrics(self, sample1: Any, sample2: Any) -> dict[str, float | None] | str:
        """Every metric between the two samples, None where the board lacks it; or why none."""
        nv = self._nv
        ask = [(name, getattr(nv, metric, None), factor) for name, metric, factor in METRICS]
        ask = [(name, metric_id, factor) for name, metric_id, factor in ask if metric_id is not None]
        request = nv.c_nvmlGpmMetricsGet_t()
        request.version = nv.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(ask)
        request.sample1, request.sample2 = sample1, sample2
        for k, (_, metric_id, _) in enumerate(ask):
            request.metrics[k].metricId = metric_id
        try:
            nv.nvmlGpmMetricsGet(request)
        except nv.NVMLError as err:
            if err.value == nv.NVML_ERROR_GPU_IS_LOST:
                raise
            return f"GPM metrics failed: {err}"
        values: dict[str, float | None] = dict.fromkeys(FIELDS)
        for k, (name, _, factor) in enumerate(ask):
            m = request.metrics[k]
            if m.nvmlReturn == nv.NVML_SUCCESS and m.value == m.value:  # a NaN is no value
                values[name] = float(m.value) * factor
        return values

    def _free(self, sample: Any) -> None:
        if sample is None:
            return
        try:
            self._nv.nvmlGpmSampleFree(sample)
        except self._nv.NVMLError:
            pass  # the buffer is host memory of a library that may be shutting down: nothing to do
