"""The ``cumdev`` command.

Subcommands:

* ``cumdev demo`` screens the bundled census-like data (and, with ``--out``,
  writes an HTML report and SVG charts);
* ``cumdev screen PATH`` ranks every group of a CSV, Parquet, IPC or NDJSON file;
* ``cumdev curve PATH`` (alias ``cumdev plot``) draws the drill-down of one group;
* ``cumdev calibration PATH`` measures the calibration of predicted probabilities;
* ``cumdev report PATH`` writes a self-contained HTML report.

Progress goes to stderr, results to stdout. Any problem with the input (a
missing file or column, unusable values) prints a single line
``cumdev: error: ...`` on stderr and exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev.cli_input import (
    check_columns,
    check_out,
    explain_polars_error,
    scan,
    selection,
)
from polars_cumdev.cluster.command import CLUSTER_ENGINES, add_engine_arguments, cluster_screen
from polars_cumdev.errors import CumdevError, InvalidParameterError, first_line
from polars_cumdev.groups import group_label, group_selection

__all__ = ["main"]

_SHOWN = ("n", "kuiper", "kuiper_z", "kuiper_p", "kuiper_q", "ks_z", "delta", "located", "note")
_CALIBRATION_SHOWN = (
    "n",
    "ecce_r",
    "ecce_mad",
    "sigma",
    "ecce_r_z",
    "ecce_mad_z",
    "ecce_r_p",
    "ecce_mad_p",
    "delta",
    "located",
    "note",
)
_CORP_SHOWN = ("n", "brier", "mcb", "dsc", "unc", "base_rate", "blocks")
_CHART_SUFFIXES = (".svg", ".png", ".pdf", ".json", ".html")
_DATA_SUFFIXES = (".csv", ".parquet")
_TABLE_SUFFIXES = (".csv", ".json", ".parquet")
_ROWS_HELP = "rows of the table to print (0 prints only how many there are)"


def _say(message: str) -> None:
    """Progress and notes: stderr, so that stdout holds only results."""
    print(message, file=sys.stderr, flush=True)


def _pretty_p(value: float | None) -> str | None:
    """P-values in scientific notation, so tiny ones do not print as 0.0000."""
    if value is None:
        return None
    return f"{value:.4f}" if value >= 0.001 else f"{value:.2e}"


def _located(row: dict[str, Any]) -> str | None:
    """The located stretch in one cell: "from to to (share): deviation", or None."""
    if row["from_score"] is None:
        return None
    return (
        f"{row['from_score']:.4g} to {row['to_score']:.4g} "
        f"({100 * row['share']:.2g}%): {row['deviation']:+.3g}"
    )


def _show(table: pl.DataFrame, columns: Sequence[str], rows: int) -> None:
    if rows == 0:  # only the count: for a run that writes the table to a file
        print(f"{table.height} rows not printed (--rows {table.height} prints them)")
        return
    place = ("from_score", "to_score", "share", "deviation")
    if "located" in columns and all(c in table.columns for c in place):
        cells = [_located(row) for row in table.select(place).iter_rows(named=True)]
        table = table.with_columns(pl.Series("located", cells, dtype=pl.String))
    shown = table.select([c for c in columns if c in table.columns])
    for quiet in ("located", "note"):
        if quiet in shown.columns and shown[quiet].null_count() == shown.height:
            shown = shown.drop(quiet)  # nothing to say: save the width
    shown = shown.with_columns(
        pl.col(c).map_elements(_pretty_p, return_dtype=pl.String)
        for c in shown.columns
        if c.endswith(("_p", "_q")) and shown.schema[c].is_float()
    )
    hidden = max(0, shown.height - rows)
    shown = shown.head(rows)
    with pl.Config(
        tbl_rows=rows,
        tbl_cols=-1,
        tbl_width_chars=160,
        float_precision=4,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        fmt_str_lengths=40,
    ):
        print(shown)
    if hidden:
        print(f"... and {hidden} more rows (--rows {rows + hidden} shows all)")


def _read(args: argparse.Namespace) -> pl.LazyFrame:
    """Scan the input file and check what can be checked before computing."""
    frame = scan(args.path)
    _say(f"reading {args.path} ...")
    scores = [args.score] if isinstance(args.score, str) else list(args.score)
    check_columns(frame, args.path, [*scores, args.response, args.weight])
    return frame


def _save_chart(chart: Any, target: Path) -> None:
    from polars_cumdev import charts

    charts.save(chart, target)
    _say(f"wrote {target}")


def _save_table(table: pl.DataFrame, path: str, fmt: str | None) -> None:
    fmt = fmt or Path(path).suffix.lower().lstrip(".") or "csv"
    if fmt == "csv":
        table.write_csv(path)
    elif fmt == "json":
        table.write_json(path)
    elif fmt == "parquet":
        table.write_parquet(path)
    else:
        raise CumdevError(f"cannot write {path}: unknown format {fmt!r} (csv, json or parquet)")
    _say(f"wrote {path}")


def _curve_summary(points: pl.DataFrame) -> dict[str, float | int | None]:
    """Kuiper and Kolmogorov-Smirnov statistics of a drill-down frame."""
    from polars_cumdev.normalization import MIN_SCORES, normalized
    from polars_cumdev.pvalues import ks_pvalue, kuiper_pvalue

    c = points["cumdiff"]
    kuiper = float(c.max() - c.min())  # type: ignore[operator]
    ks = float(c.abs().max())  # type: ignore[arg-type]
    raw_sigma = points["sigma"][0]
    sigma = float(raw_sigma) if raw_sigma is not None else 0.0
    n = int(points["k"].max())  # type: ignore[arg-type]
    out: dict[str, float | int | None] = {
        "n_scores": n,
        "kuiper": kuiper,
        "ks": ks,
        "delta": float(c[-1]),
        "sigma": sigma,
        "kuiper_z": None,
        "ks_z": None,
        "kuiper_p": None,
        "ks_p": None,
    }
    if normalized(n, sigma, MIN_SCORES["subpopulation"]):  # the rule of the screen's table
        out["kuiper_z"] = kuiper / sigma
        out["ks_z"] = ks / sigma
        out["kuiper_p"] = float(kuiper_pvalue(kuiper / sigma))
        out["ks_p"] = float(ks_pvalue(ks / sigma))
    return out


def _print_summary(summary: dict[str, Any]) -> None:
    for key, value in summary.items():
        text = "null" if value is None else (f"{value:.6g}" if isinstance(value, float) else value)
        print(f"{key:>10}  {text}")


# ---------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------


def _demo(args: argparse.Namespace) -> None:
    from polars_cumdev.datasets import census

    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    _say("generating the bundled census-like data ...")
    data = census()
    groups = data["county"].n_unique()
    _say(
        f"{data.height:,} households in {groups} counties; score log10_income, weight WGTP; "
        f"screening {groups} groups ..."
    )
    table = data.cumdev.screen(
        by="county", score="log10_income", response=args.response, weight="WGTP"
    )
    print(f"Screening response {args.response!r}: counties ranked by Kuiper z, largest first")
    _show(table, ["county", *_SHOWN], args.rows)
    if out is None:
        return

    from polars_cumdev import charts

    _say("drawing charts ...")
    _save_chart(charts.screen(table, by=["county"]), out / "screen.svg")
    top = table.filter(pl.col("kuiper_z").is_not_null())["county"][0]
    points = data.cumdev.curve(
        subpop=pl.col("county") == top,
        score="log10_income",
        response=args.response,
        weight="WGTP",
    )
    _save_chart(
        charts.cumulative(
            points,
            subject=f"county = {top}",
            score_label="log10_income",
            y_label=f"cumulative difference in {args.response}",
        ),
        out / f"cumulative-{_slug(top)}.svg",
    )
    _write_report(data, ["county"], "log10_income", args.response, "WGTP", out / "report.html")


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text)) or "group"


def _write_report(
    frame: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    score: str,
    response: str,
    weight: str | None,
    path: Path,
    *,
    top: int = 5,
    variance: str = "auto",
    required: bool = False,
) -> None:
    try:
        from polars_cumdev.report import report
    except ImportError as exc:
        if required:
            raise CumdevError(f"the HTML report is not available: {exc}") from None
        _say(f"skipping the HTML report (not available: {exc})")
        return
    _say(f"writing report {path} (top {top} groups) ...")
    report(frame, list(by), score, response, weight, path=path, top=top, variance=variance)
    _say(f"wrote {path}")


def _screen(args: argparse.Namespace) -> None:
    check_out(args.output, None if args.format else _TABLE_SUFFIXES, bare=True)
    frame = _read(args)
    _say(f"screening the groups of {', '.join(args.by)} ...")
    started = time.perf_counter()
    if args.engine in CLUSTER_ENGINES:
        table = cluster_screen(args)
    else:
        table = frame.cumdev.screen(
            by=args.by,
            score=args.score,
            response=args.response,
            weight=args.weight,
            variance=args.variance,
            engine=args.engine,
        ).collect()
    _say(f"screened {table.height} groups in {time.perf_counter() - started:.2f} s")
    if "ordering" in table.columns and table.height:
        _say(f"rows ordered along {table['ordering'][0]}")
    _show(table, [*args.by, *_SHOWN], args.rows)
    if args.output:
        _save_table(table, args.output, args.format)


def _curve(args: argparse.Namespace) -> None:
    target = check_out(args.out, (*_CHART_SUFFIXES, *_DATA_SUFFIXES))
    frame = _read(args)
    subpop = selection(frame, args.subpop_column, args.subpop_value, args.path)
    _say(f"computing the cumulative differences of {args.subpop_column} = {args.subpop_value} ...")
    points = frame.cumdev.curve(
        subpop=subpop,
        score=args.score,
        response=args.response,
        weight=args.weight,
        variance=args.variance,
        fraction=args.fraction,
    ).collect()
    print(f"{args.subpop_column} = {args.subpop_value} against the full population")
    _print_summary(_curve_summary(points))
    if target is None:
        return
    if target.suffix.lower() in _DATA_SUFFIXES:
        _save_table(points, str(target), target.suffix.lower().lstrip("."))
        return
    from polars_cumdev import charts

    label = args.score if isinstance(args.score, str) else ", ".join(args.score)
    chart = charts.cumulative(
        points,
        subject=f"{args.subpop_column} = {args.subpop_value}",
        score_label=label,
        y_label=f"cumulative difference in {args.response}",
        band=args.band,
    )
    _save_chart(chart, target)


def _calibration(args: argparse.Namespace) -> None:
    target = check_out(args.out, (*_CHART_SUFFIXES, *_DATA_SUFFIXES))
    page = check_out(args.report, (".html",))
    frame = _read(args)
    _say("measuring calibration ...")
    table = frame.cumdev.calibration(
        score=args.score, response=args.response, weight=args.weight, by=args.by
    ).collect()
    _show(table, [*(args.by or []), *_CALIBRATION_SHOWN], args.rows)
    if args.corp:
        decomposition = frame.cumdev.corp(
            score=args.score, response=args.response, weight=args.weight, by=args.by
        ).collect()
        print("Brier score = MCB (miscalibration) - DSC (discrimination) + UNC (uncertainty):")
        _show(decomposition, [*(args.by or []), *_CORP_SHOWN], args.rows)
    if page is not None:
        from polars_cumdev.calibration_report import calibration_report

        _say(f"writing report {page} ...")
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
        _say(f"wrote {page}")
    if target is None:
        return
    subset = frame
    label = "all predictions"
    if args.by:
        ranked = table.filter(pl.col("ecce_r_z").is_not_null())
        if ranked.height == 0:
            raise CumdevError("no group has a defined ECCE-R z: nothing to draw")
        row = ranked.row(0, named=True)
        subset = frame.filter(group_selection(args.by, row))  # null-aware: the null group too
        label = group_label(args.by, row)
        _say(f"drawing the group with the largest ECCE-R z ({label}) ...")
    corp_args = {"resamples": args.resamples, "level": args.level, "seed": args.seed}
    data_out = target.suffix.lower() in _DATA_SUFFIXES
    if args.corp and data_out:  # the CORP curve instead of the cumulative points
        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        ).collect()
        _save_table(fitted, str(target), target.suffix.lower().lstrip("."))
        return
    points = subset.cumdev.calibration_curve(
        score=args.score, response=args.response, weight=args.weight, fraction=args.fraction
    ).collect()
    if data_out:
        _save_table(points, str(target), target.suffix.lower().lstrip("."))
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
    _save_chart(chart, target)
    if args.corp:  # the CORP diagram beside it: FILE-corp.SUFFIX
        fitted = subset.cumdev.corp_curve(
            score=args.score, response=args.response, weight=args.weight, **corp_args
        )
        summary = subset.cumdev.corp(score=args.score, response=args.response, weight=args.weight)
        diagram = charts.corp(
            fitted, summary=summary, score_label=args.score, title=f"CORP diagram: {label}"
        )
        _save_chart(diagram, target.with_name(f"{target.stem}-corp{target.suffix}"))


def _report(args: argparse.Namespace) -> None:
    target = check_out(args.out, (".html",))
    assert target is not None
    frame = _read(args)
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
    )


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1]: {text!r}")
    return value


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1): {text!r}")
    return value


def _scores(given: Sequence[str], several: bool) -> str | list[str]:
    """``--score`` values as one column name, or a list of covariates (Hilbert order)."""
    names = [name.strip() for text in given for name in text.split(",") if name.strip()]
    if len(names) == 1:
        return names[0]
    if not names or not several:
        raise InvalidParameterError(
            f"--score must name one column here, got {', '.join(given)!r}; several "
            "covariates are for screen and curve"
        )
    return names


def _data_arguments(parser: argparse.ArgumentParser, *, by: bool) -> None:
    parser.add_argument("path", help="a .csv, .tsv, .parquet, .ipc/.arrow or .ndjson file")
    if by:
        parser.add_argument(
            "--by", required=True, action="append", help="group column (repeatable)"
        )
    parser.add_argument(
        "--score",
        required=True,
        action="append",
        help="score column; screen and curve also take several covariates (comma-separated "
        "or repeated), ordered along a Hilbert curve",
    )
    parser.add_argument("--response", required=True, help="response column")
    parser.add_argument("--weight", default=None, help="weight column (optional)")


def _variance_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variance",
        default="auto",
        choices=["auto", "bernoulli", "empirical"],
        help="scale of fluctuations: Bernoulli (0/1 responses), empirical, or auto (default)",
    )


def _parser() -> argparse.ArgumentParser:
    from polars_cumdev import __version__

    parser = argparse.ArgumentParser(
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
    demo.add_argument("--rows", type=_positive_int, default=41, help=_ROWS_HELP)
    demo.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="also write report.html, screen.svg and the top county's cumulative plot here",
    )
    demo.set_defaults(run=_demo)

    screen = commands.add_parser("screen", help="rank every group of a file by its deviation")
    _data_arguments(screen, by=True)
    _variance_argument(screen)
    add_engine_arguments(screen)
    screen.add_argument("--rows", type=_positive_int, default=20, help=_ROWS_HELP)
    screen.add_argument("--output", "-o", default=None, help="also save the table to this file")
    screen.add_argument(
        "--format",
        choices=["csv", "json", "parquet"],
        default=None,
        help="format of --output (default: from its suffix)",
    )
    screen.set_defaults(run=_screen)

    curve = commands.add_parser(
        "curve",
        aliases=["plot"],
        help="drill down: cumulative differences of one group (alias: plot)",
    )
    _data_arguments(curve, by=False)
    curve.add_argument(
        "--subpop-column", required=True, help="column that selects the subpopulation"
    )
    curve.add_argument(
        "--subpop-value", required=True, help="value of that column in the subpopulation"
    )
    _variance_argument(curve)
    curve.add_argument(
        "--fraction", type=_fraction, default=1.0, help="zoom: keep this leading share of scores"
    )
    curve.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="chart (.svg, .png, .pdf, .json Vega-Lite, .html) or the points (.csv, .parquet)",
    )
    curve.add_argument(
        "--band",
        type=_level,
        default=None,
        metavar="ALPHA",
        help="draw the Kolmogorov-Smirnov band at this level and the noise envelope",
    )
    curve.set_defaults(run=_curve)

    calibration = commands.add_parser(
        "calibration", help="calibration of predicted probabilities (ECCE-R, ECCE-MAD)"
    )
    _data_arguments(calibration, by=False)
    calibration.add_argument(
        "--by", action="append", default=None, help="group column (repeatable, optional)"
    )
    calibration.add_argument(
        "--fraction", type=_fraction, default=1.0, help="zoom of the chart (see curve)"
    )
    calibration.add_argument("--rows", type=_positive_int, default=20, help=_ROWS_HELP)
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
        "--band",
        type=_level,
        default=None,
        metavar="ALPHA",
        help="draw the Kolmogorov-Smirnov band at this level on the cumulative plot",
    )
    calibration.add_argument(
        "--resamples",
        type=_positive_int,
        default=100,
        help="resamples of the CORP consistency band (default 100; 0 for none)",
    )
    calibration.add_argument(
        "--level", type=_level, default=0.9, help="coverage of the CORP band (default 0.9)"
    )
    calibration.add_argument("--seed", type=_positive_int, default=0, help="seed of the band")
    calibration.set_defaults(run=_calibration)

    report = commands.add_parser("report", help="write a self-contained HTML report")
    _data_arguments(report, by=True)
    _variance_argument(report)
    report.add_argument(
        "--top", type=_positive_int, default=5, help="groups to drill into (default 5)"
    )
    report.add_argument("--out", required=True, metavar="FILE.html", help="the report to write")
    report.set_defaults(run=_report)
    __import__("polars_cumdev.cli_paired").cli_paired.add_command(commands)  # cumdev paired
    return parser


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
        printed on stderr), 130 when interrupted.
    """
    import polars_cumdev  # noqa: F401  (registers the namespace)

    args = _parser().parse_args(argv)
    try:
        if isinstance(getattr(args, "score", None), list):  # --score given with action="append"
            args.score = _scores(args.score, args.run in (_screen, _curve))
        args.run(args)
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
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
