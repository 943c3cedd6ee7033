"""``cumdev multicalibration``: the calibration of every intersection of a few features.

Prints the summary (largest z, its family-wise p-value, the critical z, the
minimum detectable ECCE and MCGrad's mce / mde), the strongest findings in
words (new findings first), and the ranked table; ``--output`` saves the whole
table, ``--out`` draws the funnel chart (:func:`polars_cumdev.charts.funnel`), ``--report``
writes the HTML page of :mod:`polars_cumdev.report.multicalibration`.
"""

from __future__ import annotations

import argparse
from typing import Any

from polars_cumdev.cli.arguments import data_arguments, level_value, positive_int, table_arguments
from polars_cumdev.cli.input import check_out, read_columns
from polars_cumdev.cli.output import (
    CHART_SUFFIXES,
    TABLE_SUFFIXES,
    save_chart,
    save_table,
    say,
    show,
)

__all__ = ["add_command"]

_SHOWN = ("depth", "n", "ecce_r", "sigma", "ecce_r_z", "p_family", "located", "finding", "note")


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _run(args: argparse.Namespace) -> None:
    import polars_cumdev as pc
    from polars_cumdev.multicalibration import multicalibration, summary
    from polars_cumdev.multicalibration.words import sentences

    target = check_out(args.out, CHART_SUFFIXES, source=args.path)
    page = check_out(args.report, (".html",), source=args.path)
    check_out(args.output, None if args.format else TABLE_SUFFIXES, bare=True, source=args.path)
    categorical, numerical = _names(args.categorical), _names(args.numerical)
    frame = read_columns(args.path, args.score, args.response, args.weight)
    family = pc.segments(
        categorical,
        numerical,
        depth=args.depth,
        levels=args.levels,
        min_rows=args.min_rows,
        rules=args.rules,
    )
    say(f"auditing every intersection of {len(categorical) + len(numerical)} features "
        f"(depth {args.depth}, method {args.method}) ...")  # fmt: skip
    table = multicalibration(
        frame,
        args.score,
        args.response,
        args.weight,
        segments=family,
        level=args.level,
        method=args.method,
        resamples=args.resamples,
        seed=args.seed,
    ).collect()
    facts = summary(table, level=args.level).row(0, named=True)
    dropped = f", {facts['dropped']} dropped by the cap on segments" if facts["dropped"] else ""
    print(
        f"{facts['segments']} segments ({facts['tests']} tested{dropped}); "
        f"{facts['significant']} significant at family-wise level {args.level:g} "
        f"({facts['new_findings']} new findings)"
    )
    print(
        f"pooled into (other): {facts['pooled']}"
        if facts["pooled"]
        else "pooled into (other): nothing (every value of every feature kept)"
    )
    print(
        f"largest z {facts['max_z']:.3f} (family-wise p {facts['p_family']:.3g}); critical z "
        f"{facts['critical_z']:.3f}; minimum detectable ECCE {facts['min_detectable_ecce']:.4g}"
    )
    print(
        f"MCGrad's figures: mce {facts['mce']:.4g} (sigmas {facts['mce_sigma']:.3f}, "
        f"relative {facts['mce_relative']:.3g}%, unadjusted p {facts['mce_pvalue']:.3g}), "
        f"mde {facts['mde']:.4g} ({facts['mde_relative']:.3g}%)"
    )
    for line in sentences(table, family.features and list(family.features), args.findings,
                          args.level):  # fmt: skip
        print(f"  - {line}")
    show(table, [*family.features, *_SHOWN], args.rows)
    if args.output:
        save_table(table, args.output, args.format)
    if target is not None:
        from polars_cumdev import charts

        save_chart(charts.funnel(table, level=args.level), target)
    if page is not None:
        from polars_cumdev.report.multicalibration import write_report

        say(f"writing report {page} ...")
        write_report(
            table, frame.lazy(), list(family.features), args.score, args.response, args.weight,
            path=page, top=args.findings, rows=args.rows * 5, level=args.level,
            method=args.method, band=0.05, say=say,
        )  # fmt: skip


def add_command(commands: Any) -> None:
    """Register ``multicalibration`` on the subcommand parsers of ``cumdev``."""
    command = commands.add_parser(
        "multicalibration",
        help="calibration of every intersection of features, with family-wise p-values",
    )
    data_arguments(command, by=False, several=False)
    command.add_argument("--categorical", default=None, help="categorical features, a,b,c")
    command.add_argument("--numerical", default=None, help="numerical features, cut at quantiles")
    command.add_argument("--depth", type=positive_int, default=3, help="features per segment")
    command.add_argument(
        "--levels",
        type=positive_int,
        default=None,
        help="levels per feature (default: every categorical value with at least --min-rows "
        "rows, 50 at most, the rest pooled into (other); 3 quantile bins per numerical one)",
    )
    command.add_argument("--min-rows", type=positive_int, default=10, help="smallest segment")
    command.add_argument("--rules", choices=("cumdev", "mcgrad"), default="cumdev")
    command.add_argument(
        "--level", type=level_value, default=0.05, help="family-wise level (default 0.05)"
    )
    command.add_argument("--method", choices=("holm", "bootstrap", "stepdown"), default="holm")
    command.add_argument("--resamples", type=positive_int, default=999, help="bootstrap's B")
    command.add_argument("--seed", type=positive_int, default=0, help="bootstrap's seed")
    command.add_argument("--findings", type=positive_int, default=5, help="sentences printed")
    table_arguments(command)  # --rows, --output/-o, --format, as in the other subcommands
    command.add_argument("--out", default=None, metavar="FILE", help="funnel chart")
    command.add_argument(
        "--report",
        default=None,
        metavar="FILE.html",
        help="write an HTML report: summary, funnel, findings in words, top segments drawn",
    )
    command.set_defaults(run=_run)
