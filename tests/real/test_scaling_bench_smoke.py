"""Smoke test of the scaling benchmark's input: the generator writes what it says (every log read
by `read_runs` with the resources, time and status it was written with, the grep-style baseline
finding the same), its seed 004 logs have the lines tests/scaling_work.py prints, and a seed
gives the same bytes."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.parsers.runlogs.read import read_runs

REPO_ROOT = Path(__file__).resolve().parents[2]
MLPERF = REPO_ROOT.parent / "shared" / "data" / "scaling" / "mlperf-training-v3.1"
WORK = Path(__file__).resolve().parent.parent / "scaling_work.py"

pytestmark = pytest.mark.skipif(not MLPERF.is_dir(), reason=f"real MLPerf logs not at {MLPERF}")


def load(name: str):
    """bench/ is scripts, not a package: load its modules by path."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO_ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    dest = tmp_path_factory.mktemp("scaling") / "tree"
    tree = load("make_scaling_tree").make_tree(dest, n_files=60, seed=0, mlperf_share=0.2)
    return dest, tree


def test_every_log_read_as_written(made) -> None:
    dest, tree = made
    assert tree.files == 60 and tree.kinds == {"mlperf": 12, "seed002": 24, "seed004": 24}
    assert tree.bytes == sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    result = read_runs([dest])
    runs = result.runs.set_index("source")
    assert len(runs) == 60
    for rel, expected in tree.expected.items():
        row = runs.loc[f"{dest.name}/{rel}"]
        assert row["format"] == expected["format"], rel
        assert (row["resource_kind"], row["resources"]) == (expected["kind"], expected["resources"]), rel
        assert row["time_s"] == expected["time_s"], rel
        assert row["status"] == expected["status"], rel
        if "nodes" in expected:
            assert row["nodes"] == expected["nodes"], rel
    # every way the resources are given is used: systems json, log lines, echoed SLURM_*, #SBATCH beside
    sources = " ".join(runs["resources_from"])
    for where in ("systems/eos_n2_ngc23.09_mxnet.json", "Number of GPUs", "Total GPUs", "SLURM_CPUS_PER_TASK=", "#SBATCH -c"):
        assert where in sources, where
    assert [f.kind for f in result.findings if f.severity != "info"] == ["aborted"] * (runs["status"] == "aborted").sum()


def test_baseline_finds_the_same_runs(made) -> None:
    dest, tree = made
    rows = load("baseline_scaling").read(dest)
    assert len(rows) == 60
    for path, kind, count, seconds in rows:
        expected = tree.expected[os.path.relpath(path, dest)]
        assert (kind, count) == (expected["kind"], expected["resources"])
        assert seconds == pytest.approx(expected["time_s"], rel=0.1)  # the first rank's copy, not the slowest


def _shape(text: str) -> list[str]:
    return [re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "#", line) for line in text.splitlines()]


def test_seed004_lines_are_what_scaling_work_prints(made, tmp_path) -> None:
    dest, tree = made
    env = {**os.environ, "SLURM_JOB_ID": "4200001", "SLURM_JOB_NAME": "scaling_work", "SLURM_CPUS_PER_TASK": "2", "SLURM_JOB_NUM_NODES": "1"}
    real = subprocess.run([sys.executable, str(WORK), "--workers", "2", "--size", "16", "--tasks", "24"], env=env,
                          capture_output=True, text=True, timeout=60, check=True).stdout
    slurm = next(dest / rel for rel in tree.expected if rel.startswith("seed004/") and rel.endswith(".out"))
    bare = next(dest / rel for rel in tree.expected if "/log.mnist-" in rel)
    ours, theirs = _shape(slurm.read_text()), _shape(real)
    # the same kinds of line (the epochs repeat: their count differs), the same SLURM head and tail
    assert set(ours) == set(theirs)
    assert ours[:4] == theirs[:4] and ours[-6:] == theirs[-6:]
    plain = _shape(bare.read_text())
    assert set(plain) == {line for line in theirs if not line.startswith("SLURM_")} and plain[-6:] == theirs[-6:]


def test_same_seed_same_bytes(made, tmp_path) -> None:
    dest, _tree = made
    load("make_scaling_tree").make_tree(tmp_path / "again", n_files=60, seed=0, mlperf_share=0.2)

    def digest(root: Path) -> str:
        h = hashlib.sha256()
        for p in sorted(root.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root)).encode() + p.read_bytes())
        return h.hexdigest()

    assert digest(tmp_path / "again") == digest(dest)
