"""Provides the PyTorch profiler (Kineto / Chrome trace JSON) reader: one row per GPU activity.

    from gpuscope.parsers.profilers import torch_trace
    result = torch_trace.read_kernels("rank0.pt.trace.json.gz")   # -> KernelRead

Format: shared/research/profile-anchors.md §3. `.json` and `.json.gz` (gzip is detected from the
magic bytes, not the name). Rows come from events whose `cat` is `kernel`, `gpu_memcpy`,
`gpu_memset` or, in CUPTI counter mode, `cuda_profiler_range`.

Columns (canonical, see kernel_table): `ts`/`dur` are microseconds in the file; numbers are
parsed as Decimal so `start_ns` is exact even at ~1.7e15 µs (float64 would lose ~0.25 µs).
Extra columns after the canonical ones: `category`, `correlation`, `external_id`, `cpu_op`.

How `op` is resolved (kernels):
  1. kernel `args.correlation` -> the `cuda_runtime` / `cuda_driver` event with the same
     correlation (the launch call, on a CPU thread);
  2. the innermost `cpu_op` on the same (pid, tid) whose [ts, ts + dur] contains the launch's
     `ts` (ends inclusive; innermost = the most recently opened op still open);
  3. if no op contains it: the `cpu_op` whose `External id` equals the launch's (then the
     kernel's own) `External id`.
  Unresolved kernels keep `op` null and are counted in one info finding.
Memcpy / memset rows get `op` = 'memcpy' / 'memset' (the launching CPU op is in `cpu_op`), the
`direction` from the name (`Memcpy HtoD (Pageable -> Device)` -> HtoD) and `bytes` from args.

CUPTI counter mode (`profiler_measure_per_kernel=True`): kernels appear as
`cuda_profiler_range` events without correlation ids; the i-th range is paired with the i-th
kernel-launch runtime call by time order (the rule HTA uses), which gives `op`. `flops` is
measured from the SASS counters: 2 x (ffma + hfma + dfma) + fadd + fmul + hadd + hmul + dadd +
dmul (`smsp__sass_thread_inst_executed_op_*_pred_on.sum`). The ranges' timestamps are those of
the replayed measurement, not the kernel's run, so `duration_ns` is null there (the range's
duration is kept in `range_ns`).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, empty, file_read
from gpuscope.parsers.files import MAX_LINES, display_name, head_text, read_bytes, too_many_lines

MAX_JSON_VALUES = 5 * MAX_LINES
"""A trace with more values than this is refused before json.loads turns each into an object
(about 100 bytes each); a real trace has some 15 per event."""

SOURCE = "torch_trace"
EXTRA_COLUMNS = ("category", "correlation", "external_id", "cpu_op", "range_ns")
GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
COUNTER_CAT = "cuda_profiler_range"
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "runtime", "driver"}
CPU_OP_CATS = {"cpu_op", "operator"}
LAUNCH_NAMES = re.compile(r"^(cudaLaunchKernel|cuLaunchKernel|cudaLaunchKernelExC?|cuLaunchKernelEx|cudaLaunchCooperativeKernel|hipLaunchKernel|hipExtLaunchKernel|hipModuleLaunchKernel)")
DIRECTION = re.compile(r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|DtoA|AtoD|AtoH|HtoA|AtoA)\b")
SASS_PREFIX = "smsp__sass_thread_inst_executed_op_"
SASS_WEIGHTS = {f"{p}{op}": (2 if op == "fma" else 1) for p in "hfd" for op in ("fma", "add", "mul")}


def _decimal(value: Any) -> Decimal | None:
    """A finite Decimal from an int, Decimal, float or numeric string; None otherwise."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, Decimal):
            out = value
        elif isinstance(value, int):
            out = Decimal(value)
        elif isinstance(value, float):
            out = Decimal(repr(value))
        elif isinstance(value, str):
            out = Decimal(value.strip())
        else:
            return None
    except (InvalidOperation, ValueError):
        return None
    return out if out.is_finite() else None


INT64_LIMIT = 2**63 - 1


def _fits(n: int) -> int | None:
    return n if -INT64_LIMIT <= n <= INT64_LIMIT else None


def _us_to_ns(value: Any) -> int | None:
    if type(value) is int:  # a JSON integer (most timestamps and ids) is exact already: no Decimal
        return _fits(value * 1000)
    d = _decimal(value)
    if d is None or abs(d) > Decimal(INT64_LIMIT) / 1000:
        return None
    return _fits(int((d * 1000).to_integral_value()))


def _int(value: Any) -> int | None:
    if type(value) is int:
        return _fits(value)
    d = _decimal(value)
    if d is None or abs(d) > INT64_LIMIT or d != d.to_integral_value():
        return None
    return int(d)


def _number(value: Any) -> float | None:
    d = _decimal(value)
    if d is None:
        return None
    out = float(d)
    return out if math.isfinite(out) else None


def _sass_flops(args: dict[str, Any]) -> float | None:
    total, seen = Decimal(0), False
    for key, value in args.items():
        if not (isinstance(key, str) and key.startswith(SASS_PREFIX)):
            continue
        short = key[len(SASS_PREFIX):].split("_pred_on")[0]
        weight = SASS_WEIGHTS.get(short)
        d = _decimal(value)
        if weight is None or d is None:
            continue
        total += weight * d
        seen = True
    out = float(total) if seen else None
    return out if out is not None and math.isfinite(out) else None


def _direction(name: str) -> str | None:
    match = DIRECTION.search(name)
    return match.group(1) if match else None


class _OpIndex:
    """cpu_op events per (pid, tid), answering 'innermost op open at time t'."""

    def __init__(self, ops: list[tuple[Any, Any, int, int, str, int | None]]) -> None:
        self.by_thread: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
        self.by_external: dict[int, str] = {}
        for pid, tid, start, end, name, ext in ops:
            self.by_thread[(str(pid), str(tid))].append((start, -end, name))
            if ext is not None:
                self.by_external.setdefault(ext, name)
        self.starts: dict[tuple[str, str], list[int]] = {}
        for key, rows in self.by_thread.items():
            rows.sort()
            self.starts[key] = [r[0] for r in rows]

    def containing(self, pid: Any, tid: Any, t: int) -> str | None:
        key = (str(pid), str(tid))
        rows = self.by_thread.get(key)
        if not rows:
            return None
        i = bisect.bisect_right(self.starts[key], t) - 1
        # walk back over ops opened at or before t: with nested ops the latest-opened one that
        # is still open at t is the innermost (bounded, so pathological traces stay linear)
        for j in range(i, max(-1, i - 4096), -1):
            if -rows[j][1] >= t:
                return rows[j][2]
        return None

    def external(self, ext: int | None) -> str | None:
        return None if ext is None else self.by_external.get(ext)


def _load(data: bytes, label: str) -> tuple[Any, list[Finding]]:
    try:
        doc = json.loads(data, parse_float=Decimal, parse_constant=lambda _s: None)
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(data.rstrip()) - 1
        what = "truncated JSON (ends before the trace is closed)" if at_end else f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        return None, [Finding("error", "truncated" if at_end else "corrupt", f"not a readable trace: {what}", label)]
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return None, [Finding("error", "corrupt", f"not a readable trace: {type(exc).__name__}: {exc}", label)]
    return doc, []


def _meta(doc: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"format": "pytorch-kineto"}
    props = doc.get("deviceProperties")
    if isinstance(props, list):
        devices = [p for p in props if isinstance(p, dict)]
        if devices:
            meta["device_properties"] = devices
            first = devices[0]
            if isinstance(first.get("name"), str):
                meta["gpu_name"] = first["name"]
            for src, dst in (("numSms", "num_sms"), ("totalGlobalMem", "total_global_mem"),
                             ("computeMajor", "compute_major"), ("computeMinor", "compute_minor")):
                v = _int(first.get(src))
                if v is not None:
                    meta[dst] = v
    for src, dst in (("schemaVersion", "schema_version"), ("traceName", "trace_name")):
        if isinstance(doc.get(src), (str, int)) and not isinstance(doc.get(src), bool):
            meta[dst] = doc[src]
    dist = doc.get("distributedInfo")
    if isinstance(dist, dict):
        for src in ("rank", "world_size", "backend"):
            v = dist.get(src)
            if isinstance(v, (str, int)) and not isinstance(v, bool):
                meta[src] = v
    return meta


KIND = "torch-trace"
TITLE = "PyTorch profiler trace"
VIEW = "kernels"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    text = head_text(head)
    if "traceEvents" in text:
        return "`traceEvents` key: PyTorch profiler trace"
    if text.lstrip().startswith("[{") and re.search(r'"ph"\s*:', text):  # Chrome trace events; plain records have no phase
        return "a JSON list of trace events (`ph` phases): PyTorch profiler trace"
    return None


def describe(head: Head, size: int) -> str:
    return "PyTorch trace"


def read(path: Path, columns: Sequence[str] | None = None) -> FileRead:  # noqa: ARG001 - read whole: every column
    return file_read(read_kernels(path))


def read_kernels(path: str | Path, label: str | None = None) -> KernelRead:
    """Read one Kineto trace; never raises on bad content."""
    path = Path(path)
    label = label or display_name(path)
    data, findings = read_bytes(path, label)
    if data is None:
        return KernelRead(empty(SOURCE), findings, ("flops", "bytes"), {})
    values = data.count(b",") + data.count(b"{") + data.count(b"[")  # at most this many JSON values, each a Python object
    if values > MAX_JSON_VALUES:
        return KernelRead(empty(SOURCE), [too_many_lines(values, MAX_JSON_VALUES, label, "JSON values")], ("flops", "bytes"), {})
    doc, bad = _load(data, label)
    if bad:
        return KernelRead(empty(SOURCE), bad, ("flops", "bytes"), {})
    return parse(doc, label)


def parse(doc: Any, label: str = "") -> KernelRead:
    """Rows from an already-loaded trace (a dict with `traceEvents`, or a bare event list)."""
    findings: list[Finding] = []
    meta: dict[str, Any] = {}
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        meta = _meta(doc)
        if not isinstance(events, list):
            findings.append(Finding("error", "format", "no `traceEvents` list: not a PyTorch profiler / Chrome trace", label))
            return KernelRead(empty(SOURCE), findings, ("flops", "bytes"), meta)
    elif isinstance(doc, list):
        events, meta = doc, {"format": "chrome-trace-array"}
    else:
        findings.append(Finding("error", "format", f"top level is a JSON {type(doc).__name__}, not a trace object", label))
        return KernelRead(empty(SOURCE), findings, ("flops", "bytes"), meta)

    skipped: Counter[str] = Counter()
    gpu: list[dict[str, Any]] = []
    counters: list[dict[str, Any]] = []
    runtime: dict[int, tuple[Any, Any, int, int | None]] = {}
    launches: list[tuple[int, Any, Any, int | None]] = []
    ops: list[tuple[Any, Any, int, int, str, int | None]] = []

    for ev in events:
        if not isinstance(ev, dict):
            skipped["not an object"] += 1
            continue
        cat = ev.get("cat")
        cat = cat.lower() if isinstance(cat, str) else ""
        if ev.get("ph") not in (None, "X"):
            continue
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if cat in GPU_CATS or cat == COUNTER_CAT:
            (gpu if cat in GPU_CATS else counters).append(ev)
        elif cat in RUNTIME_CATS:
            ts = _us_to_ns(ev.get("ts"))
            corr = _int(args.get("correlation"))
            ext = _int(args.get("External id"))
            if ts is None:
                skipped["runtime call without a timestamp"] += 1
                continue
            if corr is not None:
                runtime[corr] = (ev.get("pid"), ev.get("tid"), ts, ext)
            if isinstance(ev.get("name"), str) and LAUNCH_NAMES.match(ev["name"]):
                launches.append((ts, ev.get("pid"), ev.get("tid"), ext))
        elif cat in CPU_OP_CATS:
            ts, dur = _us_to_ns(ev.get("ts")), _us_to_ns(ev.get("dur"))
            name = ev.get("name")
            if ts is None or not isinstance(name, str):
                skipped["cpu_op without a timestamp or name"] += 1
                continue
            ops.append((ev.get("pid"), ev.get("tid"), ts, ts + max(dur or 0, 0), name, _int(args.get("External id"))))

    index = _OpIndex(ops)
    rows: list[dict[str, Any]] = []
    unknown_corr = unresolved = no_ts = neg_dur = no_name = 0

    def resolve(ext: int | None, launch: tuple[Any, Any, int, int | None] | None) -> str | None:
        if launch is not None:
            pid, tid, ts, lext = launch
            return index.containing(pid, tid, ts) or index.external(lext) or index.external(ext)
        return index.external(ext)

    for ev in gpu:
        cat = ev["cat"].lower()
        kind = GPU_CATS[cat]
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        name = ev.get("name") if isinstance(ev.get("name"), str) else None
        if name is None:
            no_name += 1
        start, dur = _us_to_ns(ev.get("ts")), _us_to_ns(ev.get("dur"))
        if start is None:
            no_ts += 1
        if dur is not None and dur < 0:
            neg_dur, dur = neg_dur + 1, None
        corr, ext = _int(args.get("correlation")), _int(args.get("External id"))
        launch = runtime.get(corr) if corr is not None else None
        if corr is not None and launch is None:
            unknown_corr += 1
        cpu_op = resolve(ext, launch)
        if kind == "kernel" and cpu_op is None:
            unresolved += 1
        device = _int(args.get("device"))
        if device is None:
            device = _int(ev.get("pid"))
        stream = _int(args.get("stream"))
        if stream is None:
            stream = _int(ev.get("tid"))
        rows.append({
            "device": None if device is None else str(device), "stream": stream, "kernel": name,
            "start_ns": start, "duration_ns": dur, "flops": None,
            "bytes": _number(args.get("bytes")) if kind != "kernel" else None,
            "op": cpu_op if kind == "kernel" else kind,
            "direction": _direction(name or "") if kind == "memcpy" else None,
            "category": cat, "correlation": corr, "external_id": ext, "cpu_op": cpu_op, "range_ns": None,
        })

    if counters:
        ordered = sorted(launches, key=lambda x: x[0])
        counters_sorted = sorted(counters, key=lambda e: _us_to_ns(e.get("ts")) or 0)
        if len(ordered) != len(counters_sorted):
            findings.append(Finding("warning", "counter-pairing", f"{len(counters_sorted)} counter ranges but {len(ordered)} kernel launches: pairing by order may be off after the shorter list", label))
        missing = 0
        for i, ev in enumerate(counters_sorted):
            args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
            name = ev.get("name") if isinstance(ev.get("name"), str) and ev.get("name") != "__missing__" else None
            if name is None:
                missing += 1
            launch = ordered[i] if i < len(ordered) else None
            cpu_op = None
            if launch is not None:
                ts, pid, tid, lext = launch
                cpu_op = index.containing(pid, tid, ts) or index.external(lext)
            if cpu_op is None:
                unresolved += 1
            device = _int(args.get("device"))
            if device is None:
                device = _int(ev.get("pid"))
            start = _us_to_ns(ev.get("ts"))
            if start is None:
                no_ts += 1
            rows.append({
                "device": None if device is None else str(device), "stream": _int(args.get("stream")),
                "kernel": name, "start_ns": start, "duration_ns": None, "flops": _sass_flops(args),
                "bytes": None, "op": cpu_op, "direction": None, "category": COUNTER_CAT,
                "correlation": _int(args.get("correlation")), "external_id": _int(args.get("External id")),
                "cpu_op": cpu_op, "range_ns": _us_to_ns(ev.get("dur")),
            })
        findings.append(Finding("info", "counter-mode", f"CUPTI counter trace: {len(counters_sorted)} kernel ranges with measured FLOPs; their times are the replayed measurement, so duration_ns is null", label, count=len(counters_sorted)))
        if missing:
            findings.append(Finding("warning", "missing-name", "counter ranges named `__missing__` (the profiler lost the kernel name)", label, count=missing))

    for reason, n in skipped.items():
        findings.append(Finding("warning", "skipped", f"skipped events: {reason}", label, count=n))
    if no_name:
        findings.append(Finding("warning", "missing-name", "GPU events without a name", label, count=no_name))
    if no_ts:
        findings.append(Finding("warning", "missing-ts", "GPU events without a usable `ts`: start_ns is null", label, count=no_ts))
    if neg_dur:
        findings.append(Finding("warning", "impossible", "GPU events with a negative `dur`: duration_ns is null", label, count=neg_dur))
    if unknown_corr:
        findings.append(Finding("info", "unknown-correlation", "GPU events whose correlation id matches no runtime launch in the trace", label, count=unknown_corr))
    if unresolved:
        findings.append(Finding("info", "no-op", "kernels whose launching CPU operator could not be found: op is null", label, count=unresolved))
    if not rows:
        findings.append(Finding("warning", "no-kernels", "the trace has no GPU kernel, memcpy or memset events (profiled without CUDA activity?)", label))

    names = ["device", "stream", "kernel", "start_ns", "duration_ns", "flops", "bytes", "op", "direction", *EXTRA_COLUMNS]
    ints = {"stream", "start_ns", "correlation", "external_id", "range_ns"}
    strings = {"category", "cpu_op"}
    # each column built in its final type (canonical keeps the extra ones as they are): integer
    # columns as Int64 directly, since a None among ~1.7e18 ns values would otherwise turn the
    # column into float64 and round every start to 256 ns
    frame = pd.DataFrame({
        n: pd.array([r[n] for r in rows], dtype=pd.Int64Dtype()) if n in ints
        else pd.Series([r[n] for r in rows], dtype=pd.StringDtype() if n in strings else object)
        for n in names
    })
    table = canonical(frame, SOURCE)
    if not table.empty:
        table = table.sort_values(["device", "start_ns"], na_position="last", kind="stable").reset_index(drop=True)
    unavailable = tuple(c for c in ("flops", "bytes") if table[c].isna().all())
    meta["kernels"] = int(table["category"].isin(["kernel", COUNTER_CAT]).sum())
    return KernelRead(table, findings, unavailable, meta)
