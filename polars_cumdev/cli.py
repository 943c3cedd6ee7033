"""The ``cumdev`` command.

``cumdev demo`` screens the bundled census-like data; ``cumdev screen PATH``
screens a CSV or Parquet file. Problems with the input print one line on
stderr and exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.errors import CumdevError

__all__ = ["main"]

_SHOWN = ("n", "kuiper", "kuiper_z", "kuiper_p", "kuiper_q", "ks_z", "delta", "note")


def _print_table(table: pl.DataFrame, by: Sequence[str], rows: int) -> None:
    shown = table.select(*by, *[c for c in _SHOWN if c in table.columns])
    with pl.Config(
        tbl_rows=rows,
        tbl_cols=-1,
        tbl_width_chars=160,
        float_precision=4,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        print(shown)


def _scan(path: str) -> pl.LazyFrame:
    file = Path(path)
    if not file.is_file():
        raise CumdevError(f"no such file: {path}")
    suffix = file.suffix.lower()
    if suffix == ".parquet":
        return pl.scan_parquet(file)
    if suffix in (".csv", ".txt"):
        return pl.scan_csv(file, infer_schema_length=10_000)
    raise CumdevError(f"cannot read {path}: expected a .csv or .parquet file")


def _save(table: pl.DataFrame, path: str, fmt: str) -> None:
    if fmt == "csv":
        table.write_csv(path)
    elif fmt == "json":
        table.write_json(path)
    else:
        table.write_parquet(path)
    print(f"wrote {path}", file=sys.stderr)


def _demo(args: argparse.Namespace) -> None:
    from polars_cumdev.datasets import census

    data = census()
    print(
        f"Bundled census-like data: {data.height:,} households in "
        f"{data['county'].n_unique()} counties, score log10_income, weight WGTP.",
        file=sys.stderr,
    )
    table = data.cumdev.screen(
        by="county", score="log10_income", response=args.response, weight="WGTP"
    )
    print(f"Screening response {args.response!r}: counties ranked by Kuiper z, largest first")
    _print_table(table, ["county"], args.rows)


def _screen(args: argparse.Namespace) -> None:
    print(f"reading {args.path} ...", file=sys.stderr)
    frame = _scan(args.path)
    table = frame.cumdev.screen(
        by=args.by,
        score=args.score,
        response=args.response,
        weight=args.weight,
        variance=args.variance,
    ).collect()
    _print_table(table, args.by, args.rows)
    if args.output:
        _save(table, args.output, args.format or Path(args.output).suffix.lstrip(".") or "csv")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cumdev",
        description="Cumulative deviation of subpopulations from the full population.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="screen the bundled census-like data")
    demo.add_argument(
        "--response",
        default="has_internet",
        choices=["has_internet", "vehicles", "children", "rooms"],
        help="which response to screen (default: has_internet)",
    )
    demo.add_argument("--rows", type=int, default=41, help="rows of the table to print")
    demo.set_defaults(run=_demo)

    screen = commands.add_parser("screen", help="screen every group of a CSV or Parquet file")
    screen.add_argument("path", help="a .csv or .parquet file")
    screen.add_argument("--by", required=True, action="append", help="group column (repeatable)")
    screen.add_argument("--score", required=True, help="score column")
    screen.add_argument("--response", required=True, help="response column")
    screen.add_argument("--weight", default=None, help="weight column (optional)")
    screen.add_argument("--variance", default="auto", choices=["auto", "bernoulli", "empirical"])
    screen.add_argument("--rows", type=int, default=20, help="rows of the table to print")
    screen.add_argument("--output", "-o", default=None, help="also save the table to this file")
    screen.add_argument(
        "--format",
        choices=["csv", "json", "parquet"],
        default=None,
        help="format of --output (default: from its suffix)",
    )
    screen.set_defaults(run=_screen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cumdev`` command line; returns the exit status."""
    import polars_cumdev  # noqa: F401  (registers the namespace)

    args = _parser().parse_args(argv)
    try:
        args.run(args)
    except CumdevError as exc:
        print(f"cumdev: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"cumdev: error: {first}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
