"""Smoke test of bench/diff_bench.py: on a few thousand launches it builds both profiles, the
pandas merge and gpuscope's comparison agree on every kernel, and it cleans up after itself."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_diff_bench_runs_and_agrees() -> None:
    before = set(Path(tempfile.gettempdir()).glob("gpuscope-diff-bench-*"))
    done = subprocess.run([sys.executable, str(ROOT / "bench/diff_bench.py"), "--launches", "2000", "--repeat", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "agree on" in done.stdout and "(b) gpuscope diff end to end" in done.stdout
    assert set(Path(tempfile.gettempdir()).glob("gpuscope-diff-bench-*")) == before
