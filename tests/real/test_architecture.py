"""Layer rules (import-linter), import hygiene, and a wheel that really contains everything."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("tui", "collectors", "parsers", "metrics")


def _packages() -> list[str]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]


def test_import_linter_contracts_hold() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    out = subprocess.run([lint, "--config", str(ROOT / ".importlinter")], capture_output=True, text=True, cwd=ROOT / "tests", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 5 kept, 0 broken" in out.stdout


DATA_AND_PRINT_MODULES = ["gpuscope.parsers.magma.read", "gpuscope.metrics.magma.stats", "gpuscope.metrics.export", "gpuscope.tui.cli.main",
                          "gpuscope.tui.render.boxplot", "gpuscope.tui.model.kernels_report", "gpuscope.tui.model.kernels",
                          "gpuscope.tui.render.kernel_plots", "gpuscope.tui.cli.studies", "gpuscope.tui.cli.live", "gpuscope.tui.cli.output",
                          "gpuscope.tui.render.plots", "gpuscope.tui.render.scaling_plots", "gpuscope.tui.model.magma_report",
                          "gpuscope.tui.model.scaling_report"]


def test_data_layers_and_print_path_never_load_textual(fresh_imports: list[list[str]]) -> None:
    """The modules are imported one after another and the first after which Textual is loaded
    is named (one child for all of them: each costs a second of imports)."""
    assert [said for said in fresh_imports if said[0] in ("TEXTUAL", "CLEAN")] == [["CLEAN"]], fresh_imports


PRINT_COMMANDS = {
    "magma": ["magma", "examples/magma", "--exclude", "attempt-1", "--format", "text"],
    "magma-csv": ["magma", "examples/magma", "--format", "csv"],
    "kernels": ["kernels", "examples/profiles", "--gpu", "A100", "--top", "10", "--format", "text"],
    "scaling": ["scaling", "examples/scaling", "--format", "text", "--width", "120"],
    "browse": ["browse", "examples", "--format", "csv"],
    "check": ["check", "examples"],
    "report": ["report", "--recording", "examples/recording/demo.gsrec"],
    "watch": ["watch", "--demo", "--once", "--format", "text"],
    "help": ["--help"],
}
"""Every command's print path, on the bundled examples (as the README runs them)."""


@pytest.fixture(scope="module")
def fresh_imports() -> list[list[str]]:
    """One fresh interpreter imports DATA_AND_PRINT_MODULES one after another, saying CLEAN or the
    first after which Textual is loaded, then runs every PRINT_COMMANDS command one after another
    (as `main` runs in the CLI tests), saying after each what was loaded once it was done: what a
    command imported is what it cost to start. One child for both tests: each start costs a
    second of imports."""
    code = ("import importlib, json, sys\n"
            "modules, commands = json.loads(sys.argv[1])\n"
            "for name in modules:\n"
            "    importlib.import_module(name)\n"
            "    if any(m == 'textual' or m.startswith('textual.') for m in sys.modules):\n"
            "        print('TEXTUAL', name, file=sys.stderr)\n"
            "        break\n"
            "else:\n"
            "    print('CLEAN', file=sys.stderr)\n"
            "from gpuscope.tui.cli.main import main\n"
            "for name, argv in commands.items():\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit:\n"
            "        pass\n"
            "    print('LOADED', name, *sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'scipy', 'plotext'}), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code, json.dumps([DATA_AND_PRINT_MODULES, PRINT_COMMANDS])], capture_output=True, text=True, cwd=ROOT,
                         timeout=240, stdin=subprocess.DEVNULL)
    said = [line.split() for line in out.stderr.splitlines() if line.startswith(("CLEAN", "TEXTUAL", "LOADED"))]
    assert said, out.stderr[-2000:]
    return said


def test_print_commands_never_load_textual_scipy_or_plotext(fresh_imports: list[list[str]]) -> None:
    """The first command to load Textual, scipy or plotext is the one named. scipy is a test
    dependency only (its stats module takes longer to import than pandas); text plots are drawn
    on a character grid (tui/render/grid_plot.py), plotext is for the screens."""
    loaded = [said[1:] for said in fresh_imports if said[0] == "LOADED"]
    assert [said[0] for said in loaded] == list(PRINT_COMMANDS), fresh_imports
    assert [said for said in loaded if said[1:]] == [], loaded


def test_every_subpackage_is_listed() -> None:
    on_disk = {"gpuscope." + ".".join(p.parent.relative_to(ROOT).parts) for layer in LAYERS for p in (ROOT / layer).rglob("__init__.py")}
    missing = on_disk - set(_packages())
    assert not missing, f"add to [tool.setuptools].packages: {sorted(missing)}"


@pytest.mark.slow
def test_wheel_contains_every_module_and_stylesheet(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    wheel = next(tmp_path.glob("gpuscope-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"gpuscope/{p.relative_to(ROOT).as_posix()}" for layer in LAYERS for p in (ROOT / layer).rglob("*") if p.suffix in (".py", ".tcss", ".json") and "__pycache__" not in p.parts}
    assert expected and not expected - names, sorted(expected - names)
    assert not any(n.startswith(("gpuscope/tests", "gpuscope/bench", "tests/", "bench/")) for n in names)
    assert any(n.endswith("entry_points.txt") for n in names)
    assert not any(n.endswith((".so", ".c", ".pyd")) for n in names), "gpuscope is pure Python"


def test_no_reader_imports_the_registry() -> None:
    """The registry imports the readers; a reader declares its own rules and takes its result
    type from parsers/base and its head helpers from parsers/files, so there is no import cycle."""
    import ast

    parsers = Path(__file__).resolve().parents[2] / "parsers"
    importers = []
    for module in sorted(parsers.rglob("*.py")):
        if module.name == "registry.py":
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module == "gpuscope.parsers":
                names = [f"gpuscope.parsers.{a.name}" for a in node.names]
            if "gpuscope.parsers.registry" in names:
                importers.append(str(module.relative_to(parsers)))
    assert importers == []


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle, counting imports inside functions too (import-linter's graph misses
    some of those): a module that needs another's piece imports it one way only."""
    import ast

    modules = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            name = ".".join(("gpuscope", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
            modules[name] = path
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuscope"):
                edges[name].update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names)
            elif isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name in modules)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [m for m in edges[start] if m in modules]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(n for n in edges[m] if n in modules)
        return False

    cycles = sorted(name for name in modules if reaches(name, name))
    assert cycles == []
