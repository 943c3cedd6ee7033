"""``cumdev paired``: paired samples from a file (:mod:`polars_cumdev.paired`).

Prints one row per group (or one row overall), ranked like ``cumdev screen``,
for "first minus second" at the same score; ``--output`` saves the table and
``--out`` draws the cumulative plot (of the top-ranked group with ``--by``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from polars_cumdev.cli import memory
from polars_cumdev.cli.arguments import (
    band_argument,
    fraction_value,
    level_argument,
    progress_argument,
    score_argument,
    table_arguments,
)
from polars_cumdev.cli.input import check_out, read_columns
from polars_cumdev.cli.output import (
    CHART_SUFFIXES,
    DATA_SUFFIXES,
    RANKED_COLUMNS,
    TABLE_SUFFIXES,
    drawn_as_ranked,
    note,
    save_chart,
    save_table,
    say,
    show,
)
from polars_cumdev.method.groups import top_group

__all__ = ["add_command"]


def _run(args: argparse.Namespace) -> None:
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES), source=args.path)
    memory.refuse_if_too_large(args.path, "paired")
    check_out(args.output, None if args.format else TABLE_SUFFIXES, bare=True, source=args.path)
    frame = read_columns(args.path, args.score, args.first, args.second, args.weight)
    scores = [args.score] if isinstance(args.score, str) else list(args.score)
    by = args.by or []
    where = f" in every group of {', '.join(by)}" if by else ""
    same = ", ".join(scores)
    say(f"comparing {args.first} with {args.second} at the same {same}{where} ...")
    started = time.perf_counter()
    table = frame.cumdev.paired(
        args.score,
        args.first,
        args.second,
        args.weight,
        by=by or None,
        variance=args.variance,
        level=args.level,
    ).collect()
    say(f"compared {table.height} group(s) in {time.perf_counter() - started:.2f} s")
    print(f"{args.first} minus {args.second}, at the same {same} ({args.variance} sigma)")
    if "ordering" in table.columns and table.height:
        note(f"rows ordered along {table['ordering'][0]}")
    show(table, [*by, *RANKED_COLUMNS], args.rows)
    if args.output:
        save_table(table, args.output, args.format)
    if target is None:
        return
    title = f"{args.first} minus {args.second}"
    condition = None
    row = None
    if by:
        condition, label, row = top_group(table, by, "kuiper_z")
        title = f"{label}: {title}"
    # The group is selected inside paired_curve, after the covariates are
    # ordered over the whole file, so the curve is the one the table ranked.
    points = frame.cumdev.paired_curve(
        args.score,
        args.first,
        args.second,
        args.weight,
        subpop=condition,
        variance=args.variance,
        fraction=args.fraction,
        level=args.level,
    ).collect()
    points, line = drawn_as_ranked(points, row, args.level)
    if target.suffix.lower() in DATA_SUFFIXES:
        save_table(points, str(target), target.suffix.lower().lstrip("."))
        return
    from polars_cumdev import charts

    axis = args.score if isinstance(args.score, str) else "score"  # "score": covariate ticks
    chart = charts.cumulative(
        points,
        kind="paired",
        score_label=axis,
        title=title,
        band=args.band,
        significance=line,
    )
    save_chart(chart, target)


def add_command(commands: Any) -> None:
    """Register ``paired`` on the subcommand parsers of :func:`polars_cumdev.cli.main`."""
    parser = commands.add_parser(
        "paired",
        help="paired samples: first minus second response of the same units, by score",
    )
    parser.add_argument("path", help="a .csv, .tsv, .parquet, .ipc/.arrow or .ndjson file")
    score_argument(parser, several=True)
    parser.add_argument("--first", required=True, help="response of the first population")
    parser.add_argument("--second", required=True, help="response of the second population")
    parser.add_argument("--weight", default=None, help="weight column (optional)")
    parser.add_argument(
        "--by", action="append", default=None, help="group column (repeatable, optional)"
    )
    parser.add_argument(
        "--variance",
        default="empirical",
        choices=["empirical", "bernoulli"],
        help="sigma from the observed differences (empirical, the default), or responses "
        "are probabilities (bernoulli)",
    )
    table_arguments(parser)
    parser.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="cumulative chart (of the top group with --by; .svg, .png, .pdf, .json, .html) "
        "or its points (.csv, .parquet)",
    )
    parser.add_argument(
        "--fraction", type=fraction_value, default=1.0, help="zoom of the chart (see curve)"
    )
    band_argument(parser)
    level_argument(parser)
    progress_argument(parser)
    parser.set_defaults(run=_run)
