"""Drill down into one county: its cumulative curve, a zoom, and SVG charts.

Usage: python examples/drill_down.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polars as pl

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts
from polars_cumdev.datasets import census


def output_dir() -> Path:
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUMDEV_EXAMPLES_OUT")
    path = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="cumdev-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    out = output_dir()
    households = census().lazy()
    columns = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}

    # 1. Screen, and take the county that deviates most.
    ranked = households.cumdev.screen(by="county", **columns).collect()
    top = ranked["county"][0]
    print(f"most deviating county: {top} (Kuiper = {ranked['kuiper_z'][0]:.1f} sigma)")

    # 2. Its cumulative curve: one row per distinct income in the county.
    curve = households.cumdev.curve(subpop=pl.col("county") == top, **columns).collect()
    print(curve.select("k", "a", "score", "cumdiff", "full_mean", "response_mean").head())

    # The slope of the curve over a range of scores is the deviation there.
    below = curve.filter(pl.col("score") <= 4.5)
    print(f"average deviation below 10^4.5: {below['cumdiff'][-1] / below['a'][-1]:+.3f}")

    # 3. Charts: the full curve, and a zoom on the lowest 20% of the scores.
    charts.save(charts.cumulative(curve, score_label="log10 of income"), out / "curve.svg")
    zoomed = households.cumdev.curve(
        subpop=pl.col("county") == top, fraction=0.2, **columns
    ).collect()
    charts.save(charts.cumulative(zoomed, score_label="log10 of income"), out / "zoom.svg")
    print(f"wrote {out / 'curve.svg'} and {out / 'zoom.svg'}")


if __name__ == "__main__":
    main()
