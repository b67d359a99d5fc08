"""Writes the option and key tables of docs/cli.md from the real parser and the screens' BINDINGS.

    python docs/cli_reference.py          rewrite the generated blocks of docs/cli.md in place
    python docs/cli_reference.py --check  exit 1 when docs/cli.md differs from what it would write

A generated block sits between `<!-- generated: options COMMAND -->` (or `keys NAME`) and
`<!-- end generated -->`; the prose around it is hand-written and left alone. The tables come from
the code so that they cannot drift from it: tests/cli/test_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

CLI_MD = Path(__file__).with_name("cli.md")

KEY_GROUPS = {
    "app": ("gpuscope.tui.app", "GpuscopeApp"),
    "watch": ("gpuscope.tui.screens.watch.screen", "WatchScreen"),
    "process-table": ("gpuscope.tui.screens.watch.process_table", "ProcessTable"),
    "signal": ("gpuscope.tui.screens.watch.dialogs", "SignalModal"),
    "record": ("gpuscope.tui.screens.watch.dialogs", "RecordModal"),
    "renice": ("gpuscope.tui.screens.watch.dialogs", "ReniceModal"),
    "setup": ("gpuscope.tui.screens.setup", "SetupScreen"),
    "output-pane": ("gpuscope.tui.screens.watch.output_pane", "OutputPane"),
    "replay": ("gpuscope.tui.screens.replay", "ReplayScreen"),
    "browse": ("gpuscope.tui.screens.browse.screen", "BrowseScreen"),
    "browse-tree": ("gpuscope.tui.screens.browse.tree", "BrowseTree"),
    "folder-summary": ("gpuscope.tui.screens.studies.folder", "FolderSummaryScreen"),
    "study-kind": ("gpuscope.tui.screens.studies.folder", "StudyModal"),
    "file-view": ("gpuscope.tui.screens.views.base", "FileScreen"),
    "table-view": ("gpuscope.tui.screens.views.table", "TableViewScreen"),
    "log-view": ("gpuscope.tui.screens.views.log", "LogViewScreen"),
    "merged-log": ("gpuscope.tui.screens.views.merged_log", "MergedLogScreen"),
    "plot-pick": ("gpuscope.tui.screens.views.plot_pick", "PlotPickModal"),
    "magma": ("gpuscope.tui.screens.studies.magma", "MagmaScreen"),
    "kernels": ("gpuscope.tui.screens.studies.kernels", "KernelsScreen"),
    "scaling": ("gpuscope.tui.screens.studies.scaling", "ScalingScreen"),
    "diff": ("gpuscope.tui.screens.diff", "DiffScreen"),
    "diff-tab": ("gpuscope.tui.screens.studies.diff_tab", "DiffTab"),
    "export": ("gpuscope.tui.screens.modals", "ExportModal"),
    "help": ("gpuscope.tui.screens.help", "HelpScreen"),
}
"""Every class that declares BINDINGS (`git grep -n "BINDINGS = " tui`), by block name."""

_BLOCK = re.compile(r"(<!-- generated: (options|keys) ([\w-]+) -->\n)(.*?)(<!-- end generated -->)", re.S)


def subparsers() -> dict[str, argparse.ArgumentParser]:
    """gpuscope's subcommands by name, from the parser the command line itself builds."""
    from gpuscope.tui.cli.main import build_parser

    parser = build_parser()
    for action in parser._actions:  # argparse has no public way to list its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise SystemExit("gpuscope's parser has no subcommands")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _argument(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.metavar is not None:
        name = str(action.metavar)
    elif action.choices is not None:
        name = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        name = action.dest.upper()
    return {"?": f"[{name}]", "+": f"{name} [{name} ...]", "*": f"[{name} ...]"}.get(action.nargs, name)  # type: ignore[arg-type]


def options_table(parser: argparse.ArgumentParser) -> str:
    """One row per argument of `parser`: its names, its argument and its help as --help words it."""
    rows = ["| option | argument | what it does |", "| --- | --- | --- |"]
    exclusive = {id(a): g._group_actions for g in parser._mutually_exclusive_groups for a in g._group_actions}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}` (positional)"
        argument = _argument(action) if action.option_strings else ""
        text = (action.help or "") % {**vars(action), "prog": parser.prog}
        if action.required and action.option_strings:
            text += " (required)"
        if id(action) in exclusive:
            others = [a.option_strings[-1] for a in exclusive[id(action)] if a is not action]
            text += f" (not with {' or '.join(others)})"
        rows.append(f"| {names} | {'`' + argument + '`' if argument else ''} | {_cell(text)} |")
    return "\n".join(rows) + "\n"


def _key_name(key: str) -> str:
    from textual.keys import format_key

    shown = format_key(key)
    if len(shown) == 1 and shown.isprintable() and shown.isascii():
        return shown
    return key.upper() if re.fullmatch(r"f\d+", key) else key


def keys_table(module: str, name: str) -> str:
    """One row per binding the class itself declares (not those it inherits): keys and what they do."""
    from textual.binding import Binding

    cls = getattr(importlib.import_module(module), name)
    rows = ["| key | what it does |", "| --- | --- |"]
    seen: set[str] = set()
    for binding in cls.__dict__.get("BINDINGS", ()):
        if not isinstance(binding, Binding):
            binding = Binding(*binding)
        keys = " / ".join(f"`{_key_name(k.strip())}`" for k in binding.key.split(","))
        row = f"| {keys} | {_cell(binding.tooltip or binding.description or binding.action)} |"
        if row not in seen:  # one key bound twice with the same words (e.g. browse, browse(True))
            seen.add(row)
            rows.append(row)
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """`text` (docs/cli.md) with every generated block rewritten from the code."""
    commands = subparsers()

    def block(match: re.Match[str]) -> str:
        kind, name = match.group(2), match.group(3)
        if kind == "options":
            body = options_table(commands[name]) if name in commands else f"(no command `{name}`)\n"
        else:
            body = keys_table(*KEY_GROUPS[name]) if name in KEY_GROUPS else f"(no key group `{name}`)\n"
        return match.group(1) + body + match.group(5)

    return _BLOCK.sub(block, text)


def missing_blocks(text: str) -> list[str]:
    """Commands and key groups that docs/cli.md has no generated block for."""
    present = {(m.group(2), m.group(3)) for m in _BLOCK.finditer(text)}
    wanted = [("options", c) for c in subparsers()] + [("keys", k) for k in KEY_GROUPS]
    return [f"{kind} {name}" for kind, name in wanted if (kind, name) not in present]


def main(argv: list[str]) -> int:
    text = CLI_MD.read_text(encoding="utf-8")
    new = render(text)
    missing = missing_blocks(new)
    if missing:
        print(f"{CLI_MD}: no generated block for: {', '.join(missing)}", file=sys.stderr)
    if "--check" in argv:
        if new != text:
            print(f"{CLI_MD} is out of date: run python docs/cli_reference.py", file=sys.stderr)
        return 1 if new != text or missing else 0
    if new != text:
        CLI_MD.write_text(new, encoding="utf-8")
        print(f"rewrote {CLI_MD}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
