"""Time-only testers are read, "truncated" needs evidence, and times keep their printed
resolution. The fixtures are generated here from the printf formats of MAGMA's eigen and
singular value testers (testing_dsyevd, testing_dsyevdx_2stage, testing_dgeev; MAGMA 1.x and
2.x, BSD-3) and of the results scripts' echoed command lines; every number is invented."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.parsers.magma import read as magma
from gpuscope.parsers.magma import layout as fmt
from gpuscope.tui.model.magma import build_model
from gpuscope.tui.model.magma_report import MagmaOptions, report

SIZES_1X = "-N 100 -N 1000 --range 10:90:10 --range 100:900:100 --range 1000:3000:1000"
ASKED = [100, 1000, *range(10, 91, 10), *range(100, 901, 100), 1000, 2000, 3000]


def seconds(n: int, vectors: bool) -> float:
    """An invented O(n^3) time in seconds."""
    return 2.0e-11 * n**3 * (1.4 if vectors else 1.0) + 1.0e-5


def dsyevd_1x(sizes: list[int], asked: str = SIZES_1X, stop: int | None = None) -> str:
    """A MAGMA 1.x results file: `-JN` then `-JV`, each after its echoed command line; `stop`
    cuts the second run after that many rows (a killed job)."""
    out = []
    for jobz, flag in (("No vectors", "-JN"), ("Vectors needed", "-JV")):
        out += [f"numactl --interleave=all ./testing_dsyevd {flag} {asked}",
                "MAGMA 1.6.1  compiled for CUDA capability >= 3.5",
                "CUDA runtime 7000, driver 7000. OpenMP threads 16. MKL 11.2.3, MKL threads 16. ",
                "device 0: Tesla K40c, 745.0 MHz clock, 11519.6 MB memory, capability 3.5",
                "Usage: ./testing_dsyevd [options] [-h|--help]", "",
                f"using: jobz = {jobz}, uplo = Lower",
                "    N   CPU Time (sec)   GPU Time (sec)",
                "======================================="]
        rows = sizes if (stop is None or flag == "-JN") else sizes[:stop]
        out += [f"{n:5d}     ---             {seconds(n, flag == '-JV'):7.4f}" for n in rows]
        if stop is not None and flag == "-JV":
            out.append("Killed")
    return "\n".join(out) + "\n"


def dsyevd_2x() -> str:
    """MAGMA 2.x: `%` header with three check columns (`---` without -c) and a status word;
    testing_dsyevdx_2stage's header names checks its rows leave out."""
    out = ["numactl --interleave=all ../testing/testing_dsyevd -JN -N 123 --range 100:300:100",
           "% MAGMA 2.0.0  compiled for CUDA capability >= 3.5, 64-bit magma_int_t, 64-bit pointer.",
           "% device 0: Tesla K40c, 745.0 MHz clock, 11519.6 MB memory, capability 3.5",
           "% Usage: ../testing/testing_dsyevd [options] [-h|--help]", "",
           "% jobz = No vectors, range = All, uplo = Lower, fraction = 1.0000, ngpu = 1",
           "%   N   CPU Time (sec)   GPU Time (sec)   |S-S_magma|   |A-USU^H|   |I-U^H U|",
           "%============================================================================"]
    out += [f"{n:5d}      ---           {seconds(n, False):9.4f}           ---           ---         ---      ok" for n in (123, 100, 200, 300)]
    out += ["numactl --interleave=all ../testing/testing_dsyevdx_2stage -JN -N 123 --range 100:300:100",
            "% Usage: ../testing/testing_dsyevdx_2stage [options] [-h|--help]", "",
            "% jobz = No vectors, range = All, uplo = Lower, fraction = 1.0000, ngpu 1",
            "%   N     M  GPU Time (sec)   ||I-Q^H Q||/N   ||A-QDQ^H||/(||A||N)   |D-D_magma|/(|D| * N)",
            "%========================================================================================="]
    out += [f"{n:5d} {n:5d}     {seconds(n, False):4.2f}      " for n in (123, 100, 200, 300)]
    return "\n".join(out) + "\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_time_only_headers_are_layouts_without_gflops() -> None:
    layout = fmt.parse_header("    N   CPU Time (sec)   GPU Time (sec)")
    assert layout is not None and layout.time_only
    assert layout.sizes == ("n",) and [impl for impl, _, _ in layout.impls] == ["cpu", "magma"] and layout.width == 3
    two_stage = fmt.parse_header("%   N     M  GPU Time (sec)   ||I-Q^H Q||/N   ||A-QDQ^H||/(||A||N)   |D-D_magma|/(|D| * N)")
    assert two_stage is not None and two_stage.sizes == ("n", "m") and len(two_stage.errors) == 3


def test_dsyevd_1x_is_read_as_times_per_size_and_jobz(tmp_path: Path) -> None:
    result = magma.read_tree([write(tmp_path, "dsyevd.txt", dsyevd_1x(ASKED))])
    rows = result.rows
    assert len(rows) == 2 * len(ASKED) and set(rows["impl"].astype(str)) == {"magma"}  # the CPU column is `---`
    assert rows["gflops"].isna().all() and (rows["excluded"] == "").all()
    assert sorted(set(rows["test"].astype(str))) == ["dsyevd jobz=No vectors", "dsyevd jobz=Vectors needed"]
    jn = rows[rows["test"] == "dsyevd jobz=No vectors"]
    expected = [round(seconds(n, False), 4) * 1000 for n in ASKED]
    assert jn["time_ms"].tolist() == pytest.approx(expected)
    assert jn["time_res_ms"].tolist() == pytest.approx([0.05] * len(ASKED))  # %7.4f seconds: half of 0.1 ms
    assert result.runs["outcome"].tolist() == ["complete"]  # 100 and 1000 twice: asked for, not a truncation
    assert not [f for f in result.findings if f.kind in ("truncated", "no-data", "unknown-header")]
    summary = magma_stats.summarize(rows, pool_nodes=True)
    assert (summary["count"] > 0).all() and summary["gflops_median"].isna().all()
    at_100 = summary[(summary["test"] == "dsyevd jobz=No vectors") & (summary["problem_size"] == "100")].iloc[0]
    assert at_100["count"] == 2


def test_dsyevd_2x_and_two_stage_rows_fit_their_headers(tmp_path: Path) -> None:
    result = magma.read_tree([write(tmp_path, "dsyevd.txt", dsyevd_2x())])
    rows = result.rows
    assert not [f for f in result.findings if f.kind == "unparsed"]
    assert rows.groupby("test", observed=True).size().to_dict() == {"dsyevd": 4, "dsyevdx_2stage": 4}
    two = rows[rows["test"] == "dsyevdx_2stage"]
    assert two["time_res_ms"].tolist() == pytest.approx([5.0] * 4)  # `%4.2f` seconds: half of 10 ms
    assert two["time_ms"].tolist() == pytest.approx([round(seconds(n, False), 2) * 1000 for n in (123, 100, 200, 300)])
    assert result.runs["outcome"].tolist() == ["complete"]


def test_a_run_that_stops_before_its_last_asked_size_is_truncated(tmp_path: Path) -> None:
    result = magma.read_tree([write(tmp_path, "dsyevd.txt", dsyevd_1x(ASKED, stop=len(ASKED) - 2))])
    assert result.runs["outcome"].tolist() == ["truncated"]
    [finding] = [f for f in result.findings if f.kind == "truncated"]
    assert "stops at size 1000" in finding.message and "asks for sizes up to 3000" in finding.message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([10, 20, 100, 1000, 2000]), min_size=1, max_size=12), st.data())
def test_truncated_only_when_the_last_asked_size_is_missing(tmp_path: Path, sizes: list[int], data: st.DataObject) -> None:
    asked = " ".join(f"-N {n}" for n in sizes)
    stop = data.draw(st.none() | st.integers(0, len(sizes) - 1))
    result = magma.read_tree([write(tmp_path, "run.txt", dsyevd_1x(sizes, asked, stop))])
    assert result.runs["outcome"].tolist() == ["complete" if stop is None else "truncated"]


def test_repeated_sizes_of_the_shared_study_are_not_truncations() -> None:
    """The real outputs with several processes per file keep their outcomes: only the cancelled
    runs end early."""
    from paths import SHARED_MAGMA

    tree = SHARED_MAGMA / "experiments"
    if not tree.is_dir():
        pytest.skip(f"{tree} is absent")
    outcomes = magma.read_tree([tree]).runs["outcome"].value_counts().to_dict()
    assert "truncated" not in outcomes and outcomes.get("cancelled") == 2


def dgetrf_coarse() -> str:
    """MAGMA 1.x testing_dgetrf: `%7.2f` seconds, so small sizes print `(   0.00)`."""
    out = ["numactl --interleave=all ./testing_dgetrf -N 10 -N 20 -N 3000",
           "MAGMA 1.6.1  compiled for CUDA capability >= 3.5",
           "device 0: Tesla K40c, 745.0 MHz clock, 11519.6 MB memory, capability 3.5",
           "Usage: ./testing_dgetrf [options] [-h|--help]", "", "ngpu 1",
           "    M     N   CPU GFlop/s (sec)   GPU GFlop/s (sec)   |PA-LU|/(N*|A|)",
           "========================================================================="]
    out += ["   10    10     ---   (  ---  )      0.03 (   0.00)     ---   ",
            "   20    20     ---   (  ---  )      0.16 (   0.00)     ---   ",
            " 3000  3000     ---   (  ---  )    501.20 (   0.04)     ---   "]
    return "\n".join(out) + "\n"


def test_times_printed_as_zero_are_below_the_resolution(tmp_path: Path) -> None:
    rows = magma.read_tree([_two_envs(tmp_path)]).rows
    assert rows["time_res_ms"].tolist() == pytest.approx([5.0] * len(rows))
    summary = magma_stats.summarize(rows, pool_nodes=True)
    table = magma_stats.summary_table(summary, "time_ms")
    median = table.keys.index("time_ms_median")
    shown = {(r[table.keys.index("environment")], r[table.keys.index("problem_size")]): table.cell_text(i, median)
             for i, r in enumerate(table.rows)}
    assert shown[("a", "10x10")] == "< 5" and shown[("a", "3000x3000")] == "40.00"
    cmp = magma_stats.compare(rows, metric="time_ms", pool_nodes=True)
    assert cmp.loc[cmp["problem_size"] == "10x10", "ratio_to_best"].isna().all()  # 0 / 0 printed times: no ratio
    assert not cmp.loc[cmp["problem_size"] == "3000x3000", "ratio_to_best"].isna().any()


def _two_envs(tmp_path: Path) -> Path:
    """Two environments running the coarse dgetrf five times each."""
    for env in ("a", "b"):
        folder = tmp_path / "tree" / env / "size4"
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(5):
            (folder / f"dgetrf-{k}.txt").write_text(dgetrf_coarse())
    return tmp_path / "tree"


def test_time_only_tests_open_and_print_in_ms(tmp_path: Path) -> None:
    result = magma.read_tree([write(tmp_path, "dsyevd.txt", dsyevd_1x(ASKED))])
    model = build_model(result)
    sel = model.first_selection(metric="gflops")
    assert sel.metric == "time_ms" and sel.test in model.time_only
    assert model.cycle_test(sel).metric == "time_ms"
    options = MagmaOptions(metric="gflops", width=120)
    tables, _ = report(result, options, "csv")
    assert tables[0].title.startswith("MAGMA summary")
    tables, _ = report(result, replace(options, table="comparison"), "text")
    assert tables[0].title.startswith("Environments compared (ms")
