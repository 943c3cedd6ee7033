"""Draw docs/images/recalibration_before_after.svg, the picture of the recalibration page.

Run from the repository root: ``python docs/make_recalibration_image.py
[OUTPUT_DIR]`` (default ``docs/images``). Deterministic: the bundled data have
fixed seeds, and the split is by row number.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.datasets import census_scored
from polars_cumdev.recalibration import before_after_audits


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    family = pc.segments(
        ["county"], ["vehicles", "children", "log10_income"], depth=2, feature_levels={"county": 41}
    )
    rows = census_scored().with_row_index("row")
    train = rows.filter(pl.col("row") % 2 == 0)
    test = rows.filter(pl.col("row") % 2 == 1)
    fix = train.cumdev.recalibrate("score", "has_internet", "WGTP", segments=family)
    before, after = before_after_audits(fix, test)
    return [charts.save(charts.before_after(before, after), out / "recalibration_before_after.svg")]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "images"
    for path in main(target):
        print(path)
