"""Parameters of the binned summaries: accepted values, checks, internal column names."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check

#: Accepted values of ``binning``.
BINNINGS = ("equispaced", "equal_count", "equal_error")
#: Accepted values of ``weighting`` in :func:`ece`.
WEIGHTINGS = ("width", "count")
#: Columns of :func:`reliability`, in order.
RELIABILITY_COLUMNS = (
    "population",
    "bin",
    "score_mean",
    "response_mean",
    "weight",
    "count",
    "resample",
)
#: Columns of :func:`ece` after the ``by`` columns, in order.
ECE_COLUMNS = ("n", "bins", "ece1", "ece2", "binning", "weighting")
#: Default numbers of bins of :func:`ece_sweep`: 2, 4, ..., 100.
DEFAULT_SWEEP = tuple(range(2, 101, 2))

_BIN = f"{nm.PREFIX}bin"
_ROW = f"{nm.PREFIX}row"  # position of the row in its population's sorted order
_POP = f"{nm.PREFIX}population"  # 0: the subpopulation, 1: the full population
_RESAMPLE = f"{nm.PREFIX}resample"
_FIRST = f"{nm.PREFIX}first"
_SUM_WS = f"{nm.PREFIX}sum_ws"
_SUM_WR = f"{nm.PREFIX}sum_wr"
_WIDTH = f"{nm.PREFIX}width"
_GAP = f"{nm.PREFIX}gap"
_LO = f"{nm.PREFIX}lo"
_SPAN = f"{nm.PREFIX}span"
_SUBPOPULATION, _FULL = 0, 1


# --------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------


#: Largest count (bins, resamples) accepted: beyond it Polars' integers overflow.
MAX_COUNT = 2**31 - 1


def _check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidParameterError(f"`{name}` must be an int >= {minimum}, got {value!r}")
    if not minimum <= value <= MAX_COUNT:
        raise InvalidParameterError(
            f"`{name}` must be an int from {minimum} to {MAX_COUNT}, got {value!r}"
        )
    return int(value)


def _check_bins(bins: object) -> int:
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise InvalidParameterError(f"`bins` must be a positive int, got {bins!r}")
    if bins > MAX_COUNT:
        raise InvalidParameterError(f"`bins` must be at most {MAX_COUNT}, got {bins!r}")
    return int(bins)


def _check_choice(value: object, name: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        choices = ", ".join(repr(option) for option in options)
        raise InvalidParameterError(f"`{name}` must be one of {choices}; got {value!r}")
    return value


def _unit_checks(score: str, response: str, reason: str) -> list[Check]:
    """Checks that scores and responses are probabilities, i.e. lie in [0, 1]."""
    checks = []
    for column, what in ((score, "score"), (response, "response")):
        values = pl.col(column).cast(pl.Float64)
        checks.append(
            Check(
                ((values < 0.0) | (values > 1.0)).sum(),
                f"{what} column {column!r} has {{count}} value(s) outside [0, 1] among "
                f"{{rows}} rows; {reason}",
            )
        )
    return checks
