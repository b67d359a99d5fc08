"""Provides SimulatedBackend: GPUs described by a JSON scenario, for `watch --demo`, screenshots and UI tests.

Values are a pure function of the sample count (no randomness), so two runs and two test
machines see the same numbers; only `timestamp` and the energy counters (simulated power
integrated over the clock's time, as NVML's counter grows) come from the injectable clock. Every sample is
marked `simulated=True` and the status backend is 'simulated', so the UI can never pass a demo
off as a real node. The simulation copies NVML's quirks on purpose (SM % is None on the first
sample, MIG parents have no utilisation, MIG processes have no memory) so UI code written against
it also handles a real GPU; GPM activity is there only on GPUs the scenario says have it
(`"gpm": true`, Hopper and later), with NVML's reasons otherwise, and none on the first sample.

The simulated GPU processes are also rows of the process table (`process_rows`), labelled as
such: user `SIMULATED_USER`, a command starting `[simulated]`, uid -1 (no /proc entry: CPU and
memory are n/a, and signals and renice refuse them by `is_simulated`). Their pids are made up
and may be a real process's on this node, so their GPU use is never attached to a real row.

Scenario format (see scenarios/*.json): {"description", "driver_version", "defaults": {...},
"gpus": [{...}]}; each GPU entry is merged over "defaults". GPU keys: name, bus_id, uuid,
memory_total_mib, memory_used_mib, power_limit_w, idle_power_w, idle_temp_c, max_temp_c,
sm_clock_mhz [idle, max], memory_clock_mhz, memory_util_ratio, pcie_peak_gbs, nvlink_peak_gbs,
util {base, amplitude, period, phase, dip_every, dip_length, dip_to},
gpm (bool), activity {sm, occupancy, tensor, dram: each a share of the utilisation},
energy_counter (bool, default true),
processes [{pid, memory_mib (null = unknown), share, kind, command}],
mig [{profile, memory_total_mib, memory_used_mib}], error, error_from_sample.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from gpuscope.collectors.gpm import FIRST_POLL, NO_GPM_ON_GPU, WHOLE_GPU
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import GpuProcess, GpuSample, GpuStatus, MigSample, ProcessRow
from gpuscope.metrics.snapshot_tables import NOT_IN_PROC

DEFAULT_SCENARIO = "a100x8-training"
MIB = 1024 * 1024
SIMULATED_USER = "(demo)"
"""The user of a simulated process's row: parentheses are in no login name."""
SIMULATED_MARK = "[simulated] "
"""How a simulated process's command starts."""
KINDS = {"C": "compute", "G": "graphics", "M": "MPS"}
DRIVER_UP_S = 86_400.0
"""Energy counters start as if the driver had loaded a day ago, the GPU idle since."""
ACTIVITY = {"sm": 0.9, "occupancy": 0.45, "tensor": 0.5, "dram": 0.4}
"""GPM activity as shares of the utilisation, unless the scenario's `activity` says otherwise."""
NO_ENERGY_COUNTER = "no energy counter on this GPU (Volta or later, and not every board): energy from power samples only"
WHOLE_GPU_ENERGY = "whole GPU: NVML has no energy per MIG instance"


def is_simulated(row: ProcessRow) -> bool:
    """Whether `row` is one of `process_rows`' (also read back from a recording of a demo)."""
    return row.uid < 0 and row.user == SIMULATED_USER


def available_scenarios() -> tuple[str, ...]:
    """Names of the scenarios shipped in the package (for --demo help and errors)."""
    folder = resources.files("gpuscope.collectors").joinpath("scenarios")
    if not folder.is_dir():  # a wheel built without the package-data entry
        return ()
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json")))


def load_scenario(source: str) -> tuple[str, dict[str, Any]]:
    """(name, parsed JSON) for a shipped name, '' (the default) or a path to a JSON file."""
    source = source or DEFAULT_SCENARIO
    path = Path(source)
    if path.suffix == ".json":
        return path.stem, json.loads(path.read_text(encoding="utf-8"))  # OSError when missing
    if source not in available_scenarios():
        raise ValueError(f"unknown demo scenario {source!r}: choose one of {', '.join(available_scenarios())} or give a .json path")
    text = resources.files("gpuscope.collectors").joinpath("scenarios", f"{source}.json").read_text(encoding="utf-8")
    return source, json.loads(text)


def scenario_problem(source: str | None) -> str | None:
    """Why `--demo SOURCE` cannot be used (unknown name, missing or unreadable file, not a
    scenario), else None: said before anything starts or any file is created."""
    if source is None:
        return None
    try:
        _name, data = load_scenario(source)
    except ValueError as exc:  # an unknown name, or a file that is not JSON (JSONDecodeError is a ValueError)
        return str(exc) if not source.endswith(".json") else f"{source}: not a scenario file ({exc})"
    except OSError as exc:
        return f"{source}: {exc.strerror or exc}"
    if not isinstance(data, dict) or not isinstance(data.get("gpus"), list):
        return f"{source}: not a scenario file (a JSON object with a \"gpus\" list, as the shipped ones)"
    return None


def wave(spec: dict[str, Any], n: int) -> float:
    """Utilisation at sample n: base + a sine, with periodic dips (checkpoints, data stalls)."""
    k = n + spec.get("phase", 0)
    every = spec.get("dip_every", 0)
    if every and k % every >= every - spec.get("dip_length", 1):  # at the end of each period, so sample 0 is busy
        value = spec.get("dip_to", 0.0)
    else:
        period = spec.get("period", 0)
        value = spec.get("base", 0.0) + (spec.get("amplitude", 0.0) * math.sin(2 * math.pi * k / period) if period else 0.0)
    return round(min(100.0, max(0.0, float(value))), 1)


class SimulatedBackend:
    """GpuBackend over a scenario; `clock` only sets timestamps (tests pass a fixed one)."""

    def __init__(self, scenario: str, clock: Callable[[], float] = time.time) -> None:
        self.name, data = load_scenario(scenario)
        self._clock = clock
        self._n = 0
        self._last_t: float | None = None
        self._energy: dict[int, tuple[float, float]] = {}
        """GPU -> (its counter in mJ, its power at the last sample)."""
        self.description = " ".join(str(data.get("description", "")).split())  # for a demo banner
        self._driver = data.get("driver_version")
        defaults = data.get("defaults", {})
        self._gpus = [{**defaults, **gpu} for gpu in data.get("gpus", [])]
        for i, gpu in enumerate(self._gpus):  # stable fake identifiers when the file has none
            gpu.setdefault("uuid", "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpuscope-sim/{self.name}/{i}")))
            gpu.setdefault("bus_id", f"00000000:{0x18 + 0x10 * i:02X}:00.0")
        self._commands = {p["pid"]: clean(p["command"]) for g in self._gpus for p in g.get("processes", ())
                          if isinstance(p.get("command"), str) and p["command"].strip()}
        """pid -> the scenario's command for it (shown as text from outside: cleaned)."""

    def status(self) -> GpuStatus:
        names = sorted({g.get("name", "GPU") for g in self._gpus})
        what = f"{len(self._gpus)}x {' + '.join(names)}" if self._gpus else "no GPUs"
        return GpuStatus(backend="simulated", reason=f"simulated: scenario {self.name} ({what})", driver_version=self._driver)

    def sample(self) -> tuple[GpuSample, ...]:
        n, now = self._n, self._clock()
        self._n += 1
        seconds = max(0.0, now - self._last_t) if self._last_t is not None else 0.0
        self._last_t = now
        return tuple(self._gpu(i, g, n, now, seconds) for i, g in enumerate(self._gpus))

    def pcie_throughput(self) -> dict[int, tuple[float | None, float | None]]:
        n = max(self._n - 1, 0)  # rates of the latest sample
        return {i: _pcie(g, n) for i, g in enumerate(self._gpus)}

    def process_rows(self, gpus: tuple[GpuSample, ...]) -> tuple[ProcessRow, ...]:
        """One row per simulated process in `gpus` (a sample of this backend), in pid order,
        without GPU use (`collectors.snapshot.attach_gpu_use` adds it): what /proc would tell is
        unknown (state `NOT_IN_PROC`), the command is the scenario's, marked simulated."""
        kinds: dict[int, str] = {}
        for gpu in gpus:
            for proc in gpu.processes:
                kinds.setdefault(proc.pid, proc.kind)
        return tuple(
            ProcessRow(pid, 0, SIMULATED_USER, -1, NOT_IN_PROC, None, 0, 0, 0.0,
                       SIMULATED_MARK + (self._commands.get(pid) or f"{KINDS.get(kinds[pid], 'compute')} process of scenario {self.name}"))
            for pid in sorted(kinds))

    def close(self) -> None:
        return None

    def _counter(self, i: int, g: dict[str, Any], power: float, seconds: float) -> int:
        """GPU i's energy counter (mJ) after `seconds` more at `power`: trapezoids, as the real
        counter integrates the board's power."""
        start = g.get("idle_power_w", 0.15 * g.get("power_limit_w", 300.0)) * DRIVER_UP_S * 1000.0
        energy, before = self._energy.get(i, (start, power))
        energy += (before + power) / 2.0 * seconds * 1000.0
        self._energy[i] = (energy, power)
        return round(energy)

    def _gpu(self, i: int, g: dict[str, Any], n: int, now: float, seconds: float = 0.0) -> GpuSample:
        ident = dict(index=i, uuid=g["uuid"], name=g.get("name", "NVIDIA GPU"), bus_id=g["bus_id"], timestamp=now, simulated=True)
        if g.get("error") and n >= g.get("error_from_sample", 0):
            return GpuSample(**ident, error=g["error"])
        util = wave(g.get("util", {}), n)
        limit = g.get("power_limit_w", 300.0)
        idle_w = g.get("idle_power_w", 0.15 * limit)
        power = round(idle_w + (limit - idle_w) * util / 100.0, 1)
        capped = power >= 0.97 * limit
        idle_clock, max_clock = g.get("sm_clock_mhz", [210, 1410])
        throttle = ("gpu_idle",) if util == 0 else ("sw_power_cap",) if capped else ()
        mig = tuple(
            MigSample(gpu_index=i, mig_index=k, uuid="MIG-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{g['uuid']}/{k}")), profile=m["profile"],
                      memory_used=int(m.get("memory_used_mib", 0) * MIB), memory_total=int(m["memory_total_mib"] * MIB))
            for k, m in enumerate(g.get("mig", ())))
        used_mib = sum(m.get("memory_used_mib", 0) for m in g["mig"]) if mig else g.get("memory_used_mib", 0)
        procs = tuple(
            GpuProcess(pid=p["pid"], gpu_index=i, used_memory=None if p.get("memory_mib") is None else int(p["memory_mib"] * MIB),
                       # as NVML: no SM % before a previous timestamp exists, never on MIG
                       sm_percent=None if n == 0 or mig else round(util * p.get("share", 1.0), 1), kind=p.get("kind", "C"))
            for p in g.get("processes", ()))
        return GpuSample(
            **ident,
            util_gpu=None if mig else util,  # NVML: NOT_SUPPORTED on a MIG parent
            util_memory=None if mig else round(util * g.get("memory_util_ratio", 0.4), 1),
            memory_used=int(used_mib * MIB),
            memory_total=int(g.get("memory_total_mib", 0) * MIB) or None,
            temperature_c=round(g.get("idle_temp_c", 32) + (g.get("max_temp_c", 70) - g.get("idle_temp_c", 32)) * util / 100.0),
            power_w=power,
            power_limit_w=float(limit),
            sm_clock_mhz=idle_clock if util == 0 else round(max_clock * (0.93 if capped else 1.0)),
            memory_clock_mhz=g.get("memory_clock_mhz", 1593),
            throttle_reasons=throttle,
            mig=mig,
            processes=procs,
            sm_clock_max_mhz=max_clock,
            memory_clock_max_mhz=g.get("memory_clock_mhz", 1593),
            **self._energy_fields(i, g, power, seconds, bool(mig)),
            **_activity(g, n, util, bool(mig)),
        )

    def _energy_fields(self, i: int, g: dict[str, Any], power: float, seconds: float, mig: bool) -> dict[str, Any]:
        if not g.get("energy_counter", True):
            return {"energy_note": NO_ENERGY_COUNTER}
        return {"energy_mj": self._counter(i, g, power, seconds), "energy_note": WHOLE_GPU_ENERGY if mig else ""}


def _pcie(g: dict[str, Any], n: int) -> tuple[int, int]:
    """(TX, RX) bytes/s at sample n: host->GPU batches dominate RX."""
    peak = g.get("pcie_peak_gbs", 2.0) * 1e9
    load = wave(g.get("util", {}), n) / 100.0
    return round(peak * load * 0.25), round(peak * load)


def _activity(g: dict[str, Any], n: int, util: float, mig: bool) -> dict[str, Any]:
    """GPM fields at sample n, with NVML's reasons where there are none: no GPM before Hopper
    (`"gpm": true` says a GPU has it), nothing on the first sample (two are compared); on a MIG
    GPU they are the whole GPU's. `util` is the wave's, also where a MIG parent reports none."""
    if not g.get("gpm", False):
        return {"activity_note": NO_GPM_ON_GPU}
    if n == 0:
        return {"activity_note": FIRST_POLL}
    share = {**ACTIVITY, **g.get("activity", {})}
    tx, rx = _pcie(g, n)
    link = g.get("nvlink_peak_gbs")
    load = util / 100.0
    return {
        "sm_active_pct": round(util * share["sm"], 1),
        "sm_occupancy_pct": round(util * share["occupancy"], 1),
        "tensor_active_pct": round(util * share["tensor"], 1),
        "dram_bw_pct": round(util * share["dram"], 1),
        "pcie_tx_bytes_per_s": float(tx),
        "pcie_rx_bytes_per_s": float(rx),
        "nvlink_tx_bytes_per_s": None if link is None else round(link * 5e8 * load, 0),
        "nvlink_rx_bytes_per_s": None if link is None else round(link * 5e8 * load, 0),
        "activity_note": "; ".join([*([WHOLE_GPU] if mig else []),
                                    *(["not on this board: nvlink_tx_bytes_per_s, nvlink_rx_bytes_per_s"] if link is None else [])]),
    }
