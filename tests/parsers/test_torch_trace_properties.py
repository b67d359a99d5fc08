"""Property tests for the PyTorch (Kineto) trace reader: generated traces read back to the
kernels they hold, and arbitrary bytes or JSON never raise."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import torch_trace

names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
kernel = st.tuples(names, st.integers(0, 10**9), st.integers(0, 10**6), st.sampled_from([7, 20]))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(st.lists(kernel, max_size=20))
def test_generated_kernels_read_back(kernels: list[tuple[str, int, int, int]]) -> None:
    events = [{"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": s, "ts": ts, "dur": dur, "args": {"stream": s, "device": 0}}
              for n, ts, dur, s in kernels]
    result = torch_trace.parse(json.loads(json.dumps({"schemaVersion": 1, "traceEvents": events})), "gen")
    table = result.table[result.table["category"] == "kernel"]
    assert len(table) == len(kernels)
    got = sorted(zip(table["kernel"].astype(str), table["start_ns"].astype(int), table["duration_ns"].astype(int)))
    assert got == sorted((n, ts * 1000, dur * 1000) for n, ts, dur, _ in kernels)
    assert not [f for f in result.findings if f.severity == "error"]


@SETTINGS
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("t") / "trace.json"
    path.write_bytes(data)
    result = torch_trace.read_kernels(path)
    assert result.table.empty or result.findings is not None


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["ph", "cat", "name", "ts", "dur", "pid", "tid", "args", "id", "x"]), inner, max_size=6),
                           max_leaves=30)


@SETTINGS
@given(st.dictionaries(st.sampled_from(["traceEvents", "deviceProperties", "schemaVersion", "distributedInfo"]), json_values))
def test_arbitrary_json_never_raises(doc: dict) -> None:
    torch_trace.parse(doc, "gen")
