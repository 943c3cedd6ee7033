"""Draw docs/images/paired.svg, the picture of the paired-samples workflow.

Run from the repository root: ``python docs/make_paired_image.py [OUTPUT_DIR]``
(default ``docs/images``). Deterministic: the data have fixed seeds. Kept
apart from ``make_images.py`` (the README's pictures) so that each can change
alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars_cumdev  # noqa: F401  (registers the `cumdev` namespace)
from polars_cumdev import charts
from polars_cumdev.datasets import paired_synthetic


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    points = paired_synthetic().cumdev.paired_curve("score", "first", "second", "weight")
    chart = charts.cumulative(points, kind="paired", title="first minus second")
    return [charts.save(chart, out / "paired.svg")]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "images"
    for path in main(target):
        print(path)
