"""Compare two counties directly (no full population), and every county with one.

Usage: python examples/compare_groups.py [OUTPUT_DIR]
(or set CUMDEV_EXAMPLES_OUT; by default a new temporary directory is used).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polars as pl

from polars_cumdev import charts
from polars_cumdev.compare import compare, compare_all, compare_curve
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
    # Marlow was built with more internet access, Cedar with less at low incomes.
    first, second = pl.col("county") == "Marlow", pl.col("county") == "Cedar"

    # Incomes are rounded, so the two counties share some scores: the method
    # needs interleaved, distinct scores, and "dither" separates shared ones
    # by about 1e-8 (deterministically) instead of raising TiedScoresError.
    pair = compare(households, first, second, ties="dither", **columns)
    print("Marlow minus Cedar:")
    print(pair.select("n_first", "n_second", "kuiper", "kuiper_z", "kuiper_p", "effect"))

    # The curve: its slope is the difference between the two counties.
    points = compare_curve(households, first, second, ties="dither", **columns)
    chart = charts.cumulative(
        points, kind="compare", title="Marlow minus Cedar", score_label="log10 of income"
    )
    charts.save(chart, out / "compare.svg")
    print(f"wrote {out / 'compare.svg'}")

    # Every county against one reference county, in one query.
    against = compare_all(households, "county", "Oakridge", ties="dither", **columns)
    print("counties most different from Oakridge:")
    print(against.head(3))


if __name__ == "__main__":
    main()
