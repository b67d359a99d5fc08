"""Provides a past job read back from Prometheus as an in-memory recording: the same Arrow table
(parsers/recording/schema.py's current layout) that `replay` and `report` read from a file.

    client = Client("http://prom:9090", timeout=5)
    imported = import_job(client, Window(job="123", nodes=("n1", "n2"), start=t0, end=t1), builtin_maps())
    imported.table          # one row per node and sample; None when nothing loaded
    imported.said           # which map gave each section, and "n/a: QUERY found nothing" per family

Each section of the maps (GPUs, the node, the job's own series) comes from the first map, in
the order given, whose first query finds anything over the job's window; every query is one
`query_range` with the step `query.step_for` picks (at most 11,000 points a series). The
samples are the step's grid: a node's row exists where any of its series has a point, so a
node that was down is a gap in time, not a row of zeros. What Prometheus cannot say is n/a
(null): no process list (a job's busy cores and memory, when its map has them, are one
summary row "all of the job's processes" and the scope's memory), no throttle reasons. Node
memory that is not known is 0, which the recording's readers take as unknown (as collectors
do for an unreadable /proc/meminfo).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from gpuscope.collectors.prometheus.maps import Family, MetricMap
from gpuscope.collectors.prometheus.query import Client, PrometheusError, Series, load_parser, step_for
from gpuscope.collectors.prometheus.window import Window, _Section

if TYPE_CHECKING:
    import pyarrow as pa

SECTIONS = ("gpu", "node", "job")
UNKNOWN_SCRAPE_S = 15.0
"""The step where Prometheus does not say its scrape interval: the usual one (finer would repeat samples)."""


@dataclass
class Imported:
    table: pa.Table | None
    said: list[str] = field(default_factory=list)
    """What was found and what was not, one line each, to show before the screen or report."""
    problem: str | None = None
    """Why the reading stopped early (Prometheus down, slow, refused): what came before is kept."""
    step: float = 0.0
    maps: dict[str, str] = field(default_factory=dict)
    """Section -> the name of the map that gave it."""


def import_job(client: Client, window: Window, maps: Sequence[MetricMap], step: float | None = None) -> Imported:
    """Ask Prometheus for `window` through `maps`; never raises on what Prometheus answers."""
    out = Imported(None)
    if not window.end > window.start:
        out.problem = "the job's end is not after its start: nothing to read"
        return out
    sections: dict[str, _Section] = {}
    try:
        scrape = client.scrape_interval() if step is None else None
        out.step = step or step_for(window.start, window.end, scrape or UNKNOWN_SCRAPE_S)
        ask = _Asker(client, window, out.step, range_s=max(4 * out.step, 4 * (scrape or 0)))
        how = ("--step" if step else f"the scrape interval is {scrape:g} s" if scrape else
               f"the scrape interval is not known: at least {UNKNOWN_SCRAPE_S:g} s, --step S for another")
        out.said.append(f"{client.where}: job {window.job or '(none)'} on {', '.join(window.nodes) or 'every node'}, every {out.step:g} s ({how})")
    except PrometheusError as exc:  # down, refused or slow from the first request
        out.problem = str(exc)
        return out
    try:
        for name in SECTIONS:  # each section's first map asked at once: Prometheus answers one while another is parsed
            first = next((m for m in maps if _families(m, name, window.job)), None)
            if first is not None:
                ask.submit(first, _families(first, name, window.job), first.job_label is not None and window.job is not None)
        load_parser()  # numpy, pandas and pyarrow load now, while Prometheus answers what was just asked
        from gpuscope.collectors.prometheus.table import Grid

        grid = Grid(window, out.step)
        for name in SECTIONS:
            if out.problem is not None:
                out.said.append(f"{name}: n/a: not asked (Prometheus stopped answering)")
                continue
            found = _section(ask, maps, name, out, grid.put)  # each family on the grid while Prometheus answers the next
            if found is not None:
                sections[name] = found
    finally:
        ask.close()
    if sections:
        out.table = grid.table(sections)
    if out.table is None and out.problem is None:
        out.problem = "Prometheus has nothing of this job (no map's queries found anything)"
    return out


ASK_AT_ONCE = 3
"""Queries asked together (each reply up to query.MAX_BYTES is held while parsed)."""


def _families(m: MetricMap, name: str, job: str | None) -> list[Family]:
    """`m`'s queries for section `name` (those naming $job only with a job)."""
    return [f for f in m.section(name) if job is not None or "$job" not in f.query]


@dataclass
class _Asker:
    """Asks ASK_AT_ONCE queries at a time, each once: Prometheus answers the next while a reply is
    read and parsed (Arrow's parse lets go of the GIL). Queries asked ahead of their turn (the
    further families of a map before its first has answered, the next sections' before this
    one's) are answered from what was asked; what is still waiting at `close` is not asked."""

    client: Client
    window: Window
    step: float
    range_s: float
    _pool: ThreadPoolExecutor = field(init=False, default_factory=lambda: ThreadPoolExecutor(ASK_AT_ONCE))
    _asked: dict[tuple[MetricMap, Family, bool], Future] = field(init=False, default_factory=dict)
    _stopped: PrometheusError | None = field(init=False, default=None)
    """The first fatal error: the queries not yet under way then end with it, unasked."""

    def __call__(self, m: MetricMap, family: Family, by_job: bool) -> tuple[list[Series], str]:
        """(the series found, '') or ([], why not: "n/a: QUERY found nothing" or its error);
        a fatal error propagates."""
        self.submit(m, [family], by_job)
        return self._asked.pop((m, family, by_job)).result()

    def each(self, m: MetricMap, families: Sequence[Family], by_job: bool) -> Iterator[tuple[list[Series], str]]:
        """`self(m, family, by_job)` for each family in order, all asked at once. A fatal error
        propagates at its family's turn."""
        self.submit(m, families, by_job)
        for family in families:
            yield self(m, family, by_job)

    def submit(self, m: MetricMap, families: Sequence[Family], by_job: bool) -> None:
        """Ask for `families` (those not asked yet) without waiting for the answers."""
        for family in families:
            if (m, family, by_job) not in self._asked:
                self._asked[m, family, by_job] = self._pool.submit(self._ask, m, family, by_job)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)  # those under way end by the client's deadline
        self._asked.clear()

    def _ask(self, m: MetricMap, family: Family, by_job: bool) -> tuple[list[Series], str]:
        w = self.window
        query = m.query(family, w.nodes, w.job, self.range_s, by_job)
        if self._stopped is not None:
            raise self._stopped
        try:
            found = self.client.query_range(query, w.start, w.end, self.step)
        except PrometheusError as exc:
            if exc.fatal:
                self._stopped = self._stopped or exc
                raise
            return [], f"n/a: {query}: {exc}"
        import numpy as np  # loaded by the parse

        found = [s for s in found if s.values.size and not np.isnan(s.values).all()]
        if family.scale != 1.0:
            for s in found:
                s.values = s.values * family.scale
        return found, "" if found else f"n/a: {query} found nothing"


def _section(ask: _Asker, maps: Sequence[MetricMap], name: str, out: Imported, put: Callable[[str, MetricMap, str, list[Series]], None]) -> _Section | None:
    """The first map whose first `name` query finds series, with all its `name` queries asked,
    each family's series given to `put` as it is kept. When Prometheus stops answering
    (`out.problem` then says why), what it said before is kept."""
    job = ask.window.job
    tried: list[str] = []
    lines: list[str] = []
    series: dict[str, list[Series]] = {}
    m, by_job = None, False
    try:
        for m in maps:
            families = _families(m, name, job)
            if not families:
                continue
            by_job = m.job_label is not None and job is not None
            first, why = ask(m, families[0], by_job)
            if not first and by_job:  # the exporter does not label this job's series: by node and time
                first, _ = ask(m, families[0], False)
                if first:
                    by_job = False
                    tried.append(f"{name}: {m.name} has no series labelled {m.job_label}=\"{job}\": every GPU of the job's nodes over "
                                 "its time is read (a node figure where the nodes were shared)")
            if not first:
                tried.append(f"{name} ({m.name}): {why}")
                continue
            series[families[0].field] = first
            put(name, m, families[0].field, first)
            lines.append(f"{name} {families[0].field}: {m.name}, {len(first)} series")
            for family, (found, why) in zip(families[1:], ask.each(m, families[1:], by_job)):
                series[family.field] = found
                put(name, m, family.field, found)
                lines.append(f"{name} {family.field}: {m.name}, {len(found)} series" if not why else f"{name} {family.field}: {why}")
            break
    except PrometheusError as exc:
        out.problem = str(exc)
    out.said += tried + lines
    if series and m is not None:
        out.maps[name] = m.name
        return _Section(m, series, by_job)
    if not tried and out.problem is None:
        out.said.append(f"{name}: n/a: no map has {name} queries" + ("" if job else " that work without a job id"))
    return None


def build_table(window: Window, sections: dict[str, _Section], step: float) -> pa.Table | None:
    """The readings as a recording's table: one row per node and grid point with any reading
    (collectors/prometheus/table.py, which loads numpy and pyarrow)."""
    from gpuscope.collectors.prometheus.table import table

    return table(window, sections, step)
