"""Importing the registry (every command does) compiles none of the run-log line patterns that
cost the most to compile; the first seed log read or recognised does, and reads as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
from gpuscope.parsers import registry
from gpuscope.parsers.runlogs import formats, seed
assert seed._head_scan.cache_info().currsize == 0
assert seed._seed_line_pattern.cache_info().currsize == 0
assert formats.name_rules.cache_info().currsize == 0
from gpuscope.parsers.runlogs.read import read_runs
runs = read_runs(["examples/scaling"]).runs
assert len(runs) and seed._seed_line_pattern.cache_info().currsize == 1
assert formats.name_rules.cache_info().currsize == 1
"""


def test_registry_import_compiles_no_run_log_line_patterns():
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
