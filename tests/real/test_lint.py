"""ruff (the rules in pyproject.toml's [tool.ruff]) and the rule that the UI uses Textual's
public API only: part of the suite, so CI runs them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    out = subprocess.run([ruff, "check", "--output-format", "concise", "."], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_private_textual_imports() -> None:
    private = re.compile(r"^\s*(from|import)\s+textual(\.\w+)*\._", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "tui").rglob("*.py") if private.search(p.read_text(encoding="utf-8"))]
    assert not offenders, f"private Textual modules imported (pins the project to one release): {offenders}"
