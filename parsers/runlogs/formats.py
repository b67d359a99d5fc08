"""Provides the line patterns and format knowledge `runlogs` reads run logs with, in one place.

Sources (../shared/research/formats-scaling.md): seed 002 (`mvigl/MPCDF_tutorial` `src/train.py`
and its job scripts, §4.1), seed 004 (`mit-orcd/orcd-tutorials` `mnist_timed.py`, §4.2), MLPerf
`:::MLLOG` lines (mlcommons/logging, §3.3), ReFrame perflogs 3.x / 4.0-4.2 / >= 4.3 (§3.3),
sacct `-p` / `-P` (§2.1), the variables a Slurm job sees (§2.5) and `#SBATCH` options
(sbatch.1). Nothing here reads files: these are names, regular expressions and small pure
helpers (unit conversion, Slurm time strings, state names).
"""

from __future__ import annotations

import functools
import math
import re

NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf"
"""A number as Python's str()/format() prints one (also nan, which a crashed run prints)."""

# ---------------------------------------------------------------- time units
TIME_UNITS: dict[str, float] = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
}
"""Seconds per unit, for every spelling of a time unit the readers accept."""


@functools.lru_cache(maxsize=256)
def unit_seconds(unit: str | None) -> float | None:
    """Seconds in one `unit` (case-insensitive, `(s)` / `[ms]` brackets allowed); None if not a time
    unit. Kept per spelling: every time line of every log asks, in a handful of spellings."""
    if unit is None:
        return None
    u = unit.strip().strip("()[]").strip()
    return TIME_UNITS.get(u) if u in TIME_UNITS else TIME_UNITS.get(u.lower())


def to_float(text: object) -> float:
    """float, or NaN for anything that is not a number (never raises)."""
    if type(text) is str:  # most calls, from a log's text: no str() and strip() copies unless needed
        try:
            return float(text)
        except ValueError:
            pass  # float() strips less white space than str.strip() (not \x1c-\x1f): tried below
    if isinstance(text, bool):
        return math.nan
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return float(str(text).strip())
    except (TypeError, ValueError):
        return math.nan


def to_count(text: object) -> int | None:
    """A resource count (integer >= 1), or None."""
    value = to_float(text)
    if not math.isfinite(value) or value < 1 or value != int(value) or value > 10**9:
        return None
    return int(value)


# ---------------------------------------------------------------- seed 002 (MPCDF tutorial)
SEED002_TOTAL = re.compile(rf"^\s*Total training time:\s*(?P<value>{NUM})\s*(?P<unit>[A-Za-zµ]+)(?:\s*\(\s*(?P<value2>{NUM})\s*(?P<unit2>[A-Za-zµ]+)\s*\))?\s*$")
SEED002_PER_EPOCH = re.compile(rf"^\s*Time per epoch:\s*(?P<value>{NUM})\s*(?P<unit>[A-Za-zµ]+)\s*$")
SEED002_BEST_LOSS = re.compile(rf"^\s*Best validation loss:\s*(?P<value>{NUM}|None)\s*$")
SEED002_BEST_ACC = re.compile(rf"^\s*Best validation acc(?:uracy)?:\s*(?P<value>{NUM}|None)\s*%?\s*$")
SEED002_MAX_EPOCHS = re.compile(r"^\s*Max epochs:\s*(?P<value>\d+)\s*$")
SEED002_BATCH = re.compile(r"^\s*Batch size \(per GPU\):\s*(?P<value>\d+)\s*$")
SEED002_EFFECTIVE_BATCH = re.compile(r"^\s*Effective batch size[^:]*:\s*(?P<value>\d+)\s*$")
SEED002_LEARNING_RATE = re.compile(rf"^\s*Learning rate:\s*(?P<value>{NUM})\s*$")
SEED002_TORCH = re.compile(r"^\s*PyTorch version:\s*(?P<value>\S+)\s*$")
SEED002_DURATION = re.compile(rf"^\s*Total duration:\s*(?P<value>{NUM})\s*(?P<unit>[A-Za-zµ]+)")
SEED002_COMPLETE = re.compile(r"^\s*TRAINING COMPLETE\s*$")
SEED002_MARKERS = (SEED002_TOTAL, SEED002_PER_EPOCH, SEED002_BEST_LOSS, SEED002_MAX_EPOCHS, SEED002_COMPLETE)
SEED002_TABLE_TITLE = re.compile(r"^\s*BENCHMARK RESULTS SUMMARY\s*$")
SEED002_TABLE_COLUMNS = {
    # header text in seed 002's table -> our column
    "job id": "job_id", "configuration": "configuration", "gpus": "gpus", "nodes": "nodes",
    "time (s)": "time_s", "time/epoch (s)": "epoch_time_s", "val loss": "val_loss", "val acc": "val_acc",
}

# Log lines that state the resources of the run itself (seed 002's job-script echo and train.py).
LOG_RESOURCE_LINES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*Total GPUs:\s*(\d+)\s*$"), "gpus"),
    (re.compile(r"^\s*Number of GPUs:\s*(\d+)\s*$"), "gpus_per_node"),  # torch.cuda.device_count(): this node
    (re.compile(r"^\s*Number of nodes:\s*(\d+)\s*$"), "nodes"),
    (re.compile(r"^\s*Number of tasks:\s*(\d+)\s*$"), "processes"),
    (re.compile(r"^\s*WORLD_SIZE\s*[:=]\s*(\d+)\s*$"), "processes"),
    (re.compile(r"^\s*(?:export\s+)?OMP_NUM_THREADS\s*[:=]\s*(\d+)\s*$"), "threads"),
)

# ---------------------------------------------------------------- seed 004 (MIT ORCD tutorial)
SEED004_TOTAL = re.compile(rf"^\s*Total Training Time:\s*(?P<value>{NUM})\s*(?P<unit>[A-Za-zµ]+)?\s*$")
SEED004_EPOCHS = re.compile(r"^\s*Number of epochs:\s*(?P<value>\d+)\s*$")
SEED004_RATE = re.compile(rf"^\s*Total epochs/s:\s*(?P<value>{NUM})\s*$")
SEED004_TRAIN = re.compile(rf"^\s*Train Epoch:\s*(?P<epoch>\d+)\s*\[(?P<seen>\d+)/(?P<total>\d+)[^\]]*\]\s*Loss:\s*(?P<loss>{NUM})\s*$")
SEED004_TEST = re.compile(rf"^\s*Test set: Average loss:\s*(?P<loss>{NUM}),\s*Accuracy:\s*(?P<correct>\d+)/(?P<total>\d+)")
SEED004_MARKERS = (SEED004_TOTAL, SEED004_EPOCHS, SEED004_RATE, SEED004_TRAIN, SEED004_TEST)

# ---------------------------------------------------------------- Slurm environment echoes
SLURM_ECHO = re.compile(r"^\s*(?:export\s+|\w+:\s+)?(?P<name>SLURM_[A-Z_]+)\s*[:=]\s*(?P<value>\S+)\s*$")
"""`SLURM_NTASKS=2` (env | grep), `  SLURM_NTASKS: 2` (seed 002's train.py), `export ...`."""
SLURM_VARIABLES: dict[str, str] = {
    # variable -> what its value counts
    "SLURM_JOB_NUM_NODES": "nodes", "SLURM_NNODES": "nodes",
    "SLURM_NTASKS": "processes", "SLURM_NPROCS": "processes",
    "SLURM_NTASKS_PER_NODE": "tasks_per_node",
    "SLURM_CPUS_PER_TASK": "threads",
    "SLURM_GPUS": "gpus", "SLURM_GPUS_ON_NODE": "gpus_per_node", "SLURM_GPUS_PER_NODE": "gpus_per_node",
    "SLURM_JOB_GPUS": "gpu_ids", "SLURM_STEP_GPUS": "gpu_ids",
}
SLURM_JOB_ID_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOBID")
SLURM_JOB_NAME_VARIABLES = ("SLURM_JOB_NAME",)
JOB_ID_LINE = re.compile(r"^\s*Job ID:\s*(?P<value>\d+(?:_\d+)?)\s*$")
JOB_ID_IN_NAME = re.compile(r"(?:slurm|log|job|out)[^0-9]*?[-_.](?P<id>\d{2,})(?:_\d+)?(?:\.\w+)?$", re.IGNORECASE)

# ---------------------------------------------------------------- #SBATCH options
SBATCH_LINE = re.compile(r"^\s*#SBATCH\s+(?P<options>.*?)\s*(?:#.*)?$")
SBATCH_OPTIONS: dict[str, str] = {
    # option -> what its value counts (per-node / per-task kinds are multiplied out later)
    "-N": "nodes", "--nodes": "nodes",
    "-n": "processes", "--ntasks": "processes",
    "--ntasks-per-node": "tasks_per_node",
    "-c": "threads", "--cpus-per-task": "threads",
    "-G": "gpus", "--gpus": "gpus",
    "--gpus-per-node": "gpus_per_node", "--gres": "gpus_per_node",
    "--gpus-per-task": "gpus_per_task",
    "-J": "job_name", "--job-name": "job_name",
    "-o": "output", "--output": "output",
}
SCRIPT_SUFFIXES = (".sh", ".sbatch", ".slurm", ".job", ".bash")
OUTPUT_PATTERN_FIELDS = re.compile(r"%(?:\d*)[jxAaNnustJ%]")
"""Replacement symbols of `#SBATCH -o` file names (sbatch.1, "filename pattern")."""


def gpus_of_spec(spec: str) -> int | None:
    """GPU count of a `--gres` / `--gpus*` value: `gpu:a100:4`, `gpu:4`, `a100:2`, `4`, `gres/gpu:1`."""
    spec = spec.strip()
    for part in spec.split(","):
        part = part.strip().removeprefix("gres/").removeprefix("gres:")
        if part.isdigit():
            return to_count(part)
        fields = part.split(":")
        if fields[0] == "gpu" or (len(fields) == 2 and fields[1].isdigit()):
            last = fields[-1].split("(")[0]
            return to_count(last) if last.isdigit() else (1 if fields[0] == "gpu" and len(fields) <= 2 else None)
    return None


# ---------------------------------------------------------------- names of files and folders
@functools.cache
def name_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """`4gpu`, `gpus-4`, `n8`, `2nodes`, `threads-16`, `16t`, `c4`, `np64`, `ranks_8` ... in a file
    or folder name: (pattern, kind), in the order they are tried. Compiled when first used: case-
    insensitive classes are the slowest patterns to compile, and most commands never read a name."""
    return tuple(
        (re.compile(r"(?<![A-Za-z0-9])" + body + r"(?![A-Za-z0-9])", re.IGNORECASE), kind)
        for body, kind in (
            (r"(\d+)[-_]?gpus?", "gpus"), (r"gpus?[-_]?(\d+)", "gpus"), (r"(\d+)g", "gpus"),
            (r"(\d+)[-_]?nodes?", "nodes"), (r"nodes?[-_]?(\d+)", "nodes"), (r"n(\d+)", "nodes"), (r"(\d+)n", "nodes"),
            (r"(\d+)[-_]?threads?", "threads"), (r"threads?[-_]?(\d+)", "threads"), (r"(\d+)t", "threads"),
            (r"omp[-_]?(\d+)", "threads"), (r"c(\d+)", "threads"), (r"(\d+)[-_]?cpus?", "threads"), (r"cpus?[-_]?(\d+)", "threads"),
            (r"(\d+)[-_]?(?:procs?|ranks?|tasks?|processes)", "processes"), (r"(?:procs?|ranks?|tasks?|np|processes)[-_]?(\d+)", "processes"),
            (r"(\d+)[-_]?workers?", "processes"), (r"workers?[-_]?(\d+)", "processes"),
        )
    )


RESOURCE_FIELDS = ("threads", "processes", "gpus", "nodes")
KIND_PREFERENCE = ("gpus", "nodes", "processes", "threads")
"""The kind a series scales over: the first that varies between its runs, else the first known."""

# ---------------------------------------------------------------- MLPerf (the line tag: mlperf.MLLOG_TAG)
MLPERF_SETTINGS: dict[str, str] = {
    # MLLOG key -> settings column (set_ prefix added by the reader)
    "global_batch_size": "global_batch_size", "local_batch_size": "local_batch_size", "d_batch_size": "local_batch_size",
    "opt_name": "optimizer", "opt_base_learning_rate": "learning_rate", "lars_opt_base_learning_rate": "learning_rate",
    "sgd_opt_base_learning_rate": "learning_rate", "gradient_accumulation_steps": "gradient_accumulation_steps",
    # submission_platform is not a setting: it names the resources ('8xNVIDIA DGX H100'), which
    # differ between the configurations by design; it only gives a node count (below).
    "submission_division": "division", "submission_org": "org",
    "max_sequence_length": "max_sequence_length", "epoch_count": "epoch_count",
}
MLPERF_QUALITY_KEYS = ("eval_accuracy", "eval_error", "eval_loss")
MLPERF_QUALITY_TARGETS: dict[str, tuple[float, bool]] = {
    # submission_benchmark -> (quality target, higher is better), as MLPerf Training's closed
    # division checks `eval_accuracy` (mlcommons/logging, compliance_checker/training_3.1.0/
    # closed_*.yaml). The logs do not print the target; gpt3 and rnnt log a loss and a WER
    # under the same key, so the direction comes from here too.
    "resnet": (0.759, True), "bert": (0.720, True), "ssd": (0.340, True), "unet3d": (0.908, True),
    "dlrm_dcnv2": (0.80275, True), "dlrm": (0.8025, True), "minigo": (0.5, True),
    "gpt3": (2.69, False), "rnnt": (0.058, False),
}
MLPERF_PLATFORM_NODES = re.compile(r"^\s*(\d+)\s*x", re.IGNORECASE)
"""`submission_platform` values such as `8xNVIDIA DGX H100` start with the node count."""

# ---------------------------------------------------------------- sacct
SACCT_STATES: dict[str, str] = {
    "COMPLETED": "ok", "FAILED": "failed", "OUT_OF_MEMORY": "failed", "NODE_FAIL": "failed", "BOOT_FAIL": "failed",
    "CANCELLED": "cancelled", "PREEMPTED": "cancelled", "REVOKED": "cancelled",
    "TIMEOUT": "timeout", "DEADLINE": "timeout",
}
SACCT_UNFINISHED = ("RUNNING", "PENDING", "REQUEUED", "SUSPENDED", "RESIZING", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT")
SACCT_ELAPSED = re.compile(r"^(?:(?P<d>\d+)-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)$")


def slurm_seconds(text: str) -> float:
    """`D-HH:MM:SS`, `HH:MM:SS`, `MM:SS.mmm` -> seconds; NaN for `UNLIMITED`, `INVALID`, ''."""
    match = SACCT_ELAPSED.match(text.strip())
    if not match:
        return math.nan
    d, h, m, s = (match.group(k) for k in ("d", "h", "m", "s"))
    return int(d or 0) * 86400 + int(h or 0) * 3600 + int(m) * 60 + float(s)


def tres_value(tres: str, name: str) -> int | None:
    """`gres/gpu=4` from `billing=8,cpu=8,gres/gpu:a100=4,gres/gpu=4,node=1`; the typed entry only when the untyped one is missing."""
    typed = None
    for item in tres.split(","):
        key, _, value = item.partition("=")
        key = key.strip()
        if key == name:
            return to_count(value)
        if key.startswith(name + ":") and typed is None:
            typed = to_count(value)
    return typed


# ---------------------------------------------------------------- ReFrame perflogs
REFRAME3_LINE = re.compile(r"^(?P<time>[^|]+)\|reframe (?P<version>[^|]+)\|(?P<info>[^|]+)\|jobid=(?P<jobid>[^|]*)\|(?P<var>[^=|]+)=(?P<value>[^|]*)\|ref=(?P<ref>[^|]*)\|(?P<unit>[^|]*)$")
REFRAME_PARAMETER = re.compile(r"%(?P<name>[\w.]+)=(?P<value>[^\s%]+)")
"""ReFrame >= 4 display names carry test parameters: `stream_test %num_tasks=4 %num_threads=2`."""
REFRAME_RESOURCE_COLUMNS: dict[str, str] = {
    "num_tasks": "processes", "num_cpus_per_task": "threads", "num_gpus_per_node": "gpus_per_node",
    "num_tasks_per_node": "tasks_per_node", "num_nodes": "nodes",
}
REFRAME_RESULTS = {"pass": "ok", "fail": "failed", "failure": "failed"}

# ---------------------------------------------------------------- plain tables (CSV / JSON)
TABLE_RESOURCE_COLUMNS: dict[str, str] = {
    "gpus": "gpus", "gpu": "gpus", "num_gpus": "gpus", "n_gpus": "gpus", "ngpus": "gpus",
    "nodes": "nodes", "node": "nodes", "num_nodes": "nodes", "n_nodes": "nodes", "nnodes": "nodes",
    "threads": "threads", "num_threads": "threads", "n_threads": "threads", "omp_num_threads": "threads",
    "cpus": "threads", "cores": "threads", "cpus_per_task": "threads",
    "processes": "processes", "procs": "processes", "ranks": "processes", "n_ranks": "processes", "tasks": "processes",
    "ntasks": "processes", "num_tasks": "processes", "num_processes": "processes", "np": "processes",
    "workers": "processes", "world_size": "processes",
}
TABLE_TIME_COLUMN = re.compile(r"^(?:time|elapsed|runtime|run_time|wall_?time|wall_?clock|duration|total_time|training_time|time_to_train|seconds|ttt)(?:[-_ ]*(?:\(|\[)?(?P<unit>[a-zµ]+)(?:\)|\])?)?$", re.IGNORECASE)
TABLE_QUALITY_COLUMNS: dict[str, bool] = {
    # column -> higher is better
    "accuracy": True, "acc": True, "val_acc": True, "eval_accuracy": True, "top1": True,
    "loss": False, "val_loss": False, "eval_loss": False, "error": False,
}
TABLE_TEXT_COLUMNS = {"benchmark": "benchmark", "name": "benchmark", "test": "benchmark", "app": "benchmark", "application": "benchmark"}
TABLE_SETTING_COLUMNS = ("batch_size", "global_batch_size", "local_batch_size", "precision", "learning_rate", "lr", "dataset", "code_version", "version", "epochs", "problem_size", "size")
TABLE_STATUS_COLUMNS = ("status", "state", "result")
VALUE_WITH_UNIT = re.compile(rf"^\s*(?P<value>{NUM})\s*(?P<unit>[A-Za-zµ]+)?\s*$")


def normalise_column(name: str) -> str:
    """`Time (s)` -> `time (s)`, `Num GPUs` -> `num_gpus`: lower case, spaces to `_` outside a unit bracket."""
    name = name.strip().lower()
    match = re.match(r"^(.*?)\s*([(\[][^)\]]*[)\]])$", name)
    if match:
        return re.sub(r"[\s-]+", "_", match.group(1)) + " " + match.group(2)
    return re.sub(r"[\s-]+", "_", name)
