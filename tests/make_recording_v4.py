"""Writes tests/data/recordings/v4.gsrec, the kept recording of schema version 4 (never written
again over it: every later gpuscope must read it).

    python tests/make_recording_v4.py [OUT]

As v2.gsrec and v3.gsrec: 12 samples of `FakeSource(gpus=2)` (tests/fake_watch.py) in batches
of 5, here with each GPU's clock maxima, energy counter and GPM activity and the node's RAPL
counters (tests/energy_readings.py: made up, deterministic; GPU 1 has no GPM, the first
sample no activity yet).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from energy_readings import with_energy  # noqa: E402 - the tests' own helpers
from fake_watch import FakeSource  # noqa: E402

from gpuscope.collectors.recorder import Recorder  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "recordings" / "v4.gsrec"
SAMPLES = 12


def snapshots() -> list:
    source = FakeSource(gpus=2)
    return with_energy([source.poll() for _ in range(SAMPLES)])


def main(out: Path = OUT) -> int:
    if out.exists():
        print(f"{out} exists: a kept recording is never written again", file=sys.stderr)
        return 2
    with Recorder(out, batch_samples=5) as rec:
        for snap in snapshots():
            rec.add(snap)
    print(f"wrote {out} ({rec.samples_written} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
