"""Reading a past job back from Prometheus, without a server: the query-reply parser, the step,
the metric maps (built in and a site's, with their errors), and series made into the recording
table that replay and report read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.collectors.prometheus import maps
from gpuscope.collectors.prometheus.query import MAX_POINTS, PrometheusError, Series, parse_reply, step_for
from gpuscope.collectors.prometheus.to_recording import Window, _Section, build_table
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.gpu_readings import GpuReadingsReduce
from gpuscope.parsers.recording.usage import usage_per_node
from gpuscope.tui.model.replay import replay_of
from gpuscope.parsers.recording.read import Recording


def matrix(*series: tuple[dict, list]) -> bytes:
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": m, "values": v} for m, v in series]}}).encode()


# --- the reply parser -------------------------------------------------------------------------


def test_a_matrix_reply_is_series_with_nan_where_prometheus_says_so() -> None:
    body = matrix(({"__name__": "x", "gpu": "0"}, [[100, "1.5"], [101.5, "NaN"], [103, "+Inf"]]))
    [s] = parse_reply(body)
    assert s.labels == {"__name__": "x", "gpu": "0"}
    assert s.times.tolist() == [100, 101.5, 103]
    assert s.values[0] == 1.5 and math.isnan(s.values[1]) and s.values[2] == math.inf
    reply = json.loads(body)
    for same in (json.dumps(reply, separators=(",", ":")), json.dumps(reply, indent=2)):  # as Prometheus writes it, and spaced out
        [t] = parse_reply(same.encode())
        assert t.labels == s.labels and t.times.tolist() == s.times.tolist() and np.array_equal(t.values, s.values, equal_nan=True)


def test_series_without_samples_and_labels_that_look_like_samples_keep_their_own_lists() -> None:
    body = matrix(({"a": '"values":[[9,"9"]]'}, [[1, "2"]]), ({"values": "x"}, []), ({}, [[3, "-Inf"], [4, "4e3"]]))
    first, empty, last = parse_reply(body)
    assert first.labels == {"a": '"values":[[9,"9"]]'} and first.times.tolist() == [1] and first.values.tolist() == [2]
    assert empty.labels == {"values": "x"} and empty.times.size == empty.values.size == 0
    assert last.times.tolist() == [3, 4] and last.values.tolist() == [-math.inf, 4000]


@pytest.mark.parametrize("body, said", [
    (b"<html>502 Bad Gateway</html>", "not JSON"),
    (b"[1, 2]", "JSON list"),
    (b'{"status": "error", "errorType": "bad_data", "error": "parse error at char 5"}', "Prometheus said: parse error at char 5 (bad_data)"),
    (b'{"status": "success", "data": {"resultType": "scalar", "result": [1, "2"]}}', "no series"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1]]}]}}', "not [time, value]"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [["NaN", "1"]]}]}}', "not [time, value]"),
    (b"\x1b]0;evil\x07{", "not JSON"),
    (b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "2"]}]}}', "no series"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "a lot"]]}]}}', "not [time, value]"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "2"], [3, "4"]', "does not end its series"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"values": [[1, "2"]], "metric": {"a": "b"}}]}}', "does not end its series"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": true}]}}', "no samples list"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "2"]]}, {"metric": {}, "values": 1}]}}',
     "no samples list"),
])
def test_a_reply_that_is_not_one_is_said_in_one_line(body: bytes, said: str) -> None:
    with pytest.raises(PrometheusError) as caught:
        parse_reply(body)
    assert said in str(caught.value) and "\x1b" not in str(caught.value) and not caught.value.fatal


JSON = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
REPLYISH = st.fixed_dictionaries({"status": st.sampled_from(["success", "error", 1]), "data": st.fixed_dictionaries(
    {"resultType": st.sampled_from(["matrix", "vector", "x"]),
     "result": st.lists(st.fixed_dictionaries({"metric": st.dictionaries(st.text(max_size=6), st.text(max_size=6) | st.integers(), max_size=3),
                                               "values": st.lists(st.lists(st.floats() | st.text(max_size=6) | st.booleans(), max_size=3), max_size=4),
                                               "value": st.lists(st.integers() | st.text(max_size=5), max_size=2)}), max_size=3)})})


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(JSON, REPLYISH))
def test_any_json_reply_gives_series_or_one_clear_error(reply: object) -> None:
    try:
        series = parse_reply(json.dumps(reply).encode())
    except PrometheusError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    for s in series:
        assert s.times.shape == s.values.shape and np.isfinite(s.times).all()
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in s.labels.items())


@given(st.binary(max_size=200))
def test_any_bytes_give_series_or_one_clear_error(body: bytes) -> None:
    try:
        parse_reply(body)
    except PrometheusError:
        pass


@given(st.floats(0, 1e9), st.floats(0, 40 * 86400), st.one_of(st.none(), st.floats(0.1, 600)))
def test_the_step_keeps_every_series_under_prometheus_limit_and_never_below_the_scrape(start: float, span: float, scrape: float | None) -> None:
    step = step_for(start, start + span, scrape)
    assert span / step + 1 <= MAX_POINTS
    assert step >= 1 and step == int(step)
    if scrape is not None:
        assert step >= scrape


def test_a_day_at_15_s_is_read_at_15_s() -> None:
    assert step_for(0, 86400, 15) == 15
    assert step_for(0, 86400, 1) == 8  # 10,801 points


# --- the maps ---------------------------------------------------------------------------------


def test_the_built_in_maps_load_and_name_their_exporters() -> None:
    loaded = {m.name: m for m in maps.builtin_maps()}
    assert list(loaded) == ["gpuscope", "dcgm-exporter", "jobstats", "node_exporter"]
    dcgm = loaded["dcgm-exporter"]
    assert dcgm.job_label == "hpc_job" and dcgm.node_label == "Hostname"
    util = dcgm.section("gpu")[0]
    assert dcgm.query(util, ["n01", "gpu-2.site"], "4242", 60) == (
        'DCGM_FI_DEV_GPU_UTIL{Hostname=~"(n01|gpu\\\\-2\\\\.site)([.][^:]*)?(:[0-9]+)?",hpc_job="4242"}')
    assert dcgm.query(util, ["n01"], "4242", 60, by_job=False) == 'DCGM_FI_DEV_GPU_UTIL{Hostname=~"(n01)([.][^:]*)?(:[0-9]+)?"}'
    energy = next(f for f in loaded["gpuscope"].section("gpu") if f.field == "energy_mj")
    assert energy.scale == 1000 and "gpuscope_gpu_energy_joules_total" in energy.query
    assert {f.field for f in loaded["jobstats"].section("job")} >= {"busy_cores", "memory_used"}
    cpu = loaded["node_exporter"].section("node")[0]
    assert cpu.field == "cpu_percent" and "[60s]" in loaded["node_exporter"].query(cpu, ["n1"], None, 60)


def test_a_node_label_names_a_node_with_or_without_its_port_and_domain() -> None:
    nodes = ["n1", "n2"]
    assert [maps.node_of(v, nodes) for v in ("n1", "n1:9100", "n1.cluster.org:9400", "n3", "", "n2.x")] == ["n1", "n1", "n1", None, None, "n2"]


def test_a_site_map_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text('name = "site"\nnode_label = "host"\n[gpu]\nutil_gpu = { query = "my_util{$match}", scale = 100 }\n'
                    '[job]\nbusy_cores = \'rate(job_cpu{jobid="$job",$match}[$range])\'\n')
    m = maps.load_map(path)
    assert m.name == "site" and m.source == str(path)
    job = m.section("job")[0]
    assert m.query(job, ["a"], "7", 30) == 'rate(job_cpu{jobid="7",host=~"(a)([.][^:]*)?(:[0-9]+)?"}[30s])'
    assert maps.load_map("dcgm").name == "dcgm-exporter"  # a built-in one by name


@pytest.mark.parametrize("text, said", [
    ("[gpu\nutil_gpu = 'x'", "not TOML"),
    ("nmae = 'x'\n[gpu]\nutil_gpu = 'x'", "unknown key 'nmae' (did you mean 'name'?)"),
    ("[gpu]\nutil = 'x'", "[gpu] has no field 'util' (did you mean 'util_gpu'?)"),
    ("[gpu]\nutil_gpu = { query = 'x', scale = -1 }", "scale must be a positive number"),
    ("[gpu]\nutil_gpu = { query = 'x', scale = 'big' }", "scale must be a positive number"),
    ("[gpu]\nutil_gpu = { query = 'x', unit = '%' }", "unknown key 'unit'"),
    ("[gpu]\nutil_gpu = ''", "the query must be a non-empty string"),
    ("[gpu]\nutil_gpu = 'x{$host}'", "unknown placeholder $host"),
    ("[gpu]\nutil_gpu = 'x{$}'", "write $$ for a $"),
    ("node_label = 'bad label'\n[gpu]\nutil_gpu = 'x'", "not a Prometheus label name"),
    ("name = 'empty'", "no queries"),
    ("gpu = 3", "[gpu] must be a table"),
])
def test_a_broken_map_says_what_and_where(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "site.toml"
    path.write_text(text)
    with pytest.raises(maps.MapError) as caught:
        maps.load_map(path)
    assert said in str(caught.value) and str(path) in str(caught.value)


def test_a_map_that_is_no_file_or_no_text(tmp_path: Path) -> None:
    with pytest.raises(maps.MapError, match="no such file"):
        maps.load_map(tmp_path / "none.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00[gpu]")
    with pytest.raises(maps.MapError, match="not UTF-8"):
        maps.load_map(tmp_path / "bin.toml")
    (tmp_path / "big.toml").write_bytes(b"#" * (maps.MAX_MAP_BYTES + 2))
    with pytest.raises(maps.MapError, match="KiB"):
        maps.load_map(tmp_path / "big.toml")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_map_or_one_clear_error(text: str) -> None:
    try:
        m = maps.parse_map(text, "site.toml")
    except maps.MapError as exc:
        assert str(exc).startswith("metric map site.toml: ")
        return
    for family in m.families:  # a map that loads renders every query
        assert isinstance(m.query(family, ["n1"], "1", 60), str)


SECTION = st.sampled_from(sorted(maps.SECTIONS))


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(SECTION, st.dictionaries(st.text(min_size=1, max_size=12), st.one_of(
    st.text(max_size=20), st.floats(), st.fixed_dictionaries({"query": st.text(max_size=20)}, optional={"scale": st.floats() | st.integers()})),
    max_size=3), max_size=3))
def test_any_structured_map_is_a_map_or_one_clear_error(data: dict) -> None:
    lines = []
    for section, fields in data.items():
        lines.append(f"[{section}]")
        lines += [f"{json.dumps(k)} = {_toml(v)}" for k, v in fields.items()]
    try:
        m = maps.parse_map("\n".join(lines), "site.toml")
    except maps.MapError:
        return
    assert all(f.field in maps.SECTIONS[f.section] and f.scale > 0 for f in m.families)


def _toml(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return json.dumps(value)


# --- series into the recording table -----------------------------------------------------------


def _sections() -> tuple[Window, dict[str, _Section]]:
    own, dcgm, node_exporter = maps.builtin("gpuscope"), maps.builtin("dcgm"), maps.builtin("node_exporter")
    t = np.arange(1000.0, 1060.0, 2.0)  # 30 points at 2 s
    util = [Series({"Hostname": "n1", "gpu": str(g), "UUID": f"GPU-{g}", "modelName": "H100"}, t, np.full(30, 40.0 + g)) for g in range(2)]
    util.append(Series({"Hostname": "n2.site.org", "gpu": "0"}, t[10:], np.full(20, 90.0)))
    util.append(Series({"Hostname": "elsewhere", "gpu": "0"}, t, np.full(30, 1.0)))  # not the job's node: left out
    energy = [Series({"Hostname": "n1", "gpu": "0"}, t, 1e6 + 300_000.0 * np.arange(30))]  # mJ: 300 J every 2 s
    memory = [Series({"Hostname": "n1", "gpu": str(g)}, t, np.linspace(1, 2, 30) * 2**30) for g in range(2)]
    cores = [Series({"instance": "n1:9100", "cpu": str(c)}, t, np.full(30, 50.0 * c)) for c in range(3)]
    mem_total = [Series({"instance": "n1:9100"}, t, np.full(30, 64.0 * 2**30))]
    busy = [Series({"node": "n1", "jobid": "77"}, t, np.full(30, 1.5))]
    limit = [Series({"node": "n1", "jobid": "77"}, t, np.full(30, 8.0 * 2**30))]
    sections = {"gpu": _Section(dcgm, {"util_gpu": util, "energy_mj": energy, "memory_used": memory}, by_job=True),
                "node": _Section(node_exporter, {"cpu_percent": cores, "memory_total": mem_total}, by_job=False),
                "job": _Section(own, {"busy_cores": busy, "memory_limit": limit, "cpus_allocated": [Series({"node": "n1"}, t, np.full(30, 4.0))]}, True)}
    return Window("77", ("n1", "n2"), 1000.0, 1058.0), sections


def test_series_become_the_recording_table_replay_and_report_read() -> None:
    window, sections = _sections()
    table = build_table(window, sections, 2.0)
    assert table.schema == recording_schema.SCHEMA
    assert table.column("hostname").to_pylist() == ["n1"] * 30 + ["n2"] * 20  # n2 from its first point: a node's rows are where it said anything
    first = recording_schema.snapshot_at(table, 0)
    assert [g.index for g in first.gpus] == [0, 1] and first.gpus[1].uuid == "GPU-1" and first.gpus[0].name == "H100"
    assert first.gpus[0].util_gpu == 40.0 and first.gpus[1].energy_mj is None and first.gpus[0].energy_mj == 1_000_000
    assert first.gpus[0].temperature_c is None and "no energy counter" not in first.gpus[0].energy_note
    assert first.host.cpu_percent == (0.0, 50.0, 100.0) and first.host.memory.total == 64 * 2**30 and first.host.memory.used == 0
    assert first.scope.kind == "job" and first.scope.job_id == "77" and first.scope.cpus_allocated == 4
    assert first.scope.memory_limit == 8 * 2**30 and first.scope.memory_used is None
    assert [g.index for g in first.scope.gpus] == [0, 1] and "hpc_job" in first.scope.gpus[0].evidence
    [summary] = first.processes
    assert summary.cpu_percent == 150.0 and "job 77" in summary.command
    n2 = recording_schema.snapshot_at(table, 30)
    assert n2.host.hostname == "n2" and n2.processes == () and n2.gpus[0].util_gpu == 90.0 and n2.host.cpu_percent == ()

    readings = GpuReadingsReduce()
    usages = usage_per_node(readings.tap(table.to_batches()))
    assert [u.node for u in usages] == ["n1", "n2"]
    assert np.nanmean(usages[0].busy_cores) == 1.5 and usages[0].cpus_allocated == 4
    gpu0 = next(r for r in readings.gpus() if r.node == "n1" and r.index == 0)
    assert gpu0.frame["energy_mj"][-1] - gpu0.frame["energy_mj"][0] == 29 * 300_000


def test_a_replay_opens_the_table_in_memory_and_changes_node_there() -> None:
    window, sections = _sections()
    rec = Recording("job 77 from Prometheus", build_table(window, sections, 2.0), recording_schema.VERSION, [], complete=True)
    replay = replay_of(rec)
    assert replay.problem is None and replay.nodes == ("n1", "n2") and replay.samples == 30 and replay.in_memory
    assert replay.snapshot(3).gpus[0].util_gpu == 40.0 and replay.series["gpu1.util"][0] == 41.0
    other = replay.for_node("n2")
    assert other.node == "n2" and other.samples == 20 and other.snapshot(0).gpus[0].util_gpu == 90.0


VALUE_TEXT = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(lambda x: "NaN" if x != x else ("+Inf" if x == math.inf else repr(x))),
                       st.sampled_from(["NaN", "+Inf", "-Inf", "1e-05", "", "fan", "1.2.3"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(st.sampled_from(["node", "gpu", "values", "x"]), st.text(max_size=6), max_size=3),
                          st.lists(st.tuples(st.one_of(st.integers(0, 2**40), st.floats(0, 1e12)), VALUE_TEXT), max_size=6)), max_size=4),
       st.booleans())
def test_any_matrix_reply_reads_as_json_says_or_is_one_clear_error(result: list, spaced: bool) -> None:
    """What the reply means read by json.loads, one Python float per sample (a value's text that
    is no number: the reply is garbage), against the cut-out lists read by Arrow."""
    from gpuscope.metrics.safe_text import clean

    reply = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t, v] for t, v in points]} for labels, points in result]}}
    body = (json.dumps(reply, indent=1) if spaced else json.dumps(reply, separators=(",", ":"))).encode()
    try:
        expected = [[(float(t), float(v) if v else math.nan) for t, v in points] for _, points in result]
    except ValueError:
        with pytest.raises(PrometheusError, match="not \\[time, value\\]"):
            parse_reply(body)
        return
    series = parse_reply(body)
    assert [s.labels for s in series] == [{clean(k): clean(v) for k, v in labels.items()} for labels, _ in result]
    for s, points in zip(series, expected):
        assert s.times.tolist() == [t for t, _ in points]
        assert np.array_equal(s.values, np.array([v for _, v in points], float), equal_nan=True)


# --- the job's window from sacct ------------------------------------------------------------


def test_the_job_window_comes_from_sacct_and_the_options_override_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    from datetime import datetime

    from gpuscope.collectors.slurm import CommandResult
    from gpuscope.tui.cli import prometheus

    asked = []

    def sacct(argv):
        asked.append(argv)
        return CommandResult(0, "2026-11-21T14:05:00|2026-11-21T16:05:00|gpu[01-02,05],login1\n", "")

    real = prometheus.sacct_window
    monkeypatch.setattr(prometheus, "sacct_window", lambda job: real(job, runner=sacct))
    args = argparse.Namespace(job="123", nodes=None, start=None, end=None)
    window, problem = prometheus.window_of(args)
    assert problem is None and asked[0][:5] == ["sacct", "-j", "123", "-X", "-P"]
    assert window.nodes == ("gpu01", "gpu02", "gpu05", "login1") and window.job == "123"
    assert window.start == datetime(2026, 11, 21, 14, 5).timestamp() and window.end - window.start == 7200
    from datetime import timezone

    start = datetime(2026, 11, 21, 15, tzinfo=timezone.utc).timestamp()
    args = argparse.Namespace(job="123", nodes="n9", start="2026-11-21T15:00:00Z", end=f"{start + 60:.0f}")
    window, problem = prometheus.window_of(args)  # the options win over sacct's
    assert (window.nodes, window.start, window.end) == (("n9",), start, start + 60)
    args = argparse.Namespace(job=None, nodes="n9", start=f"{start:.0f}", end=f"{start - 1:.0f}")
    assert "is not after the start" in prometheus.window_of(args)[1]
    assert real("12;rm", runner=sacct)[1] == "'12;rm' is not a Slurm job id (expected digits, e.g. 12345 or 12345_7)"
    assert "knows no job" in real("5", runner=lambda argv: CommandResult(0, "", ""))[1]
