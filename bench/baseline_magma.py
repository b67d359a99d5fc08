"""The baseline: what a user's one-off analysis script does with MAGMA results.

Modelled on the study's own analysis (seed 000): walk the result folders, read every file
line by line, match each line against a compiled regex, collect the rows in lists, build a
pandas DataFrame, and summarise with a pandas groupby. Written the way a competent user
would write it (vectorised groupby, no per-group Python lambdas) so the comparison is fair:
the gap it measures is the parse, not a strawman summary.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

# The data-row regex of formats-scaling.md §1.10 item 4; it matched all 248,632 rows of the
# real study. group1 = size integers, group2 = "perf (time)" pairs, group4 = status.
NUM = r"(?:[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)|---)"
ROW = re.compile(r"^\s*(\d+(?:\s+\d+){0,3})((?:\s+" + NUM + r"\s*\(\s*" + NUM + r"\s*\))+)((?:\s+" + NUM + r")*)(?:\s+(ok|failed))?\s*$")
PAIR = re.compile(r"(\S+)\s*\(\s*(\S+?)\s*\)")
SIZE_DIR = re.compile(r"^size(\d+)$")

KEYS = ["environment", "nodes", "problem_size"]
METRICS = ["gflops", "time_ms"]


def _float(text: str) -> float:
    return float("nan") if text == "---" else float(text)


def context(rel: Path) -> tuple[str, int | None]:
    """environment = folders before the `size<N>` folder (`aws/eks/gpu`), nodes = N."""
    folders = rel.parts[:-1]
    for i, part in enumerate(folders):
        found = SIZE_DIR.match(part)
        if found:
            return "/".join(folders[:i]), int(found.group(1))
    return "/".join(folders), None


def parse_tree(root: Path | str) -> pd.DataFrame:
    """One DataFrame row per data row of every `.out` file under `root`."""
    root = Path(root)
    env_col, nodes_col, size_col, gflops_col, ms_col, status_col = [], [], [], [], [], []
    for path in sorted(root.rglob("*.out")):
        environment, nodes = context(path.relative_to(root))
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                match = ROW.match(line)
                if match is None:
                    continue
                ints = match.group(1).split()
                gflops, ms = PAIR.findall(match.group(2))[0]  # first pair = MAGMA's own
                env_col.append(environment)
                nodes_col.append(nodes)
                size_col.append("x".join(ints[-3:]) if len(ints) >= 3 else "x".join(ints))
                gflops_col.append(_float(gflops))
                ms_col.append(_float(ms))
                status_col.append(match.group(4) or "")
    return pd.DataFrame(
        {"environment": env_col, "nodes": nodes_col, "problem_size": size_col,
         "gflops": gflops_col, "time_ms": ms_col, "status": status_col}
    )


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """count, median, quartiles, min, max of Gflop/s and ms per (environment, nodes, size)."""
    grouped = rows.groupby(KEYS, sort=True)[METRICS]
    parts = {
        "count": grouped.count(),
        "median": grouped.median(),
        "q1": grouped.quantile(0.25),
        "q3": grouped.quantile(0.75),
        "min": grouped.min(),
        "max": grouped.max(),
    }
    return pd.concat(parts, axis=1)


def run(root: Path | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole baseline stage: parse + groupby. Returns (rows, summary)."""
    rows = parse_tree(root)
    return rows, summarize(rows)


if __name__ == "__main__":
    import sys

    rows, summary = run(sys.argv[1])
    print(f"{len(rows):,} rows, {len(summary):,} groups")
    print(summary.head(20).to_string())
