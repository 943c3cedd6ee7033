"""Export a chart as a Vega-Lite spec, reuse the spec, and build HTML reports from it.

Usage: python examples/export_report.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import html
import json
import os
import sys
import tempfile
from pathlib import Path

import polars as pl

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts
from polars_cumdev.datasets import census
from polars_cumdev.report.subpopulation import render_html, report


def output_dir() -> Path:
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUMDEV_EXAMPLES_OUT")
    path = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="cumdev-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    out = output_dir()
    households = census()
    columns = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}

    # 1. A chart is a Vega-Lite specification: save it as plain JSON.
    cedar = households.cumdev.curve(subpop=pl.col("county") == "Cedar", **columns)
    charts.save(charts.cumulative(cedar, score_label="log10 of income"), out / "cedar.vl.json")

    # 2. Anyone can reuse that file: load it, edit it, render it as a standalone page.
    spec = json.loads((out / "cedar.vl.json").read_text(encoding="utf-8"))
    spec["description"] = "Cedar County against the whole survey"
    charts.save(spec, out / "cedar.html")  # self-contained: JavaScript inlined

    # 3. A custom report page: our own sections around the exported spec.
    ranked = households.cumdev.screen(by="county", **columns)
    top = ranked.head(3).select("county", "n", "kuiper_z", "kuiper_q")
    rows = "".join(
        f"<li>{html.escape(r['county'])}: z = {r['kuiper_z']:.1f}, q = {r['kuiper_q']:.2g}</li>"
        for r in top.iter_rows(named=True)
    )
    page = render_html(
        "Internet access by county",
        [
            ("Overview", f"<ul>{rows}</ul>", [charts.screen(ranked, by="county").to_dict()]),
            ("Cedar, drilled down", "<p>The slope is the deviation.</p>", [spec]),
        ],
    )
    (out / "report.html").write_text(page, encoding="utf-8")

    # 4. Or the ready-made report: table, overview, and the top groups' drill-downs.
    report(households, "county", path=out / "full_report.html", top=2, **columns)
    print(f"wrote cedar.vl.json, cedar.html, report.html and full_report.html in {out}")


if __name__ == "__main__":
    main()
