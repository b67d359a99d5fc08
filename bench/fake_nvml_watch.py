"""`gpuscope watch` over the tests' fake NVML: N simulated Hopper GPUs with energy counters and
GPM activity, so the watch's whole sampling path (energy, GPM, clocks, throttle reasons) runs on
a machine without a GPU. For `watch_overhead.py --fake-gpus N`; the GPUs are simulated.

    python bench/fake_nvml_watch.py N [watch options]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fake_pynvml  # noqa: E402 - from tests/, put on the path just above

import gpuscope.collectors.nvml as nvml  # noqa: E402
from gpuscope.tui.cli.main import main  # noqa: E402


class Running(fake_pynvml.FakePynvml):
    """Energy counters that grow at each GPU's power draw (a counter that never moves would
    skip the energy arithmetic)."""

    started = time.monotonic()

    def nvmlDeviceGetTotalEnergyConsumption(self, h: fake_pynvml.Handle) -> int:
        gpu = self.devices[h.index]
        return super().nvmlDeviceGetTotalEnergyConsumption(h) + int((time.monotonic() - self.started) * gpu.power_mw)


def fake_hopper(n: int) -> Running:
    """n H100s, each with one compute process, GPM metrics and a running energy counter."""
    return Running(fake_pynvml.gpus(n, name="NVIDIA H100 80GB HBM3 (simulated)", gpm=dict(fake_pynvml.HOPPER_GPM)))


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    nvml.pynvml = fake_hopper(count)
    sys.exit(main(["watch", *sys.argv[2:]]))
