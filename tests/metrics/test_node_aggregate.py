"""The all-nodes view of a multi-node job, headless: `metrics.node_aggregate.aggregate` (sums,
n/a propagation, GPU labels, processes with their node), `tui.model.nodes_view.NodesView`
(histories, switching, a node ending, all ended) and the switcher line."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from fake_nodes import FakeNodes, on_node
from fake_watch import FakeSource
from gpuscope.collectors.fanout import NodesReading
from gpuscope.metrics.job.nodes import GPU_STRIDE, NodeProcessRow, aggregate
from gpuscope.metrics.samples import Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import process_table, scope_processes
from gpuscope.tui.model.nodes import ALL, NodesView, switcher_text


def nodes(count: int = 3, gpus: int = 2) -> dict[str, Snapshot]:
    return {f"cn{i:02}": on_node(FakeSource(gpus=gpus, processes=12).poll(), f"cn{i:02}") for i in range(1, count + 1)}


def test_sums_and_lists_every_node() -> None:
    parts = nodes(3, gpus=2)
    total = aggregate(parts).snapshot
    one = parts["cn01"]
    assert total.host.hostname == "all 3 nodes"
    assert len(total.host.cpu_percent) == 3 * len(one.host.cpu_percent)
    assert total.host.memory.total == 3 * one.host.memory.total
    assert total.scope.cpus_allocated == 3 * one.scope.cpus_allocated
    assert total.scope.memory_limit == 3 * one.scope.memory_limit
    assert total.scope.label == one.scope.label and "3 nodes: cn01, cn02, cn03" in total.scope.evidence
    # the job's cores keep their highlight, moved by the cores of the nodes before
    cores = len(one.host.cpu_percent)
    assert total.scope.cpu_ids == tuple(c + k * cores for k in range(3) for c in one.scope.cpu_ids)
    # GPUs listed per node as node:index, with indices unique across nodes
    labels = aggregate(parts).gpu_labels
    assert [labels[g.index] for g in total.gpus] == ["cn01:0", "cn01:1", "cn02:0", "cn02:1", "cn03:0", "cn03:1"]
    assert {g.index for g in total.gpus} >= {a.index for a in total.scope.gpus}
    # the job's processes of every node, each saying its node (pids repeat)
    assert len(total.processes) == 3 * len(scope_processes(one))
    assert {p.node for p in total.processes if isinstance(p, NodeProcessRow)} == {"cn01", "cn02", "cn03"}


def test_verdicts_and_problems_say_their_node() -> None:
    parts = nodes(2)
    parts["cn02"] = dataclasses.replace(parts["cn02"], verdicts=(Verdict("warning", "GPU 1 allocated, idle"),),
                                        scope=dataclasses.replace(parts["cn02"].scope, problems=("cgroup unreadable",)))
    total = aggregate(parts).snapshot
    assert Verdict("warning", "cn02: GPU 1 allocated, idle") in total.verdicts
    assert total.scope.problems == ("cn02: cgroup unreadable",)


def test_unknown_on_one_node_is_unknown_in_the_sum() -> None:
    parts = nodes(2)
    parts["cn02"] = dataclasses.replace(parts["cn02"], scope=dataclasses.replace(parts["cn02"].scope, cpus_allocated=None, memory_peak=None))
    total = aggregate(parts).snapshot.scope
    assert total.cpus_allocated is None and total.memory_peak is None  # n/a, never a partial sum
    assert total.memory_limit is not None


def test_start_times_move_to_the_aggregate_clock() -> None:
    """A process's start counts from its own node's boot: the time it has run must not change."""
    parts = {"a": on_node(FakeSource(processes=5).poll(), "a", uptime=5000.0), "b": on_node(FakeSource(processes=5).poll(), "b", uptime=2000.0)}
    total = aggregate(parts).snapshot
    for p in total.processes:
        own = next(r for r in scope_processes(parts[p.node]) if r.pid == p.pid)  # type: ignore[attr-defined]
        assert total.host.uptime - p.started == parts[p.node].host.uptime - own.started  # type: ignore[attr-defined,operator]


def test_export_of_the_all_nodes_table_has_a_node_column() -> None:
    total = aggregate(nodes(2)).snapshot
    table = process_table(total, rows=list(total.processes))
    assert table.columns[0].key == "node" and {row[0] for row in table.rows} == {"cn01", "cn02"}
    single = process_table(FakeSource().poll())
    assert single.columns[0].key == "pid"  # one node: as before


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 20), st.integers(0, 30), st.booleans()), min_size=1, max_size=5))
def test_aggregate_properties(spec: list[tuple[int, int, int, bool]]) -> None:
    parts = {}
    for k, (gpus, cores, procs, known) in enumerate(spec):
        snap = on_node(FakeSource(gpus=gpus, cores=cores, processes=procs).poll(), f"n{k}", uptime=100.0 * (k + 1) if known else None)
        parts[f"n{k}"] = snap
    result = aggregate(parts)
    total = result.snapshot
    assert len(total.gpus) == sum(len(s.gpus) for s in parts.values()) == len(result.gpu_labels)
    assert len({g.index for g in total.gpus}) == len(total.gpus)
    assert all(g.index // GPU_STRIDE < len(parts) for g in total.gpus)
    assert len(total.host.cpu_percent) == sum(len(s.host.cpu_percent) for s in parts.values())
    assert all(0 <= c < len(total.host.cpu_percent) for c in total.scope.cpu_ids)
    assert total.host.memory.used == sum(s.host.memory.used for s in parts.values())
    assert len(total.processes) == sum(len(scope_processes(s)) for s in parts.values())
    assert len(total.verdicts) == sum(len(s.verdicts) for s in parts.values())


# --- NodesView: what the watch keeps for a multi-node job ------------------------------------


def test_nodes_view_switches_and_survives_a_node_ending() -> None:
    source, view = FakeNodes(), NodesView()
    assert view.take(source.poll()) and view.take(source.poll())
    assert view.entries() == [ALL, "cn01", "cn02", "cn03"] and view.title() == "all 3 nodes"
    shown = view.shown()
    assert shown.snapshot is not None and len(shown.snapshot.gpus) == 6 and len(shown.history) == 2
    assert view.cycle(1) == "cn01" and view.title() == "node cn01" and view.shown().gpu_labels is None
    assert "all 3 nodes" in switcher_text(view, 200).plain  # the aggregate's entry keeps its name
    assert view.cycle(-1) == ALL and view.cycle(-1) == "cn03"
    source.gone["cn02"] = "Killed"
    view.take(source.poll())
    assert view.status("cn02") == "ended: Killed" and view.title() == "node cn03"
    view.selected = ALL
    assert len(view.shown().snapshot.gpus) == 4 and view.title() == "all 3 nodes (2 live)"  # type: ignore[union-attr]
    assert "cn02 ended: Killed" in switcher_text(view, 200).plain and view.summary() is None
    source.gone.update(cn01="the job's processes are gone", cn03="Killed")
    view.take(source.poll())
    assert view.summary() == "every node's stream has ended (srun exited with status 1): the last readings are shown"
    assert view.shown().snapshot is not None  # the last readings stay


def test_switcher_keeps_the_shown_node_visible_when_narrow() -> None:
    view = NodesView()
    view.take(FakeNodes(tuple(f"node-{i:03}" for i in range(12)), gpus=0).poll())
    view.selected = "node-011"
    line = switcher_text(view, 80).plain
    assert len(line) <= 80 and "node-011" in line and "…" in line
    assert NodesView().summary() is None and "waiting" not in switcher_text(NodesView(), 80).plain


def test_no_node_answering_is_said() -> None:
    view = NodesView()
    view.take(NodesReading({}, (), (), True, "cannot start srun: No such file or directory"))
    assert view.summary() == "no node answered: cannot start srun: No such file or directory"
    assert view.shown().snapshot is None
