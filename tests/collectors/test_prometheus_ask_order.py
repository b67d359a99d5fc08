"""A section's further families are asked a few at a time (to_recording._Asker.each): the
answers still come back in the families' order, whichever Prometheus answers first, and a
fatal error stops the section at its family's turn with what came before kept."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from gpuscope.collectors.prometheus.maps import Family, builtin
from gpuscope.collectors.prometheus.query import PrometheusError, Series
from gpuscope.collectors.prometheus.to_recording import Window, _Asker


class SlowFirst:
    """Answers each query with one series naming it; the earlier a query, the slower its answer."""

    def __init__(self, fatal_at: str | None = None) -> None:
        self.asked: list[str] = []
        self.fatal_at = fatal_at
        self.lock = threading.Lock()

    def query_range(self, query: str, start: float, end: float, step: float) -> list[Series]:
        with self.lock:
            self.asked.append(query)
            k = len(self.asked)
        time.sleep(max(0.0, 0.06 - 0.02 * k))
        if self.fatal_at is not None and self.fatal_at in query:
            raise PrometheusError("down", fatal=True)
        return [Series({"query": query}, np.array([start]), np.array([1.0]))]


def _asker(client: SlowFirst) -> tuple[_Asker, object, list]:
    gpuscope = builtin("gpuscope")
    families = list(gpuscope.section("gpu"))[:4]
    return _Asker(client, Window("7", ("n1",), 1000.0, 1060.0), 15.0, 60.0), gpuscope, families  # type: ignore[arg-type]


def test_answers_come_back_in_the_families_order() -> None:
    client = SlowFirst()
    ask, m, families = _asker(client)
    answers = list(ask.each(m, families, False))
    assert [found[0].labels["query"] for found, why in answers] == [m.query(f, ("n1",), "7", 60.0, False) for f in families]
    assert all(why == "" for _, why in answers) and len(client.asked) == len(families)


def test_a_fatal_error_stops_at_its_familys_turn() -> None:
    ask, m, families = _asker(SlowFirst())
    fatal = m.query(families[1], ("n1",), "7", 60.0, False)
    ask.client.fatal_at = fatal  # type: ignore[attr-defined]
    got = []
    with pytest.raises(PrometheusError, match="down"):
        for found, _why in ask.each(m, families, False):
            got.append(found[0].labels["query"])
    assert got == [m.query(families[0], ("n1",), "7", 60.0, False)]


class WaitsForTheNextSection(SlowFirst):
    """The GPU section's first query is answered only once a node query has been asked (or after 5 s)."""

    where = "http://fake:9090"

    def __init__(self) -> None:
        super().__init__()
        self.node_asked = threading.Event()
        self.waited_for_node: bool | None = None

    def query_range(self, query: str, start: float, end: float, step: float) -> list[Series]:
        if query.startswith("gpuscope_node_"):
            self.node_asked.set()
        if query.startswith("gpuscope_gpu_utilization_ratio"):
            self.waited_for_node = self.node_asked.wait(5)
        return super().query_range(query, start, end, step)


def test_the_next_sections_are_asked_while_the_first_answer_is_awaited() -> None:
    from gpuscope.collectors.prometheus.to_recording import import_job

    client = WaitsForTheNextSection()
    imported = import_job(client, Window("7", ("n1",), 1000.0, 1060.0), [builtin("gpuscope")], step=15.0)  # type: ignore[arg-type]
    assert client.waited_for_node is True  # asked at once, not one section after another
    assert set(imported.maps) == {"gpu", "node", "job"}  # (its series name no node: no table)
    assert len(client.asked) == len(set(client.asked))  # each query asked once


def test_asking_loads_no_numpy_pyarrow_nor_pandas() -> None:
    """The queries go out before the parser's and the table's modules load (they load while
    Prometheus answers): the client and the asking import none of them."""
    import subprocess
    import sys

    code = ("import sys; import gpuscope.tui.cli.prometheus, gpuscope.collectors.prometheus.to_recording, gpuscope.collectors.prometheus.query; "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


class Answers:
    """Answers every query, at once, with series of two nodes (GPUs 0 and 1 for a GPU query),
    values that depend on the query and a gap; the same series each time it is asked."""

    where = "http://fake:9090"

    def query_range(self, query: str, start: float, end: float, step: float) -> list[Series]:
        seed = sum(query.encode()) % 97
        times = np.arange(1000.0, 1151.0, 15.0)
        out = []
        for n, node in enumerate(("n1", "n2:9100")):
            for gpu in ("0", "1") if query.startswith("gpuscope_gpu_") else (None,):
                values = seed + n * 10 + np.arange(len(times), dtype=float) + (int(gpu or 0) / 4)
                labels = {"node": node, "jobid": "7", **({"gpu": gpu, "uuid": f"GPU-{node}-{gpu}", "name": "H100"} if gpu else {})}
                out.append(Series(labels, times[n:], values[n:]))  # n2 from its second point
        return out


def test_families_put_on_the_grid_as_they_come_make_the_table_of_the_whole_sections() -> None:
    from gpuscope.collectors.prometheus.to_recording import _Section, build_table, import_job

    window, m, client = Window("7", ("n1", "n2"), 1000.0, 1150.0), builtin("gpuscope"), Answers()
    imported = import_job(client, window, [m], step=15.0)  # type: ignore[arg-type]

    def scaled(f: Family) -> list[Series]:
        return [Series(s.labels, s.times, s.values * f.scale) for s in client.query_range(m.query(f, window.nodes, "7", 60.0, False), 0, 0, 0)]

    sections = {name: _Section(m, {f.field: scaled(f) for f in m.section(name)}, by_job=False) for name in ("gpu", "node", "job")}
    whole = build_table(window, sections, 15.0)
    assert imported.table is not None and whole is not None and imported.table.num_rows == 2 * 11 - 1
    assert imported.table.to_pylist() == whole.to_pylist()
