"""The subcommands of the subpopulation screen: ``demo``, ``screen``, ``curve`` and ``report``.

``cumdev screen`` ranks every group of a file by its deviation from the full
population (out of core, range by range, when the file is larger than
memory; on Dask or Spark with ``--engine``); ``cumdev curve`` draws one
group's drill-down; ``cumdev report`` writes the HTML report; ``cumdev demo``
does all three on the bundled census-like data.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev.cli import memory
from polars_cumdev.cli.arguments import (
    ROWS_HELP,
    band_argument,
    data_arguments,
    fraction_value,
    level_argument,
    positive_int,
    progress_argument,
    table_arguments,
    variance_argument,
)
from polars_cumdev.cli.input import (
    check_out,
    explain_empty,
    read_columns,
    selection,
)
from polars_cumdev.cli.output import (
    CHART_SUFFIXES,
    DATA_SUFFIXES,
    RANKED_COLUMNS,
    SUMMARY_COLUMNS,
    TABLE_SUFFIXES,
    curve_summary,
    drawn_as_ranked,
    note,
    print_summary,
    save_chart,
    save_table,
    say,
    show,
)
from polars_cumdev.engines.cluster.command import (
    CLUSTER_ENGINES,
    add_engine_arguments,
    cluster_screen,
)
from polars_cumdev.errors import CumdevError, EmptySubpopulationError
from polars_cumdev.method.groups import top_group

__all__ = ["add_commands"]


def _demo(args: argparse.Namespace) -> None:
    from polars_cumdev.datasets import census

    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    say("generating the bundled census-like data ...")
    data = census()
    groups = data["county"].n_unique()
    say(
        f"{data.height:,} households in {groups} counties; score log10_income, weight WGTP; "
        f"screening {groups} groups ..."
    )
    table = data.cumdev.screen(
        by="county", score="log10_income", response=args.response, weight="WGTP", level=args.level
    )
    print(f"Screening response {args.response!r}: counties ranked by Kuiper z, largest first")
    show(table, ["county", *SUMMARY_COLUMNS], args.rows)
    if out is None:
        return

    from polars_cumdev import charts

    say("drawing charts ...")
    save_chart(charts.screen(table, by=["county"]), out / "screen.svg")
    selection, label, row = top_group(table, ["county"], "kuiper_z")
    points, line = drawn_as_ranked(
        data.cumdev.curve(
            subpop=selection,
            score="log10_income",
            response=args.response,
            weight="WGTP",
            level=args.level,
        ),
        row,
        args.level,
    )
    save_chart(
        charts.cumulative(
            points,
            subject=label,
            score_label="log10_income",
            y_label=f"cumulative difference in {args.response}",
            significance=line,
        ),
        out / f"cumulative-{_slug(row['county'])}.svg",
    )
    _write_report(
        data,
        ["county"],
        "log10_income",
        args.response,
        "WGTP",
        out / "report.html",
        level=args.level,
    )


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text)) or "group"


def _write_report(
    frame: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    score: str | Sequence[str],
    response: str,
    weight: str | None,
    path: Path,
    *,
    top: int = 5,
    variance: str = "auto",
    required: bool = False,
    level: float = 0.05,
) -> None:
    try:
        from polars_cumdev.report.subpopulation import report
    except ImportError as exc:
        if required:
            raise CumdevError(f"the HTML report is not available: {exc}") from None
        note(f"skipping the HTML report (not available: {exc})")
        return
    say(f"writing report {path} (top {top} groups) ...")
    report(
        frame,
        list(by),
        score,
        response,
        weight,
        path=path,
        top=top,
        variance=variance,
        level=level,
    )
    say(f"wrote {path}")


def _out_of_core(args: argparse.Namespace, frame: pl.LazyFrame) -> pl.DataFrame:
    """The screen of a file larger than memory: range by range, from Parquet."""
    import tempfile

    from polars_cumdev.partitioned import screen_parquet

    say(f"{memory.describe(args.path)}: screening range by range (out of core) ...")
    if not isinstance(args.score, str):
        raise CumdevError(
            "several covariates need all rows at once: this file is too large to order them "
            "in memory (screen on one score column, or use more memory)"
        )
    columns = list(dict.fromkeys([*args.by, args.score, args.response, args.weight]))
    columns = [c for c in columns if c is not None and c in frame.collect_schema()]
    rows = frame.select(pl.len()).collect(engine="streaming").item()
    ranges = memory.range_count(rows)
    with tempfile.TemporaryDirectory(prefix="cumdev-") as folder:
        source: str = args.path
        if (
            Path(args.path).suffix.lower() not in (".parquet", ".pq")
            and not Path(args.path).is_dir()
        ):
            source = str(Path(folder) / "data.parquet")
            say(f"converting the {rows:,} rows to Parquet in {folder} (streaming) ...")
            frame.select(columns).sink_parquet(source)
        elif Path(args.path).is_dir():
            source = str(Path(args.path) / "*.parquet")
        say(f"screening {rows:,} rows in {ranges} score range(s) ...")
        return screen_parquet(
            source,
            args.by,
            args.score,
            args.response,
            args.weight,
            ranges=ranges,
            variance=args.variance,
        )


def _screen(args: argparse.Namespace) -> None:
    check_out(args.output, None if args.format else TABLE_SUFFIXES, bare=True, source=args.path)
    chart = check_out(args.out, CHART_SUFFIXES, source=args.path)
    frame = read_columns(args.path, args.score, args.response, args.weight)
    say(f"screening the groups of {', '.join(args.by)} ...")
    started = time.perf_counter()
    if args.engine in CLUSTER_ENGINES:
        table = cluster_screen(args)
    elif memory.too_large(args.path):
        table = _out_of_core(args, frame)
    else:
        table = frame.cumdev.screen(
            by=args.by,
            score=args.score,
            response=args.response,
            weight=args.weight,
            variance=args.variance,
            engine=args.engine,
            level=args.level,
        ).collect()
    say(f"screened {table.height} groups in {time.perf_counter() - started:.2f} s")
    if "ordering" in table.columns and table.height:
        note(f"rows ordered along {table['ordering'][0]}")
    show(table, [*args.by, *RANKED_COLUMNS], args.rows)
    if args.output:
        save_table(table, args.output, args.format)
    if chart is not None:
        from polars_cumdev import charts

        save_chart(charts.screen(table, by=args.by), chart)


def _curve(args: argparse.Namespace) -> None:
    target = check_out(args.out, (*CHART_SUFFIXES, *DATA_SUFFIXES), source=args.path)
    memory.refuse_if_too_large(args.path, "curve")
    frame = read_columns(args.path, args.score, args.response, args.weight)
    subpop = selection(frame, args.subpop_column, args.subpop_value, args.path)
    say(f"computing the cumulative differences of {args.subpop_column} = {args.subpop_value} ...")
    query = frame.cumdev.curve(
        subpop=subpop,
        score=args.score,
        response=args.response,
        weight=args.weight,
        variance=args.variance,
        fraction=args.fraction,
        level=args.level,
    )
    try:
        points = query.collect()
    except EmptySubpopulationError as error:
        column, value = args.subpop_column, args.subpop_value
        raise explain_empty(frame, subpop, column, value, args.path) or error from None
    print(f"{args.subpop_column} = {args.subpop_value} against the full population")
    print_summary(curve_summary(points))
    if target is None:
        return
    if target.suffix.lower() in DATA_SUFFIXES:
        save_table(points, str(target), target.suffix.lower().lstrip("."))
        return
    from polars_cumdev import charts

    chart = charts.cumulative(
        points,
        subject=f"{args.subpop_column} = {args.subpop_value}",
        score_label=args.score if isinstance(args.score, str) else "score",  # tuple ticks
        y_label=f"cumulative difference in {args.response}",
        band=args.band,
    )
    save_chart(chart, target)


def _report(args: argparse.Namespace) -> None:
    target = check_out(args.out, (".html",), source=args.path)
    memory.refuse_if_too_large(args.path, "report")
    assert target is not None
    frame = read_columns(args.path, args.score, args.response, args.weight)
    _write_report(
        frame,
        args.by,
        args.score,
        args.response,
        args.weight,
        target,
        top=args.top,
        variance=args.variance,
        required=True,
        level=args.level,
    )


def add_commands(commands: Any) -> None:
    """Register ``demo``, ``screen``, ``curve`` and ``report`` on the subcommand parsers."""
    demo = commands.add_parser("demo", help="screen the bundled census-like data")
    demo.add_argument(
        "--response",
        default="has_internet",
        choices=["has_internet", "vehicles", "children", "rooms"],
        help="which response to screen (default: has_internet)",
    )
    demo.add_argument("--rows", type=positive_int, default=10, help=ROWS_HELP)
    demo.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="also write report.html, screen.svg and the top county's cumulative plot here",
    )
    level_argument(demo)
    progress_argument(demo)
    demo.set_defaults(run=_demo)

    screen = commands.add_parser("screen", help="rank every group of a file by its deviation")
    data_arguments(screen, by=True, several=True)
    variance_argument(screen)
    add_engine_arguments(screen)
    table_arguments(screen)
    level_argument(screen)
    progress_argument(screen)
    screen.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="also draw the overview chart of every group's Kuiper z "
        "(.svg, .png, .pdf, .json Vega-Lite, .html)",
    )
    screen.set_defaults(run=_screen)

    curve = commands.add_parser(
        "curve",
        aliases=["plot"],
        help="drill down: cumulative differences of one group (alias: plot)",
    )
    data_arguments(curve, by=False, several=True)
    curve.add_argument(
        "--subpop-column", required=True, help="column that selects the subpopulation"
    )
    curve.add_argument(
        "--subpop-value", required=True, help="value of that column in the subpopulation"
    )
    variance_argument(curve)
    curve.add_argument(
        "--fraction",
        type=fraction_value,
        default=1.0,
        help="zoom: keep this leading share of scores",
    )
    curve.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="chart (.svg, .png, .pdf, .json Vega-Lite, .html) or the points (.csv, .parquet)",
    )
    band_argument(curve)
    level_argument(curve)
    progress_argument(curve)
    curve.set_defaults(run=_curve)

    report = commands.add_parser("report", help="write a self-contained HTML report")
    data_arguments(report, by=True, several=True)
    variance_argument(report)
    report.add_argument(
        "--top", type=positive_int, default=5, help="groups to drill into (default 5)"
    )
    report.add_argument("--out", required=True, metavar="FILE.html", help="the report to write")
    level_argument(report)
    progress_argument(report)
    report.set_defaults(run=_report)
