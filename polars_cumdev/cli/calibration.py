"""``cumdev calibration``: calibration of predicted probabilities from a file.

Prints the ECCE table (one row, or one per group of ``--by``, with its
q-values), with ``--corp`` the CORP decomposition of the Brier score;
``--output`` saves the ECCE table; ``--out`` draws the
cumulative calibration plot (of the group with the largest ECCE-R z,
:mod:`polars_cumdev.cli.calibration_curve`) and, with ``--corp``, the CORP
diagram beside it; ``--report`` writes both per
group into an HTML page (:mod:`polars_cumdev.report.calibration`).

Beyond one probability per row: ``--kind top-label`` or ``--kind class-wise``
with the K probability columns in ``--score`` (comma-separated or repeated)
and the class labels in ``--response``; ``--target mean`` for predicted means
and ``--quantile ALPHA`` for predicted quantiles of a real response
(:func:`polars_cumdev.calibration.calibration`).
"""

from __future__ import annotations

import argparse
from typing import Any

from polars_cumdev.cli import memory
from polars_cumdev.cli.arguments import (
    band_argument,
    data_arguments,
    fraction_value,
    level_argument,
    level_value,
    positive_int,
    progress_argument,
    table_arguments,
)
from polars_cumdev.cli.calibration_curve import draw_curve
from polars_cumdev.cli.drift import add_drift_arguments, run_drift
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
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.groups import group_selection, top_group

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
_CLASSWISE_SHOWN = (
    "n",
    "ecce_r",
    "sigma",
    "ecce_r_z",
    "ecce_r_p",
    "ecce_r_q",
    "ecce_r_holm",
    "located",
    "note",
)
_CORP_SHOWN = ("n", "brier", "mcb", "dsc", "unc", "base_rate", "blocks")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The library's ``kind``, ``target`` and ``alpha`` from the command's flags."""
    if args.quantile is not None and args.target not in (None, "quantile"):
        raise InvalidParameterError(f"--quantile and --target {args.target} contradict each other")
    target = "quantile" if args.quantile is not None else (args.target or "probability")
    if target == "quantile" and args.quantile is None:
        raise InvalidParameterError("--target quantile needs --quantile ALPHA, the level")
    if not isinstance(args.score, str) and args.kind is None:
        raise InvalidParameterError(
            f"--score must name one column here, got {', '.join(args.score)!r}; several "
            "probability columns need --kind top-label or --kind class-wise"
        )
    special = args.kind is not None or target != "probability"
    if special and args.corp:
        raise InvalidParameterError(
            "--corp decomposes the Brier score of one probability per row; drop it with "
            "--kind, --target or --quantile"
        )
    if args.kind is not None and args.report:
        raise InvalidParameterError("--report is not yet written for --kind; use --out")
    return {"kind": args.kind, "target": target, "alpha": args.quantile}


def _run(args: argparse.Namespace) -> None:
    options = _options(args)
    special = options["kind"] is not None or options["target"] != "probability"
    if args.by_time is not None:  # calibration window by window (cli/drift.py)
        if special:
            raise InvalidParameterError(
                "--by-time follows one probability per row; drop --kind, --target or --quantile"
            )
        run_drift(args)
        return
    if special:
        _run_kind(args, options)
        return
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES), source=args.path)
    memory.refuse_if_too_large(args.path, "calibration")
    page = check_out(args.report, (".html",), source=args.path)
    check_out(args.output, None if args.format else TABLE_SUFFIXES, bare=True, source=args.path)
    frame = read_columns(args.path, args.score, args.response, args.weight)
    say("measuring calibration ...")
    table = frame.cumdev.calibration(
        score=args.score, response=args.response, weight=args.weight, by=args.by, level=args.level
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
            corp_level=args.corp_level,
            seed=args.seed,
            band=args.band,
            level=args.level,
        )
        say(f"wrote {page}")
    if target is None:
        return
    subset = frame
    label = "all predictions"
    row = table.row(0, named=True) if table.height else None
    judged = "ecce_r_p"
    if args.by:
        judged = "ecce_r_q"
        selection, label, row = top_group(table, args.by, "ecce_r_z")
        subset = frame.filter(selection)  # null-aware: the null group too
        say(f"drawing the group with the largest ECCE-R z ({label}) ...")
    corp_args = {"resamples": args.resamples, "level": args.corp_level, "seed": args.seed}
    data_out = target.suffix.lower() in DATA_SUFFIXES
    if args.corp and data_out:  # the CORP curve instead of the cumulative points
        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        ).collect()
        save_table(fitted, str(target), target.suffix.lower().lstrip("."))
        return
    draw_curve(
        args,
        subset,
        target,
        (row, judged),
        subject=f"calibration of {args.score}, {label}",
        score_label=args.score,
    )
    if args.corp:  # the CORP diagram beside it: FILE-corp.SUFFIX
        from polars_cumdev import charts

        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        )
        summary = subset.cumdev.corp(score=args.score, response=args.response, weight=args.weight)
        diagram = charts.corp(
            fitted, summary=summary, score_label=args.score, title=f"CORP diagram: {label}"
        )
        save_chart(diagram, target.with_name(f"{target.stem}-corp{target.suffix}"))


def _run_kind(args: argparse.Namespace, options: dict[str, Any]) -> None:
    """Multiclass probabilities, or predicted means or quantiles: the table and the chart."""
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES), source=args.path)
    memory.refuse_if_too_large(args.path, "calibration")
    page = check_out(args.report, (".html",), source=args.path)
    multiclass = options["kind"] is not None
    if multiclass:  # the labels may be class names: not checked as numbers
        frame = read_columns(args.path, args.score, args.weight)
    else:
        frame = read_columns(args.path, args.score, args.response, args.weight)
    say("measuring calibration ...")
    keys = list(args.by or [])
    table = frame.cumdev.calibration(
        score=args.score,
        response=args.response,
        weight=args.weight,
        by=args.by,
        level=args.level,
        **options,
    ).collect()
    classwise = options["kind"] == "class-wise"
    # Class-wise rows add the class and Holm's p: a shorter row, so that it fits a terminal.
    shown = _CLASSWISE_SHOWN if classwise else _SHOWN
    show(table, [*keys, *(["class"] if classwise else []), *shown], args.rows)
    if page is not None:  # a mean or a quantile (not --kind): the cumulative views alone
        from polars_cumdev.report.calibration import calibration_report

        say(f"writing report {page} ...")
        calibration_report(
            frame,
            args.score,
            args.response,
            args.weight,
            path=page,
            by=args.by,
            band=args.band,
            target=options["target"],
            alpha=options["alpha"],
            level=args.level,
        )
        say(f"wrote {page}")
    if target is None:
        return
    subset, label, extra = frame, "all predictions", {}
    # The drawn row is judged as its table judges it: by the q-value over the rows.
    row, judged = (table.row(0, named=True) if table.height else None), "ecce_r_p"
    if keys or classwise:
        judged = "ecce_r_q"
        _, label, row = top_group(table, [*keys, *(["class"] if classwise else [])], "ecce_r_z")
        if keys:
            subset = frame.filter(group_selection(keys, row))
        if classwise:
            extra = {"class_": row["class"]}
        what = "class" if classwise else "group"
        say(f"drawing the {what} with the largest ECCE-R z ({label}) ...")
    score = args.score if isinstance(args.score, str) else "probability"
    if options["kind"] == "top-label":
        score = "top probability"
    elif classwise:
        score = f"probability of {extra['class_']}"
    draw_curve(
        args,
        subset,
        target,
        (row, judged),
        subject=f"calibration ({options['kind'] or options['target']}), {label}",
        score_label=score,
        options={**options, **extra},
    )


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
    calibration.add_argument(
        "--kind",
        choices=["top-label", "class-wise"],
        default=None,
        help="multiclass probabilities: --score names the K probability columns "
        "(comma-separated or repeated), --response the class (index 0..K-1 or a score "
        "column's name); top-label: the top probability against 'the predicted class was "
        "right'; class-wise: one row per class (one-vs-rest) with Holm and BH adjustments",
    )
    calibration.add_argument(
        "--target",
        choices=["probability", "mean", "quantile"],
        default=None,
        help="what --score predicts: a probability (default), the mean of a real response "
        "(sigma from successive differences of the residuals), or a quantile (with --quantile)",
    )
    calibration.add_argument(
        "--quantile",
        type=_alpha,
        default=None,
        metavar="ALPHA",
        help="--score predicts the ALPHA-quantile of --response (e.g. 0.9): compares "
        "1{response <= score} with ALPHA",
    )
    band_argument(calibration)
    calibration.add_argument(
        "--resamples",
        type=positive_int,
        default=100,
        help="resamples of the CORP consistency band (default 100; 0 for none)",
    )
    calibration.add_argument(
        "--corp-level",
        type=level_value,
        default=0.9,
        help="coverage of the CORP band (default 0.9)",
    )
    level_argument(calibration)
    progress_argument(calibration)
    calibration.add_argument("--seed", type=positive_int, default=0, help="seed of the band")
    add_drift_arguments(calibration)
    calibration.set_defaults(run=_run, several_scores=True)  # --kind takes several; _options


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1), got {text}")
    return value
