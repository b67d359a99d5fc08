"""The seed study's own parser (seed 000, analysis/magma/1-run-analysis.py `parse_magma`),
rewritten here without its plotting, feeding the same pandas groupby as baseline_magma.

Per file: read the text, split lines, keep lines containing `(  ---  )` (the seed's marker of
a result line), strip parentheses with `re.sub`, split on spaces, and append one dict per
row. The seed raises on a batch count other than 300; here non-batched rows (gemm) are read
from their own positions instead, so both baselines and gpuscope see the same rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from baseline_magma import context, summarize


def parse_tree(root: Path | str) -> pd.DataFrame:
    root = Path(root)
    results = []
    for path in sorted(root.rglob("*.out")):
        environment, nodes = context(path.relative_to(root))
        item = path.read_text(errors="replace")
        for line in item.split("\n"):
            if "(  ---  )" not in line:
                continue
            parts = [x for x in re.sub("([(]|[)])", "", line).split(" ") if x]
            batched = len(parts) in (9, 10)  # BatchCount M N K perf time --- --- --- [status]
            first = 1 if batched else 0
            results.append({
                "problem_size": f"{parts[first]}x{parts[first + 1]}x{parts[first + 2]}",
                "gflops": float(parts[first + 3]),
                "time_ms": float(parts[first + 4]),
                "environment": environment,
                "nodes": nodes,
            })
    return pd.DataFrame(results)


def run(root: Path | str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = parse_tree(root)
    return rows, summarize(rows)
