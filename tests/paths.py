"""Where test data lives: the repository's examples, and ../shared/data when it is present."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "magma"
SHARED_MAGMA = ROOT.parent / "shared" / "data" / "magma"

needs_shared = pytest.mark.skipif(not SHARED_MAGMA.is_dir(), reason="../shared/data/magma is absent")
