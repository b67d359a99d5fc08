"""The docs say what the code does: docs/cli.md's option and key tables are the parser's and the
screens' own, the README stays short with one example per command and CI's test command, and
every relative link in the docs points at a file that exists."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from paths import ROOT

DOCS = (ROOT / "README.md", ROOT / "docs" / "cli.md", ROOT / "docs" / "architecture.md", ROOT / "bench" / "README.md")
TEST_COMMAND = "python -m pytest -n 3 --dist loadgroup"


def _reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_md_tables_are_the_parsers_and_the_screens() -> None:
    reference = _reference()
    text = reference.CLI_MD.read_text(encoding="utf-8")
    assert reference.missing_blocks(text) == [], "add a generated block for each, then run python docs/cli_reference.py"
    assert reference.render(text) == text, "docs/cli.md is out of date: run python docs/cli_reference.py"


def test_cli_md_names_every_option_of_every_command() -> None:
    """Independent of the generator: each command's section names each of its options."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## gpuscope (\w+)\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    for name, parser in _reference().subparsers().items():
        assert name in sections, f"docs/cli.md has no section '## gpuscope {name}'"
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in sections[name], f"docs/cli.md: gpuscope {name} does not name {option}"


def test_readme_is_short_with_one_example_per_command() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    fenced = "\n".join(re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S))
    for name in _reference().subparsers():
        assert re.search(rf"^gpuscope {name}\b", fenced, re.M), f"README.md has no example of gpuscope {name}"


def test_ci_runs_the_readmes_test_command() -> None:
    """.ci/run takes the line of the bash fence after the <!-- test-command --> marker."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    extract = re.search(r"cmd=\$\((awk .*? README\.md)\)", script)
    assert extract, ".ci/run no longer extracts the command the way this test expects"
    command = subprocess.run(["bash", "-c", extract.group(1)], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert command.endswith(TEST_COMMAND), command


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+:", target):
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to {target}, which does not exist"


def test_bench_readme_names_every_bench() -> None:
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "bench").glob("*.py")):
        assert f"`{script.name}`" in text or f"bench/{script.name}" in text, f"bench/README.md does not describe {script.name}"


def test_every_class_with_keys_has_a_key_table() -> None:
    """A new screen, dialog or widget that declares BINDINGS gets its block in docs/cli.md."""
    import importlib
    import inspect
    import pkgutil

    import gpuscope.tui

    listed = {(module, name) for module, name in _reference().KEY_GROUPS.values()}
    declared = set()
    for info in pkgutil.walk_packages(gpuscope.tui.__path__, "gpuscope.tui."):
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and cls.__module__ == info.name and "BINDINGS" in cls.__dict__:
                declared.add((info.name, name))
    assert declared - listed == set(), "add these to KEY_GROUPS in docs/cli_reference.py and a keys block to docs/cli.md"


def test_architecture_names_every_package() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for init in sorted(ROOT.glob("*/**/__init__.py")):
        folder = init.parent.relative_to(ROOT)
        if folder.parts[0] in ("parsers", "metrics", "collectors", "tui"):
            assert f"{folder.name}/" in text, f"docs/architecture.md does not place {folder}/"
