"""The ``cumdev`` command's shared arguments and their parsing."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from polars_cumdev.errors import InvalidParameterError

__all__ = [
    "ROWS_HELP",
    "data_arguments",
    "fraction_value",
    "level_value",
    "positive_int",
    "score_names",
    "variance_argument",
]

ROWS_HELP = "rows of the table to print (0 prints only how many there are)"


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
            "covariates are for screen and curve"
        )
    return names


def data_arguments(parser: argparse.ArgumentParser, *, by: bool) -> None:
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


def variance_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variance",
        default="auto",
        choices=["auto", "bernoulli", "empirical"],
        help="scale of fluctuations: Bernoulli (0/1 responses), empirical, or auto (default)",
    )
