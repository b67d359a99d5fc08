"""Smoke test of the MAGMA benchmark: the generator builds a study-like tree, and the
baseline script and gpuscope find the same data rows in it (the bench's timings compare
like with like only if they do)."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_MAGMA = Path(__file__).resolve().parents[3] / "shared" / "data" / "magma"

pytestmark = pytest.mark.skipif(not SHARED_MAGMA.is_dir(), reason=f"real MAGMA files not at {SHARED_MAGMA}")

LAYOUT = re.compile(
    r"^(aws/eks|azure/aks|azure/cyclecloud|google/gke|google/compute-engine)"
    r"/gpu/size(4|8|16|32)/results/magma/magma-[\w-]+\.out$"
)


def load(name: str):
    """bench/ is scripts, not a package: load its modules by path."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO_ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    dest = tmp_path_factory.mktemp("magma") / "tree"
    count, size = load("make_magma_tree").make_tree(dest, n_files=12, seed=0)
    assert count == 12 and size == sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return dest


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.out")):
        h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


def test_tree_layout_and_determinism(tree, tmp_path):
    files = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
    assert len(files) == 12
    assert all(LAYOUT.match(f) for f in files), files
    assert {f.split("/gpu/")[0] for f in files} == {"aws/eks", "azure/aks", "azure/cyclecloud", "google/gke", "google/compute-engine"}
    # cyclecloud files keep the Slurm wrapper lines; the first is a merged one of 8-32 ranks.
    cyclecloud = [(tree / f).read_text() for f in files if f.startswith("azure/cyclecloud")]
    assert all(t.startswith("Start time: ") and "\nEnd time: " in t for t in cyclecloud)
    assert any(8 <= t.count("% MAGMA 2.8.0") <= 32 for t in cyclecloud)
    # Same seed, same bytes.
    load("make_magma_tree").make_tree(tmp_path / "again", n_files=12, seed=0)
    assert digest(tmp_path / "again") == digest(tree)


def test_perturbation_keeps_printf_layout():
    gen = load("make_magma_tree")
    import random

    row = "         300   512   512   511   3707.10 (   2.92)     ---   (  ---  )     ---\n"
    out = gen.perturb_row(row, random.Random(1))
    assert out != row and re.match(r"^ {9}300   512   512   511   [ \d]{3}\d\.\d\d \( {3}\d\.\d\d\)     ---   \(  ---  \)     ---\n$", out)


def test_baseline_and_gpuscope_find_the_same_rows(tree):
    magma = pytest.importorskip("gpuscope.parsers.magma.read")
    rows = load("baseline_magma").parse_tree(tree)
    result = magma.read_tree([tree])
    assert len(rows) > 1000
    assert len(rows) == (result.rows["impl"] == "magma").sum()  # the baseline reads MAGMA's own numbers
