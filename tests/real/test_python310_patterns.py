"""The package promises Python 3.10+: every module-level regular expression of the readers and
metrics compiles under Python 3.10's `re` too (possessive quantifiers and atomic groups came in
3.11, and a pattern using one raises at import there: every read of that kind would fail)."""

from __future__ import annotations

import glob
import importlib
import json
import os
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import json, re, sys
bad = []
for module, name, pattern, flags in json.load(sys.stdin):
    try:
        re.compile(pattern.encode("latin-1") if isinstance(flags, list) else pattern, flags[0] if isinstance(flags, list) else flags)
    except re.error as exc:
        bad.append(f"{module}.{name}: {exc}")
print("\\n".join(bad))
"""


def _patterns() -> list[tuple[str, str, str, object]]:
    found = []
    infos = [info for layer in ("parsers", "metrics", "collectors") for info in pkgutil.walk_packages([str(ROOT / layer)], f"gpuscope.{layer}.")]
    for info in infos:
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                if isinstance(value.pattern, bytes):  # bytes travel as latin-1 text, flags in a list to say so
                    found.append((info.name, name, value.pattern.decode("latin-1"), [value.flags]))
                else:
                    found.append((info.name, name, value.pattern, value.flags))
    return found


def _python310() -> str | None:
    """A Python 3.10 that runs: on PATH, or one pyenv installed (its shim may point elsewhere)."""
    for candidate in [shutil.which("python3.10"), *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3.10")))]:
        if candidate is None:
            continue
        done = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 10))"], capture_output=True, text=True, timeout=60)
        if done.stdout.strip() == "True":
            return candidate
    return None


def test_every_reader_pattern_compiles_under_python_3_10() -> None:
    python310 = _python310()
    if python310 is None:
        pytest.skip("no Python 3.10 on this machine")
    patterns = _patterns()
    assert len(patterns) > 20  # the readers' expressions were found
    done = subprocess.run([python310, "-c", CHECK], input=json.dumps(patterns), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout
