"""`nsys stats` kernel summaries count what the profiler counted: one summary row with
`Instances` 16,448 is 16,448 calls and launches everywhere (ranking, summary, runs), not 1."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.metrics.kernels import efficiency as ke
from gpuscope.metrics.kernels.table import kernel_table
from gpuscope.parsers.profilers import nsys
from gpuscope.tui.model.kernels import build_model

DATA = Path(__file__).parent.parent / "data" / "profiles"
KERN_SUM = DATA / "nsys_cuda_gpu_kern_sum_16448.csv"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char *, 3>>(int, T2, T3)"
SGEMM = "ampere_sgemm_64x32_sliced1x4_tn"


def summary_value(model, item: str) -> str:
    return dict(model.summary.rows)[item]


def test_instances_are_calls_and_launches_in_every_table() -> None:
    model = build_model([str(KERN_SUM)], gpu="A100")
    ranking = model.rankings["kernel"].set_index("kernel")
    assert ranking.loc[ADD, "calls"] == 16_448 and ranking.loc[SGEMM, "calls"] == 1_536
    assert ranking.loc[ADD, "total_ns"] == 2_390_700_352
    assert summary_value(model, "kernel launches") == "17,984"
    assert summary_value(model, "distinct kernels") == "2"
    assert list(model.runs["launches"]) == [17_984]
    assert int(model.rankings["kernel"]["calls"].sum()) == 17_984  # the screen's subtitle count


def test_summary_statistics_are_kept_per_kernel() -> None:
    table = nsys.read_kernels(KERN_SUM).table.set_index("kernel")
    add = table.loc[ADD]
    assert (add["calls"], add["avg_ns"], add["median_ns"], add["min_ns"], add["max_ns"], add["stddev_ns"]) == \
        (16_448, 145_349.0, 144_896.0, 141_312, 162_816, 2_103.7)
    # the mean the profiler printed is the total over the instances, so nothing was lost
    assert add["avg_ns"] * add["calls"] == add["duration_ns"]
    sums = ke.sums(nsys.read_kernels(KERN_SUM).table)
    assert dict(zip(sums.names, sums.launches)) == {ADD: 16_448, SGEMM: 1_536}


def test_per_launch_rows_still_count_one_each() -> None:
    table = pd.DataFrame({"kernel": ["a", "a", "b"], "duration_ns": [10.0, 20.0, 5.0]})
    ranked = kernel_table(table).set_index("kernel")
    assert ranked.loc["a", "calls"] == 2 and ranked.loc["b", "calls"] == 1
    # a summary row whose count is unknown (or not a count) stands for one launch, never 0
    table = table.assign(calls=pd.array([3, None, 0], dtype="Int64"))
    assert list(ke.launch_counts(table)) == [3, 1, 1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 10**7), st.integers(1, 10**6)), min_size=1, max_size=6),
       st.booleans())
def test_any_kernel_summary_gives_its_instances(rows: list[tuple[int, int]], thousands: bool) -> None:
    """Instances (with or without thousands separators) become calls, in the reader and in the
    ranking; the summary statistics columns are read, not invented."""
    lines = ["Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"]
    for i, (instances, avg) in enumerate(rows):
        count = f'"{instances:,}"' if thousands else str(instances)
        lines.append(f'1.0,{instances * avg},{count},{avg}.0,{avg}.0,{avg},{avg},0.0,"k{i}(float*)"')
    result = nsys.parse_csv("\n".join(lines) + "\n", "generated.csv")
    assert not [f for f in result.findings if f.severity != "info"]
    table = result.table
    assert list(table["calls"]) == [n for n, _ in rows]
    assert list(table["avg_ns"]) == [float(a) for _, a in rows]
    assert list(table["median_ns"]) == list(table["min_ns"]) == list(table["max_ns"]) == [float(a) for _, a in rows]
    ranked = kernel_table(table).set_index("kernel")
    for i, (instances, avg) in enumerate(rows):
        assert ranked.loc[f"k{i}(float*)", "calls"] == instances
        assert ranked.loc[f"k{i}(float*)", "total_ns"] == pytest.approx(instances * avg)
    assert int(ke.launch_counts(table).sum()) == sum(n for n, _ in rows)
