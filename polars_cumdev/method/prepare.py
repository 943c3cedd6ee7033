"""Stage 1 of the method: check the user's columns and bring them to a standard form.

:func:`prepare` turns any frame into a LazyFrame with float64 columns for the
score, the response and the weight (method.md, notation), plus the grouping
keys untouched. Problems with the *schema* (a missing column, a string score)
are raised at once. Problems with the *values* (nulls, NaN, infinities,
non-positive weights, values out of range, an empty subpopulation) can only be
seen when the data are read, so they are computed inside the same lazy query
and raised, as :class:`~polars_cumdev.errors.InvalidValuesError` or
:class:`~polars_cumdev.errors.EmptySubpopulationError`, when the query is
collected. Nothing is ever dropped silently: either every row is usable or the
query fails with a message naming the column and the number of bad rows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CumdevError,
    EmptySubpopulationError,
    InvalidParameterError,
    first_line,
)
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check, guard, raise_failures, verdict
from polars_cumdev.method.frames import polars_frame
from polars_cumdev.method.keys import Key, with_keys
from polars_cumdev.method.signed_zeros import zero_without_sign
from polars_cumdev.method.weights import SPREAD_MESSAGE, too_small

# Check, guard, raise_failures and verdict live in polars_cumdev.method.checks; they are
# named here too, where the public first found them.
__all__ = [
    "Check",
    "Labels",
    "Prepared",
    "as_lazy",
    "guard",
    "prepare",
    "raise_failures",
    "schema_of",
    "verdict",
]

FrameLike = pl.DataFrame | pl.LazyFrame


def as_lazy(frame: FrameLike) -> pl.LazyFrame:
    """Return ``frame`` as a LazyFrame (a DataFrame is wrapped, not copied).

    A pandas DataFrame or a PyArrow table is converted first
    (:func:`polars_cumdev.method.frames.polars_frame`); anything else raises
    :class:`~polars_cumdev.errors.InvalidParameterError`.
    """
    if isinstance(frame, pl.LazyFrame):
        return frame
    return polars_frame(frame).lazy()


def schema_of(frame: pl.LazyFrame) -> pl.Schema:
    """The schema of ``frame``; a Polars failure is re-raised as :class:`CumdevError`."""
    try:
        return frame.collect_schema()
    except pl.exceptions.ColumnNotFoundError as exc:
        raise ColumnNotFoundError(
            f"the query refers to a missing column: {first_line(exc)}"
        ) from None
    except pl.exceptions.PolarsError as exc:
        raise CumdevError(f"the input query cannot be resolved: {first_line(exc)}") from None


def _require_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidParameterError(
            f"`{what}` must be a column name (a non-empty str), got {value!r}"
        )
    if value.startswith(nm.PREFIX) and value != nm.HILBERT_RANK:
        raise InvalidParameterError(
            f"{what} column {value!r} starts with {nm.PREFIX!r}, the prefix of the library's "
            "internal columns; rename it first"
        )
    return value


def _require_numeric(schema: pl.Schema, column: str, what: str, *, allow_bool: bool) -> None:
    if column not in schema:
        raise ColumnNotFoundError(
            f"{what} column {column!r} not found; the frame has columns {list(schema)}"
        )
    dtype = schema[column]
    if dtype.is_numeric() or (allow_bool and dtype == pl.Boolean):
        return
    kinds = "numeric or boolean" if allow_bool else "numeric"
    raise ColumnTypeError(f"{what} column {column!r} has dtype {dtype}; it must be {kinds}")


def _value_checks(
    column: str, what: str, expr: pl.Expr, dtype: pl.DataType, *, positive: bool
) -> list[Check]:
    """Nulls, NaN and infinities (and for weights, values <= 0 or too small) counted.

    Only a float column can hold NaN or an infinity: for the others those two
    counts are not computed (each would cast the whole column to Float64).
    """
    label = f"{what} column {column!r}"
    checks = [
        Check(
            pl.col(column).null_count(),
            f"{label} has {{count}} null value(s) among {{rows}} rows",
        )
    ]
    if dtype.is_float():
        checks += [
            Check(expr.is_nan().sum(), f"{label} has {{count}} NaN value(s) among {{rows}} rows"),
            Check(
                expr.is_infinite().sum(),
                f"{label} has {{count}} infinite value(s) among {{rows}} rows",
            ),
        ]
    if positive:
        checks.append(
            Check(
                (expr <= 0).sum(),
                f"{label} has {{count}} non-positive value(s) among {{rows}} rows; "
                "weights must be > 0",
            )
        )
        checks.append(Check(too_small(expr), SPREAD_MESSAGE.format(column=column), scope="spread"))
    return checks


# Integer dtypes whose values need not fit a double's 53-bit significand.
_WIDE_INTEGERS = (pl.Int64, pl.UInt64, pl.Int128, pl.UInt128)


def _exact_float_check(column: str, what: str, dtype: pl.DataType) -> list[Check]:
    """A check that a score column's values are all exactly representable in float64.

    Integers beyond 2^53 in magnitude (identifiers, nanosecond timestamps),
    and decimals with more significant digits than a double holds, would be
    rounded when cast to float64: distinct scores could merge and the order
    between close ones could not be kept. They are refused. A value that
    comes back unchanged from float64 keeps its place: the cast is monotone,
    so distinct values that both survive it stay distinct and in order.
    """
    decimal = isinstance(dtype, pl.Decimal)
    if not decimal and not any(dtype == wide for wide in _WIDE_INTEGERS):
        return []
    original = pl.col(column)
    back = original.cast(pl.Float64).cast(dtype, strict=False)
    reason = (
        "with more significant digits than float64 can hold exactly"
        if decimal
        else "beyond 2^53 in magnitude, which float64 cannot hold exactly"
    )
    return [
        Check(
            back.ne_missing(original).sum(),
            f"{what} column {column!r} ({dtype}) has {{count}} value(s) among {{rows}} rows "
            f"{reason} (distinct scores would merge); subtract an offset first, e.g. "
            "pl.col(...) - pl.col(...).min(), or convert to a coarser unit",
        )
    ]


def _range_check(column: str, what: str, expr: pl.Expr, low: float, high: float) -> Check:
    return Check(
        ((expr < low) | (expr > high)).sum(),
        f"{what} column {column!r} has {{count}} value(s) outside [{low:g}, {high:g}] "
        "among {rows} rows",
    )


@functools.lru_cache(maxsize=256)
def _standardized(
    score: str,
    response: str,
    weight: str | None,
    dtypes: tuple[pl.DataType, pl.DataType, pl.DataType | None],
    score_range: tuple[float, float] | None,
    response_range: tuple[float, float] | None,
) -> tuple[tuple[Check, ...], tuple[pl.Expr, ...]]:
    """:func:`prepare`'s checks on the values, in order, and its score, response and weight.

    Built once per set of names, types and ranges (an expression is not
    changed by its use; building them cost a small call about 0.3 ms).
    """
    score_type, response_type, weight_type = dtypes
    s = pl.col(score).cast(pl.Float64)
    r = pl.col(response).cast(pl.Float64)
    checks = [
        Check(
            (pl.len() == 0).cast(pl.Int64),
            "the frame is empty: there is no population to compare with",
            EmptySubpopulationError,
            scope="frame",
        )
    ]
    checks += _exact_float_check(score, "score", score_type)
    checks += _value_checks(score, "score", s, score_type, positive=False)
    checks += _value_checks(response, "response", r, response_type, positive=False)
    columns = [zero_without_sign(s).alias(nm.SCORE), r.alias(nm.RESPONSE)]
    if weight is None or weight_type is None:
        columns.append(pl.lit(1.0, dtype=pl.Float64).alias(nm.WEIGHT))
    else:
        w = pl.col(weight).cast(pl.Float64)
        checks += _value_checks(weight, "weight", w, weight_type, positive=True)
        columns.append(w.alias(nm.WEIGHT))
    if score_range is not None:
        checks.append(_range_check(score, "score", s, *score_range))
    if response_range is not None:
        checks.append(_range_check(response, "response", r, *response_range))
    return tuple(checks), tuple(columns)


@dataclass(frozen=True)
class Labels:
    """How error messages name the user's columns (e.g. "weight column 'WGTP'")."""

    weight: str = "the weights"
    response: str = "the responses"


@dataclass
class Prepared:
    """Standardized data and the checks that must hold before results are trusted.

    Attributes
    ----------
    frame
        LazyFrame with the key columns and float64 columns ``_names.SCORE``,
        ``_names.RESPONSE``, ``_names.WEIGHT``.
    checks
        Lazy row-count checks (:class:`~polars_cumdev.method.checks.Check`); pass
        them to :func:`~polars_cumdev.method.checks.guard` with the source frame.
    source
        The user's frame the checks are evaluated on.
    keys
        Grouping columns (possibly empty).
    columns
        The expressions that make ``frame`` from ``source`` (one select):
        an engine that holds the rows elsewhere applies them batch by batch.
    labels
        How errors found later name the weight and response columns.
    names
        The user's score, response and weight columns (weight None when
        rows weigh 1 each).
    key_types
        The keys' dtypes in ``source`` (from :func:`prepare`'s schema look-up).
    """

    frame: pl.LazyFrame
    source: pl.LazyFrame
    keys: list[str]
    checks: list[Check] = field(default_factory=list)
    columns: list[pl.Expr] = field(default_factory=list)
    labels: Labels = field(default_factory=Labels)
    names: tuple[str, str, str | None] = ("", "", None)
    key_types: dict[str, pl.DataType] = field(default_factory=dict)
    _ok: pl.LazyFrame | None = field(default=None, repr=False)

    def _verdict(self) -> pl.LazyFrame:
        """The checks' verdict (:func:`~polars_cumdev.method.checks.verdict`), built once.

        Built when first asked for, so after the last check is added.
        """
        if self._ok is None:
            self._ok = verdict(self.source, self.checks)
        return self._ok

    def guarded(self, result: pl.LazyFrame) -> pl.LazyFrame:
        """``result`` wired to fail on collection when a check fails.

        See :func:`~polars_cumdev.method.checks.guard`.
        """
        return guard(result, self._verdict()) if self.checks else result

    def gated(self) -> pl.LazyFrame:
        """``frame`` wired to fail on collection when a check fails, before any row flows.

        Everything computed from the gated frame waits for the checks, so a
        problem with the input is the error reported, never a later symptom
        of it (say, a statistic found not finite). Pass the result through
        :meth:`guarded` as well: a query may skip the gate when the frame is
        empty, and the two share one evaluation of the checks. Call both
        after the last check is added.
        """
        return guard(self.frame, self._verdict()) if self.checks else self.frame


def prepare(
    frame: FrameLike,
    *,
    score: str,
    response: str,
    weight: str | None = None,
    by: Key | Sequence[Key] | None = None,
    score_range: tuple[float, float] | None = None,
    response_range: tuple[float, float] | None = None,
    reserved: Sequence[str] = (),
    carry: Sequence[pl.Expr] = (),
) -> Prepared:
    """Validate the columns and build the standardized LazyFrame (method.md, notation).

    Parameters
    ----------
    frame
        The full population, eager or lazy.
    score, response, weight
        Column names of S_i, R_i and W_i. ``weight=None`` means W_i = 1. The
        response may be boolean (read as 0/1).
    by
        Grouping column(s) passed through unchanged; an expression is added
        as a column under its output name first
        (:func:`polars_cumdev.method.keys.with_keys`).
    score_range, response_range
        Closed intervals the values must lie in (calibration needs [0, 1]).
    reserved
        Output column names that ``by`` must not use.
    carry
        Further named expressions to keep in the standardized frame (e.g. a
        subpopulation mask).

    Returns
    -------
    Prepared
        Standardized frame plus the lazy checks on values.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, InvalidParameterError
        At once, for problems visible in the schema.
    """
    lazy, keys = with_keys(as_lazy(frame), by)
    schema = schema_of(lazy)
    score = _require_name(score, "score")
    response = _require_name(response, "response")
    _require_numeric(schema, score, "score", allow_bool=False)
    _require_numeric(schema, response, "response", allow_bool=True)
    if weight is not None:
        weight = _require_name(weight, "weight")
        _require_numeric(schema, weight, "weight", allow_bool=False)
    for key in keys:
        if key not in schema:
            raise ColumnNotFoundError(
                f"`by` column {key!r} not found; the frame has columns {list(schema)}"
            )
        if schema[key] == pl.Object:
            raise ColumnTypeError(
                f"`by` column {key!r} has dtype Object (arbitrary Python objects), which cannot "
                "be grouped or sorted; convert it to a string or number column first"
            )
        if key in reserved or key.startswith(nm.PREFIX):
            raise InvalidParameterError(
                f"`by` column {key!r} clashes with an output column name; rename it first"
            )

    dtypes = (schema[score], schema[response], None if weight is None else schema[weight])
    bounds = [
        None if r is None else (float(r[0]), float(r[1])) for r in (score_range, response_range)
    ]
    checks, standard = _standardized(score, response, weight, dtypes, *bounds)
    columns = [*keys, *carry, *standard]
    labels = Labels(
        weight="the weights (all 1)" if weight is None else f"weight column {weight!r}",
        response=f"response column {response!r}",
    )
    return Prepared(
        frame=lazy.select(columns),
        source=lazy,
        keys=keys,
        checks=list(checks),
        columns=columns,
        labels=labels,
        names=(score, response, weight),
        key_types={k: schema[k] for k in keys},
    )
