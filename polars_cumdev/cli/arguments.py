"""The ``cumdev`` command's shared arguments and their parsing."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from polars_cumdev.errors import InvalidParameterError

__all__ = [
    "ROWS_HELP",
    "CommandParser",
    "band_argument",
    "data_arguments",
    "fraction_value",
    "level_argument",
    "level_value",
    "positive_int",
    "progress_argument",
    "score_argument",
    "score_names",
    "significance_value",
    "table_arguments",
    "variance_argument",
]

ROWS_HELP = "rows of the table to print (0 prints only how many there are)"


class CommandParser(argparse.ArgumentParser):
    """The parser of ``cumdev`` and of each subcommand (subparsers take its class).

    * No prefix matching (``allow_abbrev=False``): ``--out`` is never taken
      for ``--output``, nor ``--res`` for ``--response``.
    * Every parser records itself in the parsed namespace (``command_parser``),
      so that arguments the subcommand does not know are reported with the
      subcommand's usage, not the top-level one.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.set_defaults(command_parser=self)

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner = getattr(parsed, "command_parser", self)
            owner.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def fraction_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1]: {text!r}")
    return value


def level_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1): {text!r}")
    return value


def score_names(given: Sequence[str], several: bool) -> str | list[str]:
    """``--score`` values as one column name, or a list of covariates (Hilbert order)."""
    names = [name.strip() for text in given for name in text.split(",") if name.strip()]
    if len(names) == 1:
        return names[0]
    if not names or not several:
        raise InvalidParameterError(
            f"--score must name one column here, got {', '.join(given)!r}; several "
            "covariates are for screen, curve, report and paired"
        )
    return names


def score_argument(parser: argparse.ArgumentParser, *, several: bool) -> None:
    """``--score``; with ``several`` a list of covariates too (read by :func:`score_names`)."""
    parser.add_argument(
        "--score",
        required=True,
        action="append",
        help="score column; several covariates (comma-separated or repeated) are ordered "
        "along a Hilbert curve"
        if several
        else "score column",
    )
    parser.set_defaults(several_scores=several)


def data_arguments(parser: argparse.ArgumentParser, *, by: bool, several: bool) -> None:
    parser.add_argument(
        "path",
        help="a .csv, .tsv, .parquet, .ipc/.arrow or .ndjson file, or a directory of Parquet",
    )
    if by:
        parser.add_argument(
            "--by", required=True, action="append", help="group column (repeatable)"
        )
    score_argument(parser, several=several)
    parser.add_argument("--response", required=True, help="response column")
    parser.add_argument("--weight", default=None, help="weight column (optional)")


def table_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rows`` (printed), ``--output`` and ``--format`` (saved) of a table.

    In every subcommand ``--output`` is the table file and ``--out`` a chart
    or report file.
    """
    parser.add_argument("--rows", type=positive_int, default=20, help=ROWS_HELP)
    parser.add_argument(
        "--output", "-o", default=None, metavar="TABLE", help="also save the table to this file"
    )
    parser.add_argument(
        "--format",
        choices=["csv", "json", "parquet"],
        default=None,
        help="format of --output (default: from its suffix)",
    )


def band_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--band",
        type=level_value,
        default=None,
        metavar="ALPHA",
        help="draw the Kolmogorov-Smirnov band at this level and the noise envelope",
    )


def significance_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1]: {text!r}")
    return value


def level_argument(parser: argparse.ArgumentParser) -> None:
    """``--level``: significance level of the findings (:mod:`polars_cumdev.method.findings`)."""
    parser.add_argument(
        "--level",
        type=significance_value,
        default=0.05,
        help="significance level: a located stretch is stated only for groups with "
        "q (BH-adjusted p) at most this (default 0.05; 1 states every stretch found)",
    )


def progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``: stages of long work on stderr (default: a terminal)."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the stages of long work on stderr (default: when stderr is a terminal)",
    )


def variance_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variance",
        default="auto",
        choices=["auto", "bernoulli", "empirical"],
        help="scale of fluctuations: Bernoulli (0/1 responses), empirical, or auto (default)",
    )
