"""SimulatedBackend: shipped scenarios load, numbers are deterministic, everything says 'simulated'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscope.collectors.gpu import GpuBackend, open_backend
from gpuscope.collectors.simulated import DEFAULT_SCENARIO, SimulatedBackend, available_scenarios, wave

SHIPPED = ("a100x8-training", "h100x4-mig", "h100x8-llm", "one-gpu-idle")


def _run(name: str, n: int = 40) -> list:
    backend = SimulatedBackend(name, clock=lambda: 1000.0)
    return [backend.sample() for _ in range(n)]


def test_shipped_scenarios_are_listed() -> None:
    assert set(SHIPPED) <= set(available_scenarios()) and DEFAULT_SCENARIO in SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_scenario_loads_and_is_labelled_simulated(name: str) -> None:
    backend = open_backend(name)
    assert isinstance(backend, GpuBackend) and isinstance(backend, SimulatedBackend)
    status = backend.status()
    assert status.backend == "simulated" and status.reason.startswith("simulated: ") and "\n" not in status.reason
    for samples in _run(name):
        assert samples and all(s.simulated and s.error is None for s in samples)
        for s in samples:
            assert s.uuid.startswith("GPU-") and s.bus_id.startswith("00000000:") and s.memory_total
            assert s.util_gpu is None or 0 <= s.util_gpu <= 100
            assert s.memory_used is not None and s.memory_used <= s.memory_total
            assert s.power_w is not None and s.power_limit_w is not None and 0 < s.power_w <= s.power_limit_w
    backend.close()


@pytest.mark.parametrize("name", SHIPPED)
def test_values_are_deterministic(name: str) -> None:
    assert _run(name) == _run(name)


def test_a100_training_job() -> None:
    runs = _run("a100x8-training")
    first, second = runs[0], runs[1]
    assert len(first) == 8 and {s.name for s in first} == {"NVIDIA A100-SXM4-80GB"}
    assert first[7].processes == () and first[7].util_gpu == 0 and first[7].throttle_reasons == ("gpu_idle",)
    pids = [p.pid for s in first[:7] for p in s.processes]
    assert len(pids) == len(set(pids)) == 8  # 7 ranks + an eval helper on GPU 0
    assert all(p.sm_percent is None for s in first for p in s.processes)  # as NVML: no window yet
    assert all(p.sm_percent is not None for s in second for p in s.processes)
    util0 = [r[0].util_gpu for r in runs]
    assert len(set(util0)) > 5 and min(util0) < 10 and max(util0) > 90  # time-varying, with checkpoint dips
    assert first[0].util_gpu > 80  # the first frame (screenshots) shows a busy job, not a dip
    assert all(r[3].util_gpu <= r[0].util_gpu for r in runs if r[0].util_gpu > 50)  # rank 3 straggles


def test_h100_mig_scenario_has_instances() -> None:
    samples = _run("h100x4-mig", 2)[1]
    assert len(samples) == 4 and {s.name for s in samples} == {"NVIDIA H100 80GB HBM3"}
    assert [len(s.mig) for s in samples] == [7, 3, 0, 0]
    assert [m.profile for m in samples[1].mig] == ["3g.40gb", "2g.20gb", "2g.20gb"]
    assert all(m.uuid.startswith("MIG-") and m.memory_total and m.gpu_index == 1 for m in samples[1].mig)
    mig_gpu = samples[0]
    assert mig_gpu.util_gpu is None and all(p.used_memory is None and p.sm_percent is None for p in mig_gpu.processes)
    assert mig_gpu.memory_used == sum(m.memory_used for m in mig_gpu.mig)
    assert samples[3].processes[0].sm_percent is not None


def test_idle_gpu() -> None:
    (s,) = _run("one-gpu-idle", 1)[0]
    assert s.util_gpu == 0 and s.processes == () and s.sm_clock_mhz == 210


def test_default_and_path_and_unknown(tmp_path: Path) -> None:
    assert SimulatedBackend("").name == DEFAULT_SCENARIO
    custom = tmp_path / "mine.json"
    custom.write_text(json.dumps({"gpus": [{"name": "NVIDIA L4", "memory_total_mib": 23034, "util": {"base": 50}}]}))
    backend = open_backend(str(custom))
    (s,) = backend.sample()
    assert (s.name, s.util_gpu, s.simulated) == ("NVIDIA L4", 50.0, True)
    assert "scenario mine" in backend.status().reason
    with pytest.raises(ValueError, match="a100x8-training"):
        open_backend("no-such-scenario")


def test_error_injection_and_pcie() -> None:
    backend = SimulatedBackend("one-gpu-idle")
    backend._gpus[0].update(error="GPU is lost (simulated)", error_from_sample=1)
    assert backend.sample()[0].error is None and backend.sample()[0].error == "GPU is lost (simulated)"
    assert SimulatedBackend("h100x4-mig").pcie_throughput()[2][1] > 0


def test_wave() -> None:
    spec = {"base": 90, "amplitude": 5, "period": 4, "dip_every": 10, "dip_length": 2, "dip_to": 3}
    assert [wave(spec, n) for n in range(10)] == [90.0, 95.0, 90.0, 85.0, 90.0, 95.0, 90.0, 85.0, 3.0, 3.0]
    assert wave({"base": 150}, 0) == 100.0 and wave({}, 3) == 0.0


def _ticking(name: str, n: int, period: float = 2.0) -> list:
    """n samples of a scenario whose clock advances `period` seconds a sample."""
    clock = iter(1000.0 + period * k for k in range(n))
    backend = SimulatedBackend(name, clock=lambda: next(clock))
    return [backend.sample() for _ in range(n)]


@pytest.mark.parametrize("name", SHIPPED)
def test_energy_counters_grow_with_simulated_power(name: str) -> None:
    runs = _ticking(name, 30)
    for i in range(len(runs[0])):
        energy = [r[i].energy_mj for r in runs]
        power = [r[i].power_w for r in runs]
        assert all(e is not None for e in energy) and energy == sorted(energy)
        expected = sum((a + b) / 2 * 2.0 for a, b in zip(power, power[1:]))  # joules, at 2 s a sample
        assert (energy[-1] - energy[0]) / 1000 == pytest.approx(expected, abs=0.05)
        assert energy[0] > 1e9  # since the driver loaded, not since the watch started
    mig = [s for s in runs[-1] if s.mig]
    assert all(s.energy_note == "whole GPU: NVML has no energy per MIG instance" for s in mig)
    assert all(s.energy_note == "" for s in runs[-1] if not s.mig)


def test_gpm_only_where_the_scenario_has_it_and_never_on_the_first_sample() -> None:
    first, second = _ticking("h100x8-llm", 2)
    assert all(s.sm_active_pct is None and "next refresh" in s.activity_note for s in first)
    assert all(s.sm_active_pct is not None and s.tensor_active_pct is not None and s.dram_bw_pct is not None for s in second)
    busy_but_idle_sms = second[6]
    assert busy_but_idle_sms.util_gpu >= 95 and busy_but_idle_sms.sm_active_pct < 20  # the demo's verdict
    assert all(s.sm_active_pct > 80 for s in second[:6]) and second[7].sm_active_pct == 0.0
    a100 = _ticking("a100x8-training", 2)[1]  # before Hopper: none, and why (never 0)
    assert all(s.sm_active_pct is None and s.dram_bw_pct is None and "no GPM" in s.activity_note for s in a100)
    mig = _ticking("h100x4-mig", 2)[1]
    assert mig[0].util_gpu is None and mig[0].sm_active_pct is not None and "all its MIG instances" in mig[0].activity_note


def test_a_gpu_without_an_energy_counter_says_why(tmp_path: Path) -> None:
    custom = tmp_path / "old.json"
    custom.write_text(json.dumps({"gpus": [{"name": "Tesla P100", "util": {"base": 50}, "energy_counter": False}]}))
    (s,) = SimulatedBackend(str(custom)).sample()
    assert s.energy_mj is None and "no energy counter" in s.energy_note and s.simulated
