"""``cumdev calibration``: calibration of predicted probabilities from a file.

Prints the ECCE table (one row, or one per group of ``--by``, with its
q-values), with ``--corp`` the CORP decomposition of the Brier score;
``--output`` saves the ECCE table; ``--out`` draws the
cumulative calibration plot (of the group with the largest ECCE-R z) and,
with ``--corp``, the CORP diagram beside it; ``--report`` writes both per
group into an HTML page (:mod:`polars_cumdev.report.calibration`).
"""

from __future__ import annotations

import argparse
from typing import Any

from polars_cumdev.cli.arguments import (
    band_argument,
    data_arguments,
    fraction_value,
    level_value,
    positive_int,
    table_arguments,
)
from polars_cumdev.cli.input import check_out, read_columns
from polars_cumdev.cli.output import (
    CHART_SUFFIXES,
    DATA_SUFFIXES,
    TABLE_SUFFIXES,
    save_chart,
    save_table,
    say,
    show,
)
from polars_cumdev.method.groups import top_group

__all__ = ["add_command"]

_SHOWN = (
    "n",
    "ecce_r",
    "ecce_mad",
    "sigma",
    "ecce_r_z",
    "ecce_mad_z",
    "ecce_r_p",
    "ecce_r_q",
    "ecce_mad_p",
    "ecce_mad_q",
    "delta",
    "located",
    "note",
)
_CORP_SHOWN = ("n", "brier", "mcb", "dsc", "unc", "base_rate", "blocks")


def _run(args: argparse.Namespace) -> None:
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES))
    page = check_out(args.report, (".html",))
    check_out(args.output, None if args.format else TABLE_SUFFIXES, bare=True)
    frame = read_columns(args.path, args.score, args.response, args.weight)
    say("measuring calibration ...")
    table = frame.cumdev.calibration(
        score=args.score, response=args.response, weight=args.weight, by=args.by
    ).collect()
    show(table, [*(args.by or []), *_SHOWN], args.rows)
    if args.output:
        save_table(table, args.output, args.format)
    if args.corp:
        decomposition = frame.cumdev.corp(
            score=args.score, response=args.response, weight=args.weight, by=args.by
        ).collect()
        print("Brier score = MCB (miscalibration) - DSC (discrimination) + UNC (uncertainty):")
        show(decomposition, [*(args.by or []), *_CORP_SHOWN], args.rows)
    if page is not None:
        from polars_cumdev.report.calibration import calibration_report

        say(f"writing report {page} ...")
        calibration_report(
            frame,
            args.score,
            args.response,
            args.weight,
            path=page,
            by=args.by,
            resamples=args.resamples,
            level=args.level,
            seed=args.seed,
            band=args.band,
        )
        say(f"wrote {page}")
    if target is None:
        return
    subset = frame
    label = "all predictions"
    if args.by:
        selection, label, _ = top_group(table, args.by, "ecce_r_z")
        subset = frame.filter(selection)  # null-aware: the null group too
        say(f"drawing the group with the largest ECCE-R z ({label}) ...")
    corp_args = {"resamples": args.resamples, "level": args.level, "seed": args.seed}
    data_out = target.suffix.lower() in DATA_SUFFIXES
    if args.corp and data_out:  # the CORP curve instead of the cumulative points
        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        ).collect()
        save_table(fitted, str(target), target.suffix.lower().lstrip("."))
        return
    points = subset.cumdev.calibration_curve(
        score=args.score, response=args.response, weight=args.weight, fraction=args.fraction
    ).collect()
    if data_out:
        save_table(points, str(target), target.suffix.lower().lstrip("."))
        return
    from polars_cumdev import charts

    chart = charts.cumulative(
        points,
        subject=f"calibration of {args.score}, {label}",
        score_label=args.score,
        y_label=f"cumulative {args.response} minus {args.score}",
        kind="calibration",
        band=args.band,
    )
    save_chart(chart, target)
    if args.corp:  # the CORP diagram beside it: FILE-corp.SUFFIX
        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        )
        summary = subset.cumdev.corp(score=args.score, response=args.response, weight=args.weight)
        diagram = charts.corp(
            fitted, summary=summary, score_label=args.score, title=f"CORP diagram: {label}"
        )
        save_chart(diagram, target.with_name(f"{target.stem}-corp{target.suffix}"))


def add_command(commands: Any) -> None:
    """Register ``calibration`` on the subcommand parsers of :func:`polars_cumdev.cli.main`."""
    calibration = commands.add_parser(
        "calibration", help="calibration of predicted probabilities (ECCE-R, ECCE-MAD)"
    )
    data_arguments(calibration, by=False, several=False)
    calibration.add_argument(
        "--by", action="append", default=None, help="group column (repeatable, optional)"
    )
    calibration.add_argument(
        "--fraction", type=fraction_value, default=1.0, help="zoom of the chart (see curve)"
    )
    table_arguments(calibration)
    calibration.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="cumulative chart (of the worst group with --by), or its points (.csv, .parquet); "
        "with --corp the CORP diagram goes beside it in FILE-corp.SUFFIX (a data file then "
        "holds the CORP curve instead of the points)",
    )
    calibration.add_argument(
        "--corp",
        action="store_true",
        help="also print the CORP decomposition of the Brier score (MCB, DSC, UNC)",
    )
    calibration.add_argument(
        "--report",
        default=None,
        metavar="FILE.html",
        help="write an HTML report: cumulative plot and CORP diagram side by side, per group",
    )
    band_argument(calibration)
    calibration.add_argument(
        "--resamples",
        type=positive_int,
        default=100,
        help="resamples of the CORP consistency band (default 100; 0 for none)",
    )
    calibration.add_argument(
        "--level", type=level_value, default=0.9, help="coverage of the CORP band (default 0.9)"
    )
    calibration.add_argument("--seed", type=positive_int, default=0, help="seed of the band")
    calibration.set_defaults(run=_run)
