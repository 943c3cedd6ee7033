"""The calibration curve that ``cumdev calibration --out`` writes: as data or as a chart.

The command draws one curve: of all predictions, or of the group (or class)
with the largest ECCE-R z. :func:`draw_curve` computes it, marks its located
stretch only where the table's p- or q-value supports it, and writes the
points to a data file or the cumulative plot to a chart file, its vertical
axis named for what was predicted (a probability, a mean, a quantile, or a
class's probability).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polars_cumdev.cli.output import DATA_SUFFIXES, drawn_as_ranked, save_chart, save_table

if TYPE_CHECKING:
    import polars as pl

__all__ = ["draw_curve"]


def _y_label(args: argparse.Namespace, score: str) -> str:
    if args.quantile is not None:
        return f"cumulative share of {args.response} <= {score}, minus {args.quantile:g}"
    if args.kind == "top-label":
        return "cumulative share right minus top probability"
    if args.kind == "class-wise":
        return "cumulative share of the class minus its probability"
    return f"cumulative {args.response} minus {score}"


def draw_curve(
    args: argparse.Namespace,
    subset: pl.LazyFrame,
    target: Path,
    ranked: tuple[dict[str, Any] | None, str],
    *,
    subject: str,
    score_label: str,
    options: dict[str, Any] | None = None,
) -> None:
    """The drawn group's calibration curve, saved as data or as a chart at ``target``.

    ``ranked`` is the group's row of the table and the column that judges it
    there (its p-value, or its q-value among several groups): the chart
    states a finding only where that column supports one.
    """
    points = subset.cumdev.calibration_curve(
        score=args.score,
        response=args.response,
        weight=args.weight,
        fraction=args.fraction,
        level=args.level,
        **(options or {}),
    ).collect()
    row, judged = ranked
    points, line = drawn_as_ranked(points, row, args.level, judged)
    if target.suffix.lower() in DATA_SUFFIXES:
        save_table(points, str(target), target.suffix.lower().lstrip("."))
        return
    from polars_cumdev import charts

    chart = charts.cumulative(
        points.drop("class", strict=False),
        subject=subject,
        score_label=score_label,
        y_label=_y_label(args, score_label),
        kind="calibration",
        band=args.band,
        significance=line,
    )
    save_chart(chart, target)
