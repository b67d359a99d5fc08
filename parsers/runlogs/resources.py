"""Provides where a run's resources come from besides its own log: the `#SBATCH` lines of the job
script beside it, the names of its file and folders, a `--resources` pattern; and how the
layers resolve to nodes, GPUs, processes and threads (the first layer that says, per kind;
per-node and per-task counts multiplied out).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import read_text
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.runlogs.discover import job_scripts
from gpuscope.parsers.runlogs.run import Counts, put


def _script_counts(script: Path, findings: list[Finding], label: str) -> tuple[Counts, str | None, str | None]:
    """Counts from a job script's #SBATCH lines, its job name and its output pattern."""
    counts: Counts = {}
    name = output = None
    text, _problems = read_text(script, str(script), max_bytes=1 << 20)
    if text is None:
        return counts, None, None
    for line in text.splitlines():
        m = fmt.SBATCH_LINE.match(line)
        if not m:
            continue
        tokens = m.group("options").split()
        j = 0
        while j < len(tokens):
            token = tokens[j]
            if "=" in token and token.startswith("--"):
                option, value = token.split("=", 1)
            elif token.startswith("-") and not token.startswith("--") and len(token) > 2:
                option, value = token[:2], token[2:]
            else:
                option = token
                value = tokens[j + 1] if j + 1 < len(tokens) else ""
                j += 1
            j += 1
            kind = fmt.SBATCH_OPTIONS.get(option)
            if kind is None:
                continue
            where = f"#SBATCH {option}{'=' if option.startswith('--') else ' '}{value} in {script.name}"
            if kind == "job_name":
                name = name or value
            elif kind == "output":
                output = output or value
            elif kind in ("gpus", "gpus_per_node", "gpus_per_task"):
                n = fmt.gpus_of_spec(value)
                if n:
                    put(counts, kind, n, where)
            elif kind == "nodes" and "-" in value:
                low = value.split("-")[0]
                put(counts, kind, low, where + " (the minimum of the range)")
            else:
                put(counts, kind, value, where)
    return counts, name, output


def _output_regex(pattern: str) -> re.Pattern[str]:
    """`#SBATCH -o` file name pattern -> regex."""
    name = Path(pattern).name
    return re.compile("".join(".*" if fmt.OUTPUT_PATTERN_FIELDS.fullmatch(part) else re.escape(part) for part in re.split(r"(%\d*[jxAaNnustJ%])", name)))


Script = tuple[str, Counts, "str | None", "re.Pattern[str] | None"]
"""A job script as the logs beside it are matched to it: its stem, counts, job name and the
regex of its `#SBATCH -o` file name (None without one)."""


def beside_script(log: Path, cache: dict[str, list[Script]], findings: list[Finding], label: str) -> tuple[Counts, str | None]:
    """Counts and job name from the one job script beside `log` that wrote it (its `#SBATCH -o`
    names it, or it has the log's stem, or it is the only script there); each folder read once
    (`cache`, by the folder's path as text: thousands of logs share a few folders), with each
    script's stem and output regex made then, not again for every log beside it."""
    folder, name = os.path.split(os.fspath(log))
    scripts = cache.get(folder)
    if scripts is None:
        scripts = []
        for entry in job_scripts(log.parent):
            counts, job_name, output = _script_counts(entry, findings, label)
            if counts or output or job_name:
                scripts.append((entry.stem, counts, job_name, _output_regex(output) if output else None))
        cache[folder] = scripts
    if not scripts:
        return {}, None
    named = [s for s in scripts if s[3] is not None and s[3].fullmatch(name) is not None]
    if len(named) == 1:
        return named[0][1], named[0][2]
    stem = log.stem
    same_stem = [s for s in scripts if s[0] == stem]
    if len(same_stem) == 1:
        return same_stem[0][1], same_stem[0][2]
    if len(scripts) == 1 and scripts[0][3] is None:
        return scripts[0][1], scripts[0][2]
    if len(scripts) == 1 and named == [] and scripts[0][3] is not None:
        return {}, None  # the only script writes other logs
    if len(named) > 1 or len(scripts) > 1:
        findings.append(Finding("info", "ambiguous-script", f"{len(scripts)} job scripts beside the log and none names it (#SBATCH -o): their #SBATCH lines are not used", label))
    return {}, None


@functools.lru_cache(maxsize=4096)
def _name_matches(part: str) -> tuple[tuple[str, str, str], ...]:
    """(kind, number, matched text) of every `name_rules()` rule found in one name, in rule order
    (a study's folder names repeat from file to file: each is searched once)."""
    found = []
    for pattern, kind in fmt.name_rules():
        m = pattern.search(part)
        if m:
            found.append((kind, m.group(1), m.group(0)))
    return tuple(found)


def _part_counts(counts: Counts, part: str, what: str) -> None:
    for kind, number, text in _name_matches(part):
        if kind not in counts:
            put(counts, kind, number, f"{what} {part!r} ({text})")


@functools.lru_cache(maxsize=1024)
def _folder_counts(folders: tuple[str, ...]) -> Counts:
    """Counts from folder names, inwards-out: the same for every log of a folder, so made once."""
    counts: Counts = {}
    for part in folders:
        _part_counts(counts, part, "folder name")
    return counts


def name_counts(parts: Sequence[str]) -> Counts:
    """Counts from the file name first, then its folders inwards-out (a folder of the file's own
    name adds nothing: the file's name said the same first)."""
    counts: Counts = {}
    _part_counts(counts, parts[0], "file name")
    for kind, value in _folder_counts(tuple(parts[1:])).items():
        counts.setdefault(kind, value)
    return counts


def compile_resources_pattern(text: str) -> re.Pattern[str]:
    """`--resources` pattern -> regex: `{gpus}`, `{nodes}`, `{threads}`, `{processes}` capture digits,
    `*` any text inside one folder, `**` any text; searched in the path (a plain regex with named
    groups of those names works too)."""
    if re.search(r"\(\?P<(gpus|nodes|threads|processes)>", text):
        return re.compile(text)
    out = []
    for token in re.split(r"(\{\w+\}|\*\*|\*)", text):
        if token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token.startswith("{") and token.endswith("}"):
            name = token[1:-1]
            if name not in fmt.RESOURCE_FIELDS:
                raise ValueError(f"--resources: unknown field {token}; use {{threads}}, {{processes}}, {{gpus}} or {{nodes}}")
            out.append(f"(?P<{name}>\\d+)")
        else:
            out.append(re.escape(token))
    if not any(f"(?P<{f}>" in "".join(out) for f in fmt.RESOURCE_FIELDS):
        raise ValueError("--resources needs at least one of {threads}, {processes}, {gpus}, {nodes}")
    return re.compile("".join(out))


def resolve(layers: list[Counts]) -> dict[str, tuple[int, str] | None]:
    """Final nodes / gpus / processes / threads from layers in priority order."""
    first: Counts = {}  # each kind's value in the first layer that has it
    for layer in reversed(layers):
        first.update(layer)
    nodes = first.get("nodes")
    out: dict[str, tuple[int, str] | None] = {"nodes": nodes, "threads": first.get("threads")}
    out["processes"] = None
    for layer in layers:
        if "processes" in layer:
            out["processes"] = layer["processes"]
            break
        if "tasks_per_node" in layer:
            n, where = layer["tasks_per_node"]
            out["processes"] = (n * nodes[0], f"{where} x {nodes[0]} nodes") if nodes else (n, f"{where} (one node assumed)")
            break
    out["gpus"] = None
    for layer in layers:
        if "gpus" in layer:
            out["gpus"] = layer["gpus"]
            break
        if "gpus_per_node" in layer:
            n, where = layer["gpus_per_node"]
            out["gpus"] = (n * nodes[0], f"{where} x {nodes[0]} nodes") if nodes and nodes[0] > 1 else (n, where)
            break
        if "gpus_per_task" in layer and out["processes"]:
            n, where = layer["gpus_per_task"]
            out["gpus"] = (n * out["processes"][0], f"{where} x {out['processes'][0]} tasks")
            break
    return out


# ---------------------------------------------------------------- MLPerf systems/NAME.json
def _mlperf_system(path: Path | None) -> tuple[Path | None, str | None]:
    """`<submitter>/systems/<system>.json` for `<submitter>/results/<system>/<benchmark>/result_N.txt`."""
    if path is None:
        return None, None
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "results" and i + 1 < len(parts) - 1:
            system = parts[i + 1]
            candidate = Path(*parts[:i]) / "systems" / f"{system}.json"
            return (candidate if candidate.is_file() else None), system
    return None, None


def system_counts(path: Path | None, findings: list[Finding], label: str, cache: dict[Any, Any]) -> Counts:
    """Nodes and GPUs of an MLPerf run from its `systems/NAME.json` (`cache`: each results folder's
    system file found once, by the folder's path as text; each system file read once, by its Path)."""
    counts: Counts = {}
    folder = os.path.dirname(path) if path is not None else ""
    if folder not in cache:  # the results of one system share a folder: its look-up (a stat) once
        cache[folder] = _mlperf_system(path)
    system_file, system = cache[folder]
    if system is None:
        return counts
    if system_file is None:
        findings.append(Finding("info", "no-system", f"no systems/{system}.json beside the results folder: nodes and GPUs come from elsewhere", label))
        return counts
    if system_file not in cache:
        text, problems = read_text(system_file, str(system_file))
        try:
            cache[system_file] = (json.loads(text) if text is not None else None), problems
        except ValueError:
            cache[system_file] = None, problems
    data, problems = cache[system_file]
    if not isinstance(data, dict):
        findings.extend(problems)
        findings.append(Finding("warning", "no-system", f"systems/{system}.json is not a JSON object: not used", label))
        return counts
    nodes, per_node = fmt.to_count(data.get("number_of_nodes")), fmt.to_count(data.get("accelerators_per_node"))
    name = f"systems/{system}.json"
    if nodes:
        counts["nodes"] = (nodes, f"{name}: number_of_nodes {nodes}")
    if nodes and per_node:
        counts["gpus"] = (nodes * per_node, f"{name}: {nodes} node{'s' if nodes > 1 else ''} x {per_node} accelerators")
    for key, column in (("accelerator_model_name", "accelerator"), ("framework", "framework")):
        if isinstance(data.get(key), str) and data[key]:
            counts[f"set_{column}"] = (1, data[key])  # carried as a setting, not a count
    return counts
