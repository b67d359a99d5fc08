"""Golden outputs: every command that reads files, run on the bundled examples, prints exactly
what the code printed before the move into the DESIGN.md layout (commit 5624da6): the same
bytes on stdout, the same lines on stderr and the same exit status.

The golden files were written by the pre-move code; tests/data/golden/README.md says how to
write them again. A difference here is a change in what a command prints: fix the code, or,
when the change is intended, regenerate and say why in the commit.

Run as a script (`python tests/cli/test_golden.py --write`) it writes the golden files with
whichever gpuscope Python imports, from the repository root.
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"
STATUS = GOLDEN / "status.json"  # {case: {"rc": exit status, "stderr": text}}

MAGMA = ("magma", "examples/magma")
KERNELS = ("kernels", "examples/profiles")
SCALING = ("scaling", "examples/scaling")
RECORDING = ("report", "--recording", "examples/recording/demo.gsrec")

# Golden file name -> argv (paths relative to the repository root, which is the working
# folder). A name ending in .gz is stored compressed (the output is large and repetitive).
CASES: dict[str, tuple[str, ...]] = {
    # MAGMA: every table as CSV, everything as JSON, and the options that change the numbers
    "magma_summary.csv": (*MAGMA, "--format", "csv", "--table", "summary"),
    "magma_comparison.csv": (*MAGMA, "--format", "csv", "--table", "comparison"),
    "magma_findings.csv": (*MAGMA, "--format", "csv", "--table", "findings"),
    "magma_runs.csv": (*MAGMA, "--format", "csv", "--table", "runs"),
    "magma_rows.csv.gz": (*MAGMA, "--format", "csv", "--table", "rows"),
    "magma.json": (*MAGMA, "--format", "json"),
    "magma_exclude_attempt1.csv": (*MAGMA, "--exclude", "attempt-1", "--format", "csv"),
    "magma_pool_nodes.csv": (*MAGMA, "--pool-nodes", "--format", "csv"),
    "magma_keep_warmup.csv": (*MAGMA, "--keep-warmup", "--format", "csv"),
    "magma_ms_comparison.csv": (*MAGMA, "--metric", "ms", "--format", "csv", "--table", "comparison"),
    "magma_cublas.csv": (*MAGMA, "--impl", "cublas", "--format", "csv"),
    # kernels: the folder of every profiler format (JSON holds every table), peaks from a GPU
    "kernels_kernels.csv": (*KERNELS, "--format", "csv", "--table", "kernels"),
    "kernels.json": (*KERNELS, "--format", "json"),
    "kernels_a100_by_op.csv": (*KERNELS, "--gpu", "A100", "--rank-by", "op", "--format", "csv"),
    "kernels_a100_by_time.csv": (*KERNELS, "--gpu", "A100", "--sort", "time", "--format", "csv"),
    "kernels_grouped_nodes.csv": (*KERNELS, "--group-by", "nodes", "--format", "csv", "--table", "grouped"),
    "kernels_nvprof_k40m.json": ("kernels", "examples/profiles/nvprof_gpu_summary.txt", "--gpu", "K40m", "--format", "json"),
    # scaling: the seed logs (JSON holds every table), another baseline, every run-log format
    "scaling_speedup.csv": (*SCALING, "--format", "csv", "--table", "speedup"),
    "scaling_runs.csv": (*SCALING, "--format", "csv", "--table", "runs"),
    "scaling.json": (*SCALING, "--format", "json"),
    "scaling_baseline2.csv": (*SCALING, "--baseline", "2", "--format", "csv"),
    "scaling_all_examples.json": ("scaling", "examples", "--format", "json"),
    # check, browse: the whole examples folder
    "check.csv": ("check", "examples", "--format", "csv"),
    "check.json": ("check", "examples", "--format", "json"),
    "browse.csv": ("browse", "examples", "--format", "csv"),
    "browse.json": ("browse", "examples", "--format", "json"),
    # report of the bundled recording (no CSV: text and JSON)
    "report.json": (*RECORDING, "--format", "json"),
    "report.txt": (*RECORDING, "--format", "text", "--width", "120"),
    # watch --demo: the simulated GPUs are a function of the sample count; the host and
    # process tables are this machine's, so only the GPU table
    "watch_demo_a100x8.csv": ("watch", "--demo", "--once", "--format", "csv", "--table", "gpus"),
    "watch_demo_h100x4_mig.csv": ("watch", "--demo", "h100x4-mig", "--once", "--format", "csv", "--table", "gpus"),
    "watch_demo_one_gpu_idle.csv": ("watch", "--demo", "one-gpu-idle", "--once", "--format", "csv", "--table", "gpus"),
}


def normalise(text: str, root: Path = ROOT) -> str:
    """The repository's absolute path made relative (the only thing that differs between
    checkouts; the argv paths are relative, so this only guards a path printed absolute)."""
    return text.replace(f"{root}{os.sep}", "").replace(str(root), ".")


def cli_main() -> Callable[[list[str]], int]:
    """gpuscope's main(argv): gpuscope.tui.cli.main.main, or gpuscope.tui.cli.main in the
    pre-move layout (a module then), so --write can run the code the golden files came from."""
    try:
        return importlib.import_module("gpuscope.tui.cli.main").main
    except ModuleNotFoundError:  # gpuscope.tui.cli is then a module, not a package
        return importlib.import_module("gpuscope.tui.cli").main


def read_golden(name: str) -> str:
    data = (GOLDEN / name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


@pytest.fixture(scope="module")
def status() -> dict[str, dict[str, object]]:
    return json.loads(STATUS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(CASES))
def test_output_is_golden(name: str, status: dict[str, dict[str, object]], capsysbinary: pytest.CaptureFixture[bytes],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = cli_main()(list(CASES[name]))
    out, err = capsysbinary.readouterr()
    assert normalise(out.decode("utf-8")) == read_golden(name), f"stdout of gpuscope {' '.join(CASES[name])}"
    assert normalise(err.decode("utf-8")) == status[name]["stderr"], f"stderr of gpuscope {' '.join(CASES[name])}"
    assert code == status[name]["rc"], f"exit status of gpuscope {' '.join(CASES[name])}"


def test_every_golden_file_has_its_case() -> None:
    """A golden file without a case would silently stop being checked."""
    on_disk = {p.name for p in GOLDEN.iterdir()} - {"README.md", STATUS.name}
    assert on_disk == set(CASES)
    assert set(json.loads(STATUS.read_text(encoding="utf-8"))) == set(CASES)


def run_captured(argv: list[str]) -> tuple[int, str, str]:
    """main(argv) with stdout and stderr captured as bytes (it writes to sys.stdout.buffer)."""
    saved = sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    sys.stdout, sys.stderr = out, err
    try:
        code = cli_main()(argv)
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.detach().getvalue().decode("utf-8"), err.detach().getvalue().decode("utf-8")


def write_golden() -> None:
    """Write every golden file and status.json with the gpuscope Python imports."""
    import gpuscope.collectors.nvml as nvml

    nvml.local_gpu_names = lambda: ()  # as tests/conftest.py: no peak from this machine's GPU
    os.chdir(ROOT)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    status: dict[str, dict[str, object]] = {}
    for name, argv in CASES.items():
        code, out, err = run_captured(list(argv))
        data = normalise(out).encode("utf-8")
        (GOLDEN / name).write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
        status[name] = {"argv": list(argv), "rc": code, "stderr": normalise(err)}
        print(f"{name}: exit {code}, {len(data)} bytes", file=sys.__stderr__)
    STATUS.write_text(json.dumps(status, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/cli/test_golden.py --write")
    write_golden()
