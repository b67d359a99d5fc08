"""Provides the metric maps: which PromQL query gives which of gpuscope's readings, as TOML.

    maps = builtin_maps()                         # gpuscope, dcgm-exporter, jobstats, node_exporter
    site = load_map("site.toml")                  # MapError says what is wrong, with the file
    site.query(family, nodes=["n1"], job="123", range_s=60)

A map names the label that says a series' node (`node_label`; its domain and `:port` are
dropped), the label that numbers a GPU (`gpu_label`) or a core (`cpu_label`), optionally the
label an exporter puts the Slurm job in (`job_label`, dcgm-exporter's `hpc_job`), and one query
per reading in three sections:

    [gpu]   GpuSample's fields:  util_gpu = "DCGM_FI_DEV_GPU_UTIL{$match}"
    [node]  the host's:          memory_used = { query = "...", scale = 1024 }, cpu_percent per core
    [job]   the job's on a node: busy_cores, cpus_allocated, memory_used, memory_limit, memory_peak

`scale` turns the exporter's unit into gpuscope's (bytes, W, mJ, percent 0-100, cores). In a
query, `$match` is the label matcher of the job's nodes (and of the job, when the map has a
`job_label` and its series carry it), `$nodes` a regex of the node names, `$job` the job id and
`$range` a window for rate() (a few steps, at least two scrapes).
"""

from __future__ import annotations

import difflib
import math
import re
import string
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

GPU_FIELDS = ("util_gpu", "util_memory", "memory_used", "memory_total", "temperature_c", "power_w", "power_limit_w", "sm_clock_mhz",
              "memory_clock_mhz", "sm_clock_max_mhz", "memory_clock_max_mhz", "energy_mj", "sm_active_pct", "sm_occupancy_pct",
              "tensor_active_pct", "dram_bw_pct", "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "nvlink_tx_bytes_per_s",
              "nvlink_rx_bytes_per_s")
"""GpuSample's numeric fields a map may fill."""
NODE_FIELDS = ("cpu_percent", "cpu_count", "simulated", "load1", "load5", "load15", "memory_total", "memory_used", "memory_available", "memory_cached",
               "memory_buffers", "memory_swap_total", "memory_swap_used")
"""The host's readings: `cpu_percent` per core (by `cpu_label`), the rest one value a node
(`simulated`: 1 when the GPUs are simulated)."""
JOB_FIELDS = ("busy_cores", "cpus_allocated", "memory_used", "memory_limit", "memory_peak", "gpus_allocated")
"""The job's own readings on a node (a cgroup exporter's, or gpuscope's per-job series)."""
SECTIONS = {"gpu": GPU_FIELDS, "node": NODE_FIELDS, "job": JOB_FIELDS}
KEYS = {"name": str, "about": str, "node_label": str, "gpu_label": str, "cpu_label": str, "job_label": str, "uuid_label": str, "model_label": str}
"""A map's top-level settings (besides its sections) and their types."""
PLACEHOLDERS = frozenset({"match", "nodes", "job", "range"})
BUILTIN = ("gpuscope", "dcgm", "jobstats", "node_exporter")
"""The built-in maps, in the order they are tried."""
MAX_MAP_BYTES = 1 << 20
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class MapError(Exception):
    """A map that cannot be used: the message names the file and what is wrong."""


@dataclass(frozen=True)
class Family:
    """One reading: its section and field, the query template and the factor to gpuscope's unit."""

    section: str
    field: str
    query: str
    scale: float = 1.0


@dataclass(frozen=True)
class MetricMap:
    name: str
    source: str
    """Where it came from: 'built in' or the file's path."""
    families: tuple[Family, ...]
    about: str = ""
    node_label: str = "instance"
    gpu_label: str = "gpu"
    cpu_label: str = "cpu"
    job_label: str | None = None
    uuid_label: str | None = None
    model_label: str | None = None

    def section(self, name: str) -> list[Family]:
        return [f for f in self.families if f.section == name]

    def query(self, family: Family, nodes: Sequence[str], job: str | None, range_s: float, by_job: bool = True) -> str:
        """`family`'s query for the job's `nodes` (and `job` when `by_job` and the map has a job label)."""
        regex = "|".join(re.escape(n).replace("\\", "\\\\") for n in nodes) or ".*"
        match = f'{self.node_label}=~"({regex})([.][^:]*)?(:[0-9]+)?"'
        if by_job and self.job_label and job:
            match += f',{self.job_label}="{job}"'
        return string.Template(family.query).substitute(match=match, nodes=f"({regex})", job=job or "", range=f"{max(1, round(range_s))}s")


def node_of(value: str, nodes: Sequence[str]) -> str | None:
    """Which of the job's `nodes` a node label's value names: `n1`, `n1:9100`, `n1.site.org:9100`
    are all `n1`. None when it names none of them."""
    host, sep, port = value.rpartition(":")
    host = host if sep and port.isdigit() and not value.endswith("]") else value
    if host in nodes:
        return host
    short = host.split(".", 1)[0]
    return short if short in nodes else None


def builtin_maps() -> list[MetricMap]:
    return [builtin(name) for name in BUILTIN]


def builtin(name: str) -> MetricMap:
    text = resources.files("gpuscope.collectors.prometheus").joinpath("maps", f"{name}.toml").read_text(encoding="utf-8")
    return parse_map(text, "built in", name)


def load_map(path: str | Path) -> MetricMap:
    """A site's map from `path` (or a built-in map's name). MapError when it cannot be used."""
    path = str(path)
    if path in BUILTIN and not Path(path).exists():
        return builtin(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MAP_BYTES + 1)
    except FileNotFoundError:
        raise MapError(f"--metric-map {path}: no such file (or a built-in map: {', '.join(BUILTIN)})") from None
    except OSError as exc:
        raise MapError(f"--metric-map {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_MAP_BYTES:
        raise MapError(f"--metric-map {path}: over {MAX_MAP_BYTES // 1024} KiB, not a metric map")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MapError(f"--metric-map {path}: not UTF-8 text (byte {exc.start})") from None
    return parse_map(text, path, Path(path).stem)


def parse_map(text: str, source: str, default_name: str = "map") -> MetricMap:
    """A map from its TOML text; MapError (naming `source`) when a key, type or query is wrong."""
    from gpuscope.metrics.safe_text import clean

    where = f"metric map {clean(source)}" if source != "built in" else f"built-in metric map {default_name}"
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise MapError(f"{where}: not TOML ({clean(exc)})") from None
    settings: dict[str, Any] = {}
    families: list[Family] = []
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise MapError(f"{where}: [{key}] must be a table of field = query")
            families += [_family(where, key, field, spec) for field, spec in value.items()]
        elif key in KEYS:
            if not isinstance(value, str) or not value:
                raise MapError(f"{where}: {key} must be a non-empty string")
            if key.endswith("_label") and not _LABEL.fullmatch(value):
                raise MapError(f"{where}: {key} = {clean(value)!r} is not a Prometheus label name")
            settings[key] = value
        else:
            raise MapError(f"{where}: unknown key {clean(key)!r}{_close(key, [*KEYS, *SECTIONS])} (keys: {', '.join([*KEYS, *SECTIONS])})")
    if not families:
        raise MapError(f"{where}: no queries (put them in [gpu], [node] or [job])")
    name = settings.pop("name", default_name)
    return MetricMap(clean(name), source, tuple(families), **settings)


def _family(where: str, section: str, field: Any, spec: Any) -> Family:
    from gpuscope.metrics.safe_text import clean

    if field not in SECTIONS[section]:
        raise MapError(f"{where}: [{section}] has no field {clean(field)!r}{_close(field, SECTIONS[section])} (fields: {', '.join(SECTIONS[section])})")
    scale: Any = 1.0
    if isinstance(spec, dict):
        unknown = set(spec) - {"query", "scale"}
        if unknown:
            raise MapError(f"{where}: [{section}] {field}: unknown key {clean(sorted(unknown)[0])!r} (a query and a scale)")
        query, scale = spec.get("query"), spec.get("scale", 1.0)
    else:
        query = spec
    if not isinstance(query, str) or not query.strip():
        raise MapError(f"{where}: [{section}] {field}: the query must be a non-empty string")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise MapError(f"{where}: [{section}] {field}: scale must be a positive number")
    try:
        names = {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(query) if m.group("invalid") is None}
        if any(m.group("invalid") is not None for m in string.Template.pattern.finditer(query)):
            raise ValueError("a $ that is no placeholder")
    except ValueError as exc:
        raise MapError(f"{where}: [{section}] {field}: {exc} (write $$ for a $)") from None
    names.discard(None)
    if unknown := names - PLACEHOLDERS:
        raise MapError(f"{where}: [{section}] {field}: unknown placeholder ${clean(sorted(unknown)[0])} (placeholders: $match, $nodes, $job, $range)")
    return Family(section, field, query.strip(), float(scale))


def _close(word: Any, words: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word), list(words), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
