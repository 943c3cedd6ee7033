"""The ``cumdev`` command.

Subcommands:

* ``cumdev demo`` screens the bundled census-like data (and, with ``--out``,
  writes an HTML report and SVG charts);
* ``cumdev screen PATH`` ranks every group of a CSV, Parquet, IPC or NDJSON file;
* ``cumdev curve PATH`` (alias ``cumdev plot``) draws the drill-down of one group;
* ``cumdev calibration PATH`` measures the calibration of predicted probabilities
  (:mod:`polars_cumdev.cli.calibration`);
* ``cumdev report PATH`` writes a self-contained HTML report;
* ``cumdev paired PATH`` compares two responses of the same units
  (:mod:`polars_cumdev.cli.paired`);
* ``cumdev multicalibration PATH`` audits the calibration of every intersection
  of a few features (:mod:`polars_cumdev.cli.multicalibration`).

Progress goes to stderr, results to stdout. Any problem with the input (a
missing file or column, unusable values) prints a single line
``cumdev: error: ...`` on stderr and exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.cli import memory
from polars_cumdev.cli.arguments import (
    ROWS_HELP,
    CommandParser,
    band_argument,
    data_arguments,
    fraction_value,
    level_argument,
    positive_int,
    progress_argument,
    score_names,
    table_arguments,
    variance_argument,
)
from polars_cumdev.cli.calibration import add_command as add_calibration_command
from polars_cumdev.cli.input import (
    check_out,
    explain_empty,
    explain_polars_error,
    read_columns,
    selection,
)
from polars_cumdev.cli.multicalibration import add_command as add_multicalibration_command
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
from polars_cumdev.cli.paired import add_command as add_paired_command
from polars_cumdev.engines.cluster.command import (
    CLUSTER_ENGINES,
    add_engine_arguments,
    cluster_screen,
)
from polars_cumdev.errors import CumdevError, EmptySubpopulationError, first_line
from polars_cumdev.method.groups import top_group
from polars_cumdev.progress import reporting

__all__ = ["main"]


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


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    from polars_cumdev import __version__

    parser = CommandParser(
        prog="cumdev",
        description=(
            "Cumulative deviation of subpopulations from the full population, and "
            "calibration of predicted probabilities, without bins."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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

    add_calibration_command(commands)

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
    add_paired_command(commands)
    add_multicalibration_command(commands)
    return parser


def _broken_pipe() -> int:
    """The reader of stdout went away (e.g. ``| head``): stop, say so once, exit 141.

    stdout is pointed at the null device so that Python's final flush does not
    raise again at exit (which would print a traceback-like warning).
    """
    try:
        sys.stdout.flush()
    except OSError:
        pass
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a descriptor
        pass
    print("cumdev: error: standard output was closed (broken pipe)", file=sys.stderr)
    return 128 + 13  # as a process ended by SIGPIPE


def _progress(args: argparse.Namespace) -> bool:
    """Show progress? ``--progress`` / ``--no-progress``, else whether stderr is a terminal."""
    chosen = getattr(args, "progress", None)
    if chosen is not None:
        return bool(chosen)
    return sys.stderr.isatty()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cumdev`` command line and return the exit status.

    Parameters
    ----------
    argv
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 when the input cannot be used (a one-line message is
        printed on stderr; also when stdout is closed from the start), 141 when
        the reader of stdout goes away (broken pipe), 130 when interrupted.
    """
    import polars_cumdev  # noqa: F401  (registers the namespace)

    args = _parser().parse_args(argv)
    if sys.stdout is None or sys.stdout.closed:
        print("cumdev: error: standard output is closed; nowhere to print results", file=sys.stderr)
        return 2
    try:
        if isinstance(getattr(args, "score", None), list):  # --score given with action="append"
            args.score = score_names(args.score, args.several_scores)
        with reporting(_progress(args)):
            args.run(args)
        sys.stdout.flush()  # a closed pipe is found here, not in Python's exit
    except BrokenPipeError:
        return _broken_pipe()
    except CumdevError as exc:
        print(f"cumdev: error: {first_line(exc)}", file=sys.stderr)
        return 2
    except pl.exceptions.PolarsError as exc:
        message = explain_polars_error(exc, getattr(args, "path", None))
        print(f"cumdev: error: {message}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"cumdev: error: {first_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cumdev: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _memory_exhausted(exc):
            raise
        print(
            "cumdev: error: out of memory (a Python allocation failed); give the process more "
            "memory, or convert the input to Parquet and screen it range by range",
            file=sys.stderr,
        )
        return 2
    return 0


def _memory_exhausted(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, or was caused by, a MemoryError (Polars wraps one from a callback)."""
    for _ in range(20):
        if exc is None:
            return False
        if isinstance(exc, MemoryError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
