"""Writes the generated files of examples/analysis/ (labelled as generated in examples/NOTICE).

    python tests/make_examples.py

A result folder of seed 003's shape holds figures (PNG and PDF), a log to check for ERROR,
WARNING and ANALYSIS COMPLETED SUCCESSFULLY, a Markdown summary and a Parquet copy of a table.
No public file of those kinds came with a licence that lets it be copied, so these are made
here from the real specMoE table in examples/specmoe (MIT): the PNG and the PDF draw its
batch-1 speedups, the log and the summary describe it. Standard library and pandas only: the
PNG is written with zlib, the PDF by hand. The output is the same on every run.
"""

from __future__ import annotations

import csv
import struct
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TABLE = EXAMPLES / "specmoe" / "research_paper_table.csv"
OUT = EXAMPLES / "analysis"


def batch1_speedups() -> list[tuple[str, float]]:
    with open(TABLE, encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["Batch Size"] == "1"]
    return [(r["Strategy"], float(r["Speedup"].rstrip("×"))) for r in rows]


def png(width: int, height: int, pixels: np.ndarray) -> bytes:
    """An RGB PNG (8 bits per channel, no filter)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def bar_chart(values: list[float], width: int = 320, height: int = 200) -> bytes:
    pixels = np.full((height, width, 3), 255, np.uint8)
    pixels[height - 20, 20:width - 10] = 0  # x axis
    pixels[10:height - 20, 20] = 0  # y axis
    top = max(values)
    slot = (width - 40) // len(values)
    for i, value in enumerate(values):
        bar = int((height - 40) * value / top)
        left = 25 + i * slot
        pixels[height - 20 - bar:height - 20, left:left + slot - 8] = (31, 119, 180)
    return png(width, height, pixels)


def pdf(pages: list[list[str]]) -> bytes:
    """A PDF of text pages (Helvetica 12), one object per page, a correct xref table."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    font = 3
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for lines in pages:
        text = "BT /F1 12 Tf 50 780 Td 16 TL " + " ".join(f"({ln.replace('(', '[').replace(')', ']')}) '" for ln in lines) + " ET"
        objects.append(f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
        content = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def log(speedups: list[tuple[str, float]]) -> str:
    lines = ["2025-07-21 19:24:01 INFO Starting analysis of specMoE results (evalSwitchB8)",
             "2025-07-21 19:24:01 INFO Reading specmoe/research_paper_table.csv: 25 rows, 8 columns"]
    for name, value in speedups:
        lines.append(f"2025-07-21 19:24:02 INFO {name}: speedup {value:.2f}x over on-demand at batch 1")
    lines += ["2025-07-21 19:24:02 WARNING On-Demand has no prefetching: its cache hit rate is 0.0 %, speedup fixed at 1x",
              "2025-07-21 19:24:03 ERROR results_8xA100.csv not found: the 8xA100 comparison is skipped",
              "2025-07-21 19:24:03 INFO Writing figures/speedup.png and figures/speedup.pdf",
              "2025-07-21 19:24:04 INFO Writing summary.md",
              "ANALYSIS COMPLETED SUCCESSFULLY"]
    return "\n".join(lines) + "\n"


def summary(speedups: list[tuple[str, float]]) -> str:
    rows = "\n".join(f"| {name} | {value:.2f}× |" for name, value in speedups)
    return f"""# specMoE expert prefetching: summary

Batch size 1, Switch Transformer (`specmoe/research_paper_table.csv`).

| Strategy | Speedup over on-demand |
|---|---|
{rows}

## Expected results (sanity check)

- Oracle prefetching: about 16× (see `expected.toml`).
- Learned prefetchers (Intelligent, Top-K, Multi-Look): at least 10×.

![speedup](figures/speedup.png)
"""


def main() -> None:
    speedups = batch1_speedups()
    (OUT / "figures").mkdir(parents=True, exist_ok=True)
    (OUT / "figures" / "speedup.png").write_bytes(bar_chart([v for _, v in speedups]))
    table = [f"{name:<12} {value:6.2f}x" for name, value in speedups]
    (OUT / "figures" / "speedup.pdf").write_bytes(pdf([["Speedup over on-demand, batch 1", "", *table],
                                                       ["Source: specmoe/research_paper_table.csv (MIT)"]]))
    (OUT / "analysis.log").write_text(log(speedups), encoding="utf-8")
    (OUT / "summary.md").write_text(summary(speedups), encoding="utf-8")
    import pandas as pd

    frame = pd.read_csv(EXAMPLES / "specmoe" / "comprehensive_summary.csv")
    frame.to_parquet(OUT / "comprehensive_summary.parquet", index=False, compression="zstd")


if __name__ == "__main__":
    main()
