"""Draw docs/images/multicalibration_funnel.svg, the picture of the multicalibration page.

Run from the repository root: ``python docs/make_multicalibration_image.py
[OUTPUT_DIR]`` (default ``docs/images``). Deterministic: the bundled data have
fixed seeds.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.datasets import census_scored


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    family = pc.segments(
        ["county"], ["vehicles", "children", "log10_income"], depth=2, feature_levels={"county": 41}
    )
    table = census_scored().cumdev.multicalibration(
        "score", "has_internet", "WGTP", segments=family
    )
    chart = charts.funnel(table, title="Calibration of the internet model in every segment")
    return [charts.save(chart, out / "multicalibration_funnel.svg")]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "images"
    for path in main(target):
        print(path)
