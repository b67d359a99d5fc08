"""Provides the seed logs' reader: training and Slurm job logs of the seeds' shape (seed 002's
`Total training time` and `BENCHMARK RESULTS SUMMARY` table, seed 004's `Total Training Time`,
and the job-script echo lines around them). Line patterns: `formats`.

    from gpuscope.parsers.runlogs import seed
    got = seed.read(Path("outputs/slurm-4260805.out"))   # FileRead: runs table, findings, meta["curves"]
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import describe_lines, head_text, line_at, line_of, quote

if TYPE_CHECKING:
    from gpuscope.parsers.runlogs.run import Run

KIND = "seed-log"
TITLE = "Training log"
VIEW = "scaling"
BOUNDED = False

@functools.cache
def _seed_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern, what the line is) of the lines that say a file is a seed log. Built when first
    needed, as the patterns below: `formats` compiles its patterns on import, and every command
    imports this module through the registry; only recognising or reading a run log needs them."""
    from gpuscope.parsers.runlogs import formats as fmt

    return (
        (fmt.SLURM_ECHO, "Slurm variable echo"),
        (fmt.JOB_ID_LINE, "`Job ID:` line"),
        *((p, "seed 002 training summary") for p in fmt.SEED002_MARKERS),
        (fmt.SEED002_TABLE_TITLE, "seed 002 results table"),
        *((p, "seed 004 training line") for p in fmt.SEED004_MARKERS),
        *((p, "resource line") for p, _kind in fmt.LOG_RESOURCE_LINES),
    )


@functools.cache
def _head_scan() -> re.Pattern[str]:
    """All of them in one regex (their group names dropped: names may not repeat), so a head is
    searched once, not line by line and pattern by pattern. Compiled when first needed: every
    command imports this module through the registry; only recognising or reading a file needs it."""
    return re.compile("|".join("(?:" + re.sub(r"\(\?P<\w+>", "(?:", p.pattern) + ")" for p, _ in _seed_patterns()), re.MULTILINE)


def match(name: str, head: Head) -> str | None:
    """A training / Slurm job log of the seeds' shape (002, 004): one of their lines in the head."""
    text = head_text(head)
    found = _head_scan().search(text)
    if found is None:
        return None
    at = found.start() + (len(found.group()) - len(found.group().lstrip()))  # `^\s*` may span blank lines
    line = line_at(text, at)
    what = next((w for p, w in _seed_patterns() if p.match(line)), "training line")
    return f"{quote(line)} {what} on line {line_of(text, at)}: training log"


def describe(head: Head, size: int) -> str:
    return describe_lines(head, size)


def read(path: Path) -> FileRead:
    """The runs of one seed log, with their resources (the log, a job script beside it, its name)."""
    from gpuscope.parsers.runlogs import assemble  # the run-log reader: only when a log is read

    return assemble.read_one(path, parse)


def _seed_table(lines: list[str], start: int, label: str, findings: list[Finding]) -> list[Run]:
    """Seed 002's `BENCHMARK RESULTS SUMMARY` table, one run per row (start = title line index)."""
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import Run, put

    runs: list[Run] = []
    header_idx = next((i for i in range(start + 1, min(start + 4, len(lines))) if "configuration" in lines[i].lower() or "time (s)" in lines[i].lower()), None)
    if header_idx is None:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY without its header line: table not read", label, start + 1))
        return runs
    header = lines[header_idx].lower()
    found = sorted((header.find(text), column) for text, column in fmt.SEED002_TABLE_COLUMNS.items() if header.find(text) >= 0)
    # `time (s)` is also inside `time/epoch (s)`: keep the first position of each column only once
    columns: list[str] = []
    for _pos, column in found:
        if column not in columns:
            columns.append(column)
    if "time/epoch (s)" in header and "time (s)" in header and header.find("time (s)") > header.find("time/epoch (s)"):
        columns = [c for c in columns if c != "time_s"]
    if "configuration" not in columns:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY header has no Configuration column: table not read", label, header_idx + 1))
        return runs
    lead = columns[: columns.index("configuration")]
    tail = columns[columns.index("configuration") + 1:]
    for i in range(header_idx + 1, len(lines)):
        text = lines[i].strip()
        if not text or set(text) <= set("-=") and i == header_idx + 1:
            continue
        if set(text) <= set("=-"):
            break
        tokens = text.split()
        if len(tokens) < len(lead) + len(tail) + 1:
            findings.append(Finding("warning", "partial", f"summary table row has {len(tokens)} fields: skipped", label, i + 1))
            continue
        values = dict(zip(lead, tokens[: len(lead)]))
        values.update(zip(tail, tokens[len(tokens) - len(tail):]))
        values["configuration"] = " ".join(tokens[len(lead): len(tokens) - len(tail)])
        run = Run(f"{label}:{i + 1}", "seed002")
        run.job_id = values.get("job_id")
        run.label = values["configuration"]
        where = f"summary table row on line {i + 1}"
        put(run.counts, "gpus", values.get("gpus"), f"GPUs column of the {where}")
        put(run.counts, "nodes", values.get("nodes"), f"Nodes column of the {where}")
        run.time_s = fmt.to_float(values.get("time_s"))
        run.time_from = f"Time (s) column of the {where}"
        if not math.isfinite(run.time_s) or run.time_s <= 0:
            run.time_s, run.status = math.nan, "no-timing"
            findings.append(Finding("warning", "no-timing", f"summary table row on line {i + 1} has no usable time", label, i + 1))
        loss, acc = fmt.to_float(values.get("val_loss")), fmt.to_float(values.get("val_acc"))
        if math.isfinite(loss):
            run.quality_name, run.quality, run.quality_higher_is_better = "val_loss", loss, False
        elif math.isfinite(acc):
            run.quality_name, run.quality, run.quality_higher_is_better = "val_acc", acc, True
        epoch_time = fmt.to_float(values.get("epoch_time_s"))
        if math.isfinite(epoch_time) and epoch_time > 0:
            run.epoch_time_s = epoch_time
            if math.isfinite(run.time_s):
                run.epochs = round(run.time_s / epoch_time)
        runs.append(run)
    if not runs:
        findings.append(Finding("warning", "partial", "BENCHMARK RESULTS SUMMARY table has no rows", label, start + 1))
    return runs


_FAILURE_LINES = (
    (re.compile(r"CANCELLED AT .* DUE TO TIME LIMIT"), "timeout"),
    (re.compile(r"slurmstepd: error: .*CANCELLED AT"), "cancelled"),
    (re.compile(r"oom[-_ ]kill|Out Of Memory|OUT_OF_MEMORY", re.IGNORECASE), "failed"),
    (re.compile(r"^Traceback \(most recent call last\):"), "failed"),
)


@functools.cache
def _seed_lines() -> tuple[tuple[str, re.Pattern[str], str], ...]:
    """Every line pattern of a seed log, in the order a line is tried against them (the first that
    matches decides what the line is): (tag, pattern, what it gives). Built when first needed,
    as `_seed_patterns`."""
    from gpuscope.parsers.runlogs import formats as fmt

    return (
        ("slurm", fmt.SLURM_ECHO, ""),
        *((f"res{i}", pattern, kind) for i, (pattern, kind) in enumerate(fmt.LOG_RESOURCE_LINES)),
        ("job_id", fmt.JOB_ID_LINE, ""),
        ("table", fmt.SEED002_TABLE_TITLE, ""),
        ("total002", fmt.SEED002_TOTAL, ""),
        ("total004", fmt.SEED004_TOTAL, ""),
        ("per_epoch", fmt.SEED002_PER_EPOCH, ""),
        ("best_loss", fmt.SEED002_BEST_LOSS, ""),
        ("best_acc", fmt.SEED002_BEST_ACC, ""),
        ("max_epochs", fmt.SEED002_MAX_EPOCHS, ""),
        ("setting0", fmt.SEED002_BATCH, "local_batch_size"),
        ("setting1", fmt.SEED002_EFFECTIVE_BATCH, "global_batch_size"),
        ("setting2", fmt.SEED002_LEARNING_RATE, "learning_rate"),
        ("setting3", fmt.SEED002_TORCH, "code_version"),
        ("duration", fmt.SEED002_DURATION, ""),
        ("complete", fmt.SEED002_COMPLETE, ""),
        ("epochs004", fmt.SEED004_EPOCHS, ""),
        ("rate004", fmt.SEED004_RATE, ""),
        ("train004", fmt.SEED004_TRAIN, ""),
        ("test004", fmt.SEED004_TEST, ""),
    )


@functools.cache
def _seed_branches() -> dict[str, tuple[re.Pattern[str], str]]:
    return {tag: (pattern, what) for tag, pattern, what in _seed_lines()}


def _branch(tag: str, pattern: re.Pattern[str]) -> str:
    """One alternative of `_seed_line_pattern`: the pattern after its leading `^\\s*`, its own group names
    dropped (names may not repeat in one regex), an empty group named `tag` at its end (the
    group that closes last names the branch, and a branch that starts with a literal is
    skipped at its first character)."""
    assert pattern.pattern.startswith("^\\s*") and not pattern.flags & ~re.UNICODE, pattern.pattern
    return re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern[len("^\\s*"):]) + f"(?P<{tag}>)"


@functools.cache
def _seed_line_pattern() -> re.Pattern[str]:
    """All of `_seed_lines` in one regex: one match per line says which one a line is (`lastgroup`),
    instead of trying the patterns one by one; the named pattern is then matched for its groups.
    Compiled when first needed, as `_head_scan`."""
    return re.compile(r"^\s*(?:" + "|".join(_branch(tag, pattern) for tag, pattern, _what in _seed_lines()) + ")")


@functools.lru_cache(maxsize=4096)
def _seed_line(line: str) -> tuple[str, str, re.Match[str]] | None:
    """(tag, what it gives, the match of its own pattern) of a seed log line, or None (also for a
    line over 2,000 characters: no seed line is that long): a pure function of the text, kept
    for the lines that repeat from log to log (`Max epochs: 50`, `  SLURM_NNODES: 1`, banners)."""
    found = _seed_line_pattern().match(line) if len(line) <= 2000 else None
    if found is None:
        return None
    tag = found.lastgroup or ""
    pattern, what = _seed_branches()[tag]
    m = pattern.match(line)  # the same pattern as the branch that matched: never None
    return (tag, what, m) if m is not None else None


@functools.cache
def _once_per_text() -> frozenset[str]:
    """The tags of the lines whose handling only fills what is still empty (or sets a flag): a
    second copy of the same line does nothing, so it is skipped."""
    resources = (tag for tag, _pattern, _what in _seed_lines() if tag.startswith("res"))
    return frozenset({"slurm", *resources, "job_id", "max_epochs", "complete", *(f"setting{i}" for i in range(4))})


def _first_failure(lines: list[str]) -> tuple[str, int] | None:
    """(status, line number) of the first line that is none of `_seed_lines` but says the run
    ended early (`_FAILURE_LINES`, first pattern first); only asked when a log has no time."""
    seed_line = _seed_line_pattern()
    for i, line in enumerate(lines):
        if len(line) > 2000 or seed_line.match(line):
            continue
        for pattern, status in _FAILURE_LINES:
            if pattern.search(line):
                return status, i + 1
    return None


def _lines_to_visit(lines: list[str]) -> tuple[dict[str, tuple[str, str, re.Match[str]]], list[int]]:
    """What each distinct line of a log is (`_seed_line`), and the indices of the lines to handle,
    in order: a once-per-text line at its first copy only, the others at every copy. Every rank
    prints the same blocks again, so most lines of a seed 002 log are copies: they are found with
    dictionary and set look-ups over the whole list, not by a Python step per line."""
    first = dict(zip(reversed(lines), range(len(lines) - 1, -1, -1)))  # each distinct line -> its first index
    # what each distinct line is, by one C-level map over them (most lines of a log are none)
    kinds = {line: kind for line, kind in zip(first, map(_seed_line, first)) if kind is not None}
    once = _once_per_text()
    visits = [first[line] for line, kind in kinds.items() if kind[0] in once]
    every = {line for line, kind in kinds.items() if kind[0] not in once}
    if every:
        visits.extend(itertools.compress(range(len(lines)), map(every.__contains__, lines)))
    visits.sort()
    return kinds, visits


def parse(text: str, label: str, path: Path | None, findings: list[Finding]) -> list[Run] | None:
    """Seed 002 / seed 004 logs (and the job-script echo lines around them)."""
    from gpuscope.parsers.runlogs import formats as fmt
    from gpuscope.parsers.runlogs.run import Run, benchmark_name, put, time_value

    lines = text.splitlines()  # splits at \r too: a progress bar's redraws are lines of their own
    run = Run(label, "seed004")
    totals: list[tuple[float, int, str]] = []  # (seconds, line, unit)
    units: set[str] = set()
    table_runs: list[Run] = []
    seen002 = seen004 = False
    duration: tuple[float, int] | None = None
    epoch = 0
    train_total = None
    loss_sum: dict[int, list[float]] = {}
    test_rows: dict[int, list[tuple[float, float]]] = {}
    rate = math.nan
    epoch_copies = 0
    kinds, visits = _lines_to_visit(lines)
    for i in visits:
        line = lines[i]
        tag, what, m = kinds[line]
        line_no = i + 1
        # the branches in the order of how often a log has their lines (each rank prints the summary)
        if tag == "slurm":
            name, value = m.group("name"), m.group("value")
            kind = fmt.SLURM_VARIABLES.get(name)
            if kind == "gpu_ids":
                if "gpus_per_node" not in run.echoed:
                    ids = [x for x in value.split(",") if x.strip()]
                    put(run.echoed, "gpus_per_node", len(ids), f"{name}={value} echoed on line {line_no}")
            elif kind:
                if kind not in run.echoed:
                    put(run.echoed, kind, value.split("(")[0], f"{name}={value} echoed on line {line_no}")
            elif name in fmt.SLURM_JOB_ID_VARIABLES and run.job_id is None and value.isdigit():
                run.job_id = value
            elif name in fmt.SLURM_JOB_NAME_VARIABLES and run.job_name is None and value != "Not":
                run.job_name = value
        elif tag == "total002":
            seen002 = True
            seconds = time_value(m, label, line_no, findings)
            units.add(m.group("unit").lower().rstrip("s"))
            if m.group("value2") is not None and math.isfinite(seconds):
                per = fmt.unit_seconds(m.group("unit2"))
                other = fmt.to_float(m.group("value2")) * per if per else math.nan
                if per is None or (math.isfinite(other) and abs(other - seconds) > max(0.6, 0.01 * seconds)):
                    findings.append(Finding("warning", "mixed-units", f"line {line_no} gives {m.group('value')} {m.group('unit')} and {m.group('value2')} {m.group('unit2')}, which disagree; the first is used", label, line_no))
            totals.append((seconds, line_no, "Total training time"))
        elif tag == "per_epoch":
            seen002 = True
            if math.isnan(run.epoch_time_s):
                run.epoch_time_s = time_value(m, label, line_no, findings)
        elif tag == "best_loss":
            seen002 = True
            run.quality_name, run.quality, run.quality_higher_is_better = "val_loss", fmt.to_float(m.group("value")), False
        elif tag == "train004":
            seen004 = True
            epoch = int(m.group("epoch"))
            train_total = int(m.group("total"))
            loss_sum.setdefault(epoch, []).append(fmt.to_float(m.group("loss")))
        elif tag == "test004":
            seen004 = True
            total = int(m.group("total"))
            accuracy = int(m.group("correct")) / total if total else math.nan
            key = epoch if epoch else len(test_rows) + 1
            test_rows.setdefault(key, []).append((fmt.to_float(m.group("loss")), accuracy))
        elif tag.startswith("res"):
            if what not in run.counts:
                put(run.counts, what, m.group(1), f"line {line_no}: {line.strip()!r}")
        elif tag == "job_id":
            if run.job_id is None:
                run.job_id = m.group("value")
        elif tag == "table":
            table_runs.extend(_seed_table(lines, i, label, findings))
        elif tag == "total004":
            seen004 = True
            seconds = time_value(m, label, line_no, findings)
            units.add((m.group("unit") or "s").lower().rstrip("s"))
            totals.append((seconds, line_no, "Total Training Time"))
        elif tag == "best_acc":
            if run.quality_name is None:
                run.quality_name, run.quality, run.quality_higher_is_better = "val_acc", fmt.to_float(m.group("value")), True
        elif tag == "max_epochs":
            seen002 = True
            run.settings.setdefault("epochs", int(m.group("value")))
        elif tag.startswith("setting"):
            if what not in run.settings:
                value = m.group("value")
                run.settings[what] = f"PyTorch {value}" if what == "code_version" else fmt.to_float(value)
        elif tag == "duration":
            seconds = time_value(m, label, line_no, findings)
            duration = (seconds, line_no)
        elif tag == "complete":
            seen002 = True
        elif tag == "epochs004":
            seen004 = True
            if run.epochs is None:
                run.epochs = int(m.group("value"))
                run.settings.setdefault("epochs", run.epochs)
            else:
                epoch_copies += 1
        elif tag == "rate004":
            seen004 = True
            rate = fmt.to_float(m.group("value"))

    if not (seen002 or seen004 or totals):
        return table_runs or None
    run.format = "seed002" if seen002 and not seen004 else "seed004"
    # --- the time: one per rank may be printed; the slowest rank bounds the run
    finite = [t for t in totals if math.isfinite(t[0])]
    if finite:
        seconds, line_no, name = max(finite)
        run.time_s = seconds
        run.time_from = f"{name!r} on line {line_no}"
        if len(totals) > 1:
            findings.append(Finding("info", "ranks", f"{len(totals)} copies of {name!r} (one per rank): the slowest, {seconds:.6g} s on line {line_no}, is the run's time", label, line_no, len(totals)))
        if len(units) > 1:
            findings.append(Finding("warning", "mixed-units", f"the time lines use different units ({', '.join(sorted(units))}); all converted to seconds", label))
    elif duration is not None and math.isfinite(duration[0]):
        run.time_s = duration[0]
        run.time_from = f"'Total duration' on line {duration[1]} (job wall time, includes start-up)"
        findings.append(Finding("info", "job-time", f"no training-time line: the job script's 'Total duration' on line {duration[1]} is used, which includes start-up", label, duration[1]))
    else:
        run.status = "no-timing"
        failure = _first_failure(lines)
        if failure is not None:
            run.status = failure[0]
            findings.append(Finding("warning", run.status, f"the run ended early ({run.status}, line {failure[1]}) and printed no training time: time unknown", label, failure[1]))
        else:
            findings.append(Finding("warning", "no-timing", "no timing line ('Total training time' / 'Total Training Time'): time unknown, the rest is kept", label))
    # --- epochs and curves
    if run.format == "seed002" and run.epochs is None and run.settings.get("epochs") is not None and math.isfinite(run.time_s):
        run.epochs = int(run.settings["epochs"])
    if math.isfinite(rate) and rate > 0 and run.epochs and math.isfinite(run.time_s) and run.time_s > 0:
        implied = run.epochs / run.time_s
        if abs(implied - rate) > 0.02 * rate:
            findings.append(Finding("warning", "inconsistent", f"'Total epochs/s: {rate:g}' disagrees with {run.epochs} epochs in {run.time_s:g} s ({implied:g}/s)", label))
    for ep, values in sorted(loss_sum.items()):
        finite_values = [v for v in values if math.isfinite(v)]
        if finite_values:
            run.curve.append((ep, "loss", sum(finite_values) / len(finite_values)))
    for ep, pairs in sorted(test_rows.items()):
        losses = [p[0] for p in pairs if math.isfinite(p[0])]
        accs = [p[1] for p in pairs if math.isfinite(p[1])]
        if losses:
            run.curve.append((ep, "val_loss", sum(losses) / len(losses)))
        if accs:
            run.curve.append((ep, "accuracy", sum(accs) / len(accs)))
    if test_rows and run.quality_name is None:
        last = [p[1] for p in test_rows[max(test_rows)] if math.isfinite(p[1])]
        if last:
            run.quality_name, run.quality, run.quality_higher_is_better = "accuracy", sum(last) / len(last), True
    if train_total and run.epochs and math.isfinite(run.time_s):
        run.samples = float(train_total * run.epochs)
    run.benchmark = benchmark_name(run.job_name)
    return [run, *table_runs]
