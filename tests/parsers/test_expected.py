"""parsers/expected (expected.toml) and metrics/expected_check (ranges against table cells)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.metrics.expected import Check, all_passed, evaluate, failed_cells, matches, results_table
from gpuscope.metrics.export import to_text
from gpuscope.parsers import expected

GOOD = """
[[check]]
name = "8xA100 speedup ~4-6x"
file = "*comparison*.csv"
where = { system = "8xA100" }
column = "speedup"
range = [4, 6]

[[check]]
file = "data/*.csv"
where = { system = ["2xA100", "4xH100"], batch = 1 }
column = "overhead"
min = 30

[[check]]
file = "*.csv"
column = "cost"
range = ["*", 5]
"""

TABLE = pd.DataFrame(
    {
        "system": ["2xA100", "4xH100", "8xA100", "10xA6000"],
        "batch": ["1", "1", "1", "2"],
        "speedup": ["3.1×", "3.5×", "5.7×", "2.9×"],
        "overhead": ["35%", "28 %", "n/a", "31%"],
        "cost": ["$4.20", "$3.10", "$0.95", "$7"],
    }
)


def test_parse_good_file() -> None:
    checks, findings = expected.parse(GOOD)
    assert findings == []
    first, second, third = checks
    assert (first.index, first.line, first.file, first.column, first.low, first.high) == (1, 2, "*comparison*.csv", "speedup", 4.0, 6.0)
    assert first.where == (("system", ("8xA100",)),) and first.title == "8xA100 speedup ~4-6x"
    assert second.where == (("system", ("2xA100", "4xH100")), ("batch", (1,))) and (second.low, second.high) == (30.0, math.inf)
    assert third.low == -math.inf and third.high == 5.0 and third.range_text == "≤ 5" and third.title == "cost ≤ 5"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('file = "a.csv"\ncolumn = "x"\nrange = [6, 4]', "low end 6 is above its high end 4"),
        ('file = "a.csv"\ncolumn = "x"\nrnage = [4, 6]', "unknown key rnage"),
        ('file = "a.csv"\ncolumn = "x"', "no range"),
        ('file = "a.csv"\ncolumn = "x"\nrange = [4]', "range must be [low, high]"),
        ('file = "a.csv"\ncolumn = "x"\nrange = ["*", "*"]', "both ends"),
        ('file = "a.csv"\ncolumn = "x"\nrange = [1, 2]\nmin = 1', "not both"),
        ('file = "a.csv"\ncolumn = "x"\nrange = ["four", 6]', "'four' is not a number"),
        ('file = "a.csv"\nrange = [4, 6]', "needs column"),
        ('column = "x"\nrange = [4, 6]', "needs file"),
        ('file = "a.csv"\ncolumn = "x"\nrange = [4, 6]\nwhere = "system"', "where must be a table"),
        ('file = "a.csv"\ncolumn = "x"\nrange = [4, 6]\nwhere = { a = [] }', "where 'a'"),
    ],
)
def test_bad_checks_are_findings_with_index_and_line(body: str, message: str) -> None:
    text = '[[check]]\nfile = "ok.csv"\ncolumn = "y"\nmax = 1\n\n[[check]]\n' + body + "\n"
    checks, findings = expected.parse(text, "expected.toml")
    assert [c.index for c in checks] == [1]
    (finding,) = findings
    assert finding.severity == "error" and finding.line == 6 and finding.file == "expected.toml"
    assert finding.message.startswith("check 2 left out:") and message in finding.message


def test_bad_toml_names_the_line() -> None:
    checks, findings = expected.parse('[[check]]\nfile = "a.csv"\ncolumn = \n')
    assert checks == [] and findings[0].kind == "bad-toml" and findings[0].line == 3


def test_top_level_mistakes() -> None:
    _, findings = expected.parse('[[checks]]\nfile = "a.csv"\n')
    assert "unknown top-level key 'checks'" in findings[0].message
    _, findings = expected.parse('check = 3\n')
    assert "[[check]]" in findings[0].message
    _, findings = expected.parse("# nothing yet\n")
    assert findings[0].kind == "no-checks"


def test_read_unusable_files(tmp_path: Path) -> None:
    assert expected.read_checks(tmp_path / "missing.toml")[1][0].severity == "error"
    (tmp_path / "empty.toml").write_text("")
    assert expected.read_checks(tmp_path / "empty.toml")[1][0].kind == "empty"
    (tmp_path / "bin.toml").write_bytes(b"\x00\x01garbage")
    assert expected.read_checks(tmp_path / "bin.toml")[1][0].kind == "binary"
    (tmp_path / "expected.toml").write_text(GOOD)
    checks, findings = expected.read_checks(tmp_path / "expected.toml")
    assert len(checks) == 3 and findings == []


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_parse_never_raises(text: str) -> None:
    checks, findings = expected.parse(text)
    assert isinstance(checks, list) and isinstance(findings, list)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["file", "column", "range", "min", "max", "where", "name", "x"]),
                       st.one_of(st.text(max_size=5), st.integers(), st.floats(), st.booleans(), st.lists(st.one_of(st.integers(), st.text(max_size=3)), max_size=3),
                                 st.dictionaries(st.text(max_size=3), st.one_of(st.integers(), st.text(max_size=3)), max_size=2))))
def test_any_check_table_gives_a_check_or_a_finding(raw: dict) -> None:
    from gpuscope.parsers.expected import _check  # the shapes tomllib can hand over

    try:
        check = _check(1, raw, None)
    except ValueError:
        return
    assert check.low <= check.high


def test_matches() -> None:
    assert matches("*summary*.csv", "results/comprehensive_summary.csv")
    assert matches("data/*.csv", "data/results_8xA100.csv") and not matches("data/*.csv", "other/x.csv")
    assert matches("**/x.csv", "x.csv") and matches("**/x.csv", "a/b/x.csv")
    assert not matches("*.CSV", "x.csv")


def test_evaluate_pass_fail_and_na() -> None:
    checks, _ = expected.parse(GOOD)
    results = evaluate(checks, {"data/cross_comparison.csv": TABLE})
    speedup, overhead, cost = results
    assert speedup.status == "pass" and speedup.values == (5.7,) and speedup.unit == "x" and speedup.value_text == "5.7 x"
    assert overhead.status == "FAIL" and overhead.outside == ((1, "overhead"),) and "1 of 2 outside: row 2" in overhead.why
    assert cost.status == "FAIL" and cost.outside == ((3, "cost"),)
    assert failed_cells(results, "data/cross_comparison.csv") == {(1, "overhead"), (3, "cost")}
    assert not all_passed(results)


def test_evaluate_na_reasons() -> None:
    base = dict(index=1, low=0.0, high=10.0)
    frame = TABLE
    cases = [
        (Check(file="nothing*.csv", column="speedup", **base), "no file matched"),
        (Check(file="t.csv", column="latency", **base), "column 'latency' missing"),
        (Check(file="t.csv", column="speedup", where=(("gpu", ("A100",)),), **base), "row selector column 'gpu' missing"),
        (Check(file="t.csv", column="speedup", where=(("system", ("1xV100",)),), **base), "no row where system = 1xV100"),
        (Check(file="t.csv", column="overhead", where=(("system", ("8xA100",)),), **base), "not a number: row 3 ('n/a')"),
        (Check(file="t.csv", column="system", **base), "not a number"),
        (Check(file="bad.csv", column="speedup", **base), "cannot be parsed"),
    ]
    for check, why in cases:
        (result,) = evaluate([check], {"t.csv": frame}, unreadable={"bad.csv": "cannot be parsed"})
        assert result.status == "n/a" and why in result.why, (check, result)
    (result,) = evaluate([Check(file="t.csv", column="overhead", where=(("system", ("8xA100",)),), **base)], {"t.csv": frame})
    assert math.isnan(result.values[0]) and result.unreadable == ((2, "overhead"),)


def test_where_matches_numbers_as_numbers_and_case_insensitive_columns() -> None:
    frame = pd.DataFrame({"Batch Size": [1, 2, 1], "Speedup": ["15.85×", "10×", "2,000×"]})
    check = Check(index=1, file="t.csv", column="speedup", low=10, high=20, where=(("batch size", (1.0,)),))
    (result,) = evaluate([check], {"t.csv": frame})
    assert result.status == "FAIL" and result.values == (15.85, 2000.0) and result.outside == ((2, "Speedup"),)


def test_results_table_renders() -> None:
    checks, _ = expected.parse(GOOD)
    table = results_table(evaluate(checks, {"data/cross_comparison.csv": TABLE}))
    text = to_text([table], width=200)
    assert "8xA100 speedup ~4-6x" in text and "FAIL" in text and "pass" in text and "1 pass, 2 FAIL" in text
    assert table.records()[0]["status"] == "pass"


def test_to_frame_lists_the_checks() -> None:
    checks, _ = expected.parse(GOOD)
    frame = expected.to_frame(checks)
    assert list(frame.columns) == ["check", "line", "name", "file", "rows", "column", "range"]
    assert frame["range"].tolist() == ["4 … 6", "≥ 30", "≤ 5"] and frame["line"].tolist() == [2, 9, 15]


def test_nullable_tables_as_pandas_reads_them() -> None:
    """pandas' default CSV read: `n/a` becomes <NA>, numbers nullable; nothing changes."""
    import io

    frame = pd.read_csv(io.StringIO(TABLE.to_csv(index=False)), dtype_backend="numpy_nullable")
    checks, _ = expected.parse(GOOD)
    statuses = [r.status for r in evaluate(checks, {"data/cross_comparison.csv": frame})]
    assert statuses == ["pass", "FAIL", "FAIL"]
    check = Check(index=1, file="t.csv", column="overhead", low=0, high=50, where=(("batch", (1,)),))
    (result,) = evaluate([check], {"t.csv": frame})
    assert result.status == "n/a" and "row 3 (empty)" in result.why
