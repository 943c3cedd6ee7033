"""``cumdev calibration --by-time COLUMN --every 1w``: calibration window by window.

Prints one row per time window (and group of ``--by``): the ECCE-R test of
each window and the family-wise adjustment across windows
(:func:`polars_cumdev.drift.calibration_drift`), then one line naming the
windows flagged at the family-wise level, or saying that none is. ``--out``
draws the drift chart (:func:`polars_cumdev.charts.drift`) or, with a data
suffix, writes the table.
"""

from __future__ import annotations

import argparse
from typing import Any

import polars as pl

from polars_cumdev.cli.arguments import level_value
from polars_cumdev.cli.input import check_out, read_columns
from polars_cumdev.cli.output import (
    CHART_SUFFIXES,
    DATA_SUFFIXES,
    save_chart,
    save_table,
    say,
    show,
)
from polars_cumdev.drift import ADJUSTMENTS, calibration_drift
from polars_cumdev.errors import CumdevError

__all__ = ["add_drift_arguments", "run_drift"]

_SHOWN = ("n", "ecce_r", "sigma", "ecce_r_z", "ecce_r_p", "fw_p", "critical_z", "flagged", "note")


def add_drift_arguments(parser: Any) -> None:
    """The options of calibration over time, on the ``calibration`` parser."""
    parser.add_argument(
        "--by-time",
        default=None,
        metavar="COLUMN",
        help="test calibration per time window of this date/time column (drift monitoring)",
    )
    parser.add_argument(
        "--every",
        default="1w",
        metavar="DURATION",
        help="window length with --by-time, a Polars duration: 1d, 1w, 1mo, ... (default 1w)",
    )
    parser.add_argument(
        "--period",
        default=None,
        metavar="DURATION",
        help="with --by-time: overlapping windows of this length, one starting every --every "
        "(a multiple of it, e.g. --every 1w --period 4w)",
    )
    parser.add_argument(
        "--alpha",
        type=level_value,
        default=0.05,
        help="family-wise level across windows with --by-time (default 0.05)",
    )
    parser.add_argument(
        "--adjustment",
        choices=ADJUSTMENTS,
        default="holm",
        help="family-wise adjustment across windows with --by-time (default holm)",
    )


def _as_time(frame: pl.LazyFrame, column: str) -> pl.LazyFrame:
    """Text dates (CSV) parsed as datetimes; a cell that does not parse is an error."""
    schema = frame.collect_schema()
    if column not in schema:
        raise CumdevError(f"--by-time column {column!r} not found; the file has {list(schema)}")
    dtype = schema[column]
    if dtype in (pl.Date, pl.Datetime):
        return frame
    if dtype != pl.String:
        raise CumdevError(f"--by-time column {column!r} has dtype {dtype}; it must hold dates")
    parsed = pl.col(column).str.to_datetime(strict=False)
    bad = frame.select((parsed.is_null() & pl.col(column).is_not_null()).sum()).collect().item()
    if bad:
        raise CumdevError(
            f"--by-time column {column!r} has {bad} value(s) that do not parse as dates "
            "(use ISO 8601, e.g. 2024-01-31 or 2024-01-31T12:00:00)"
        )
    return frame.with_columns(parsed)


def run_drift(args: argparse.Namespace) -> None:
    """Run ``cumdev calibration --by-time ...`` (see the module docstring)."""
    if args.corp or args.report:
        raise CumdevError("--by-time cannot be combined with --corp or --report")
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES))
    time = args.by_time
    frame = _as_time(read_columns(args.path, args.score, args.response, args.weight), time)
    say(f"measuring calibration per {args.every} window of {time} ...")
    table = calibration_drift(
        frame,
        args.score,
        args.response,
        args.weight,
        time=time,
        every=args.every,
        period=args.period,
        by=args.by,
        alpha=args.alpha,
        adjustment=args.adjustment,
    ).collect()
    # The note only where a window has no z (too few scores); the located stretch is
    # not part of this table.
    shown = table.with_columns(
        pl.when(pl.col("ecce_r_z").is_null()).then(pl.col("note")).alias("note")
    )
    show(shown, [*(args.by or []), time, *_SHOWN], args.rows)
    flagged = table.filter(pl.col("flagged"))
    method = "Holm" if args.adjustment == "holm" else "Bonferroni"
    level = f"family-wise level {args.alpha:g} ({method}, {table['windows'][0]} windows)"
    if flagged.height:
        names = ", ".join(str(v).removesuffix(" 00:00:00") for v in flagged[time].to_list())
        print(f"miscalibrated at the {level}: {names}")
    else:
        print(f"no window miscalibrated at the {level}")
    if target is None:
        return
    if target.suffix.lower() in DATA_SUFFIXES:
        save_table(table, str(target), target.suffix.lower().lstrip("."))
        return
    if args.by:
        raise CumdevError("--out draws one series of windows: drop --by, or write a data file")
    from polars_cumdev import charts

    save_chart(charts.drift(table, time=time, title=None), target)
