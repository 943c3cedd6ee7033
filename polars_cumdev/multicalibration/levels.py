"""Each segment feature's levels, and every row's level code, on the rows sorted by score.

The rules are those of :func:`polars_cumdev.segments` (see
:mod:`~polars_cumdev.multicalibration.family`): a categorical feature keeps the values
:meth:`~polars_cumdev.multicalibration.family.Segments.kept_count` says (by
default every value with at least ``min_rows`` rows, 50 at most; with
``levels``, the ``levels - 1`` most frequent) and pools the rest into
``(other)``; a
numerical feature is cut at its quantiles k / ``levels`` (raw values when it
has at most ``levels`` distinct ones); nulls are ``(missing)``
(multicalibration-mcgrad.md, section a, for the ``"mcgrad"`` rules). A level's
label is the value as text; when a real value reads like one of the made-up
labels, the made-up label gets more parentheses (``((missing))``), so one
label never names two levels. Each feature costs one pass or two over its
column (:mod:`polars_cumdev.kernel.levels`); integer features of a small range
are counted without hashing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import polars as pl

__all__ = [
    "MISSING",
    "OTHER",
    "CategoricalLevels",
    "Coded",
    "categorical_levels",
    "coded_features",
    "cuts_from_ranks",
    "numerical_labels",
    "quantile_cuts",
]

MISSING = "(missing)"
OTHER = "(other)"
#: Widest value range of an integer feature counted directly (else hashed by Polars).
_DIRECT = 1 << 16
#: Integer features counted directly lie within +-2^62: the compiled counts and lookups
#: subtract the smallest value in int64, which the values then never leave.
_SAFE = 1 << 62


class Segments(Protocol):
    """What the coding reads of a :class:`~polars_cumdev.multicalibration.family.Segments`."""

    rules: str
    categorical: tuple[str, ...]

    @property
    def features(self) -> tuple[str, ...]: ...

    def kept_count(self, name: str, counts: list[int]) -> int: ...

    def bins_of(self, name: str) -> int: ...


@dataclass(frozen=True)
class Coded:
    """One feature's levels: a code per row, and per code a label and an SQL condition."""

    codes: np.ndarray
    labels: list[str]
    conditions: list[str]
    pooled: tuple[int, int] = (0, 0)  # values and rows pooled into (other)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _label(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _made_up(label: str, real: set[str]) -> str:
    """``label`` ("(missing)" or "(other)") wrapped in parentheses until no real level has it."""
    while label in real:
        label = f"({label})"
    return label


def _table(values: pl.Series) -> tuple[pl.DataFrame, int | None]:
    """Per distinct value (nulls included): its rows ``n`` and first row ``first``.

    Also the smallest value of an integer feature counted directly (else None).
    """
    if values.dtype.is_integer() and values.len() > 0 and values.null_count() < values.len():
        low, high = int(values.min()), int(values.max())  # type: ignore[arg-type]
        if high - low < _DIRECT and -_SAFE <= low and high <= _SAFE:
            from polars_cumdev.kernel.levels import integer_counts

            present = values.drop_nulls() if values.null_count() else values
            # row numbers of the present values, to report first rows along all rows
            x = np.ascontiguousarray(present.to_numpy())
            counts, first = integer_counts(x, low, high - low + 1)
            if values.null_count():
                rows = np.flatnonzero(values.is_not_null().to_numpy())
                first = np.where(first >= 0, rows[np.maximum(first, 0)], -1)
            seen = counts > 0
            table = pl.DataFrame(
                {
                    "v": pl.Series(np.arange(low, high + 1)[seen]).cast(values.dtype),
                    "n": counts[seen].astype(np.uint32),
                    "first": first[seen].astype(np.uint32),
                }
            )
            if values.null_count():
                nulls = pl.DataFrame(
                    {
                        "v": pl.Series([None], dtype=values.dtype),
                        "n": pl.Series([values.null_count()], dtype=pl.UInt32),
                        "first": pl.Series([values.is_null().arg_max()], dtype=pl.UInt32),
                    }
                )
                table = pl.concat([table, nulls])
            return table, low
    table = (
        values.to_frame("v")
        .with_row_index("i")
        .group_by("v")
        .agg(pl.len().cast(pl.UInt32).alias("n"), pl.col("i").min().cast(pl.UInt32).alias("first"))
    )
    return table, None


def _categorical(column: pl.Series, family: Segments) -> Coded:
    values = column
    if column.dtype == pl.Categorical or isinstance(column.dtype, pl.Enum):
        values = column.cast(pl.String)
    table, low = _table(values)
    level = categorical_levels(column.name, table, values.null_count(), family)
    kept, other = level.kept, level.other
    if low is not None:  # a lookup table by value: no hashing
        lookup = np.full(int(values.max()) - low + 1, other, dtype=np.int32)
        for code, v in enumerate(kept):
            if v is not None:
                lookup[int(v) - low] = code
        from polars_cumdev.kernel.levels import remap

        x = values.fill_null(low) if values.null_count() else values
        codes = remap(np.ascontiguousarray(x.to_numpy()), lookup, low)
    else:
        index = pl.Series([v for v in kept if v is not None], dtype=values.dtype)
        codes_of = pl.Series(range(len(kept)), dtype=pl.Int32).filter(
            pl.Series([v is not None for v in kept], dtype=pl.Boolean)
        )
        coded = values.replace_strict(index, codes_of, default=other, return_dtype=pl.Int32)
        codes = coded.to_numpy().astype(np.int32)
    if level.null_code is not None:
        codes[values.is_null().to_numpy()] = level.null_code
    return Coded(codes, list(level.labels), list(level.conditions), level.pooled)


@dataclass(frozen=True)
class CategoricalLevels:
    """A categorical feature's levels, before any row is coded.

    ``kept`` are the values with a level of their own (codes 0, 1, ...), then
    ``other`` is the code of every other value; ``null_code`` that of a null
    (None: nulls have no level, there are none).
    """

    kept: list
    labels: list[str]
    conditions: list[str]
    other: int
    null_code: int | None
    pooled: tuple[int, int]


def categorical_levels(
    column: str, table: pl.DataFrame, null_count: int, family: Segments
) -> CategoricalLevels:
    """The levels of categorical feature ``column`` from its value table.

    ``table`` holds per distinct value ``v`` (a null row among them when the
    column has nulls) its rows ``n`` and, for the ``"mcgrad"`` rules, its first
    row ``first``: the whole rule of :meth:`Segments.kept_count` needs no more,
    so a table merged from batches (a cluster's parts) gives the levels of
    the whole column.
    """
    name = _quote(column)
    mcgrad = family.rules == "mcgrad"
    if not mcgrad:
        table = table.filter(pl.col("v").is_not_null())
    tie = ["n", "first"] if mcgrad else ["n", "v"]
    table = table.sort(tie, descending=[True, False], nulls_last=True)
    distinct = table.get_column("v").to_list()
    counts = table.get_column("n").to_list()
    kept = distinct[: family.kept_count(column, counts)]  # the rule: Segments.kept_count
    pooled = len(kept) < len(distinct)
    real = {_label(v) for v in kept if v is not None}
    missing_label, other_label = _made_up(MISSING, real), _made_up(OTHER, real)
    labels = [missing_label if v is None else _label(v) for v in kept]
    conditions = [f"{name} IS NULL" if v is None else f"{name} = {_literal(v)}" for v in kept]
    other = len(kept)
    null_code = kept.index(None) if None in kept else None
    if pooled:
        labels.append(other_label)
        rest = ", ".join(_literal(v) for v in kept if v is not None)
        nulls_pooled = mcgrad and None not in kept and null_count > 0
        inside = f"{name} NOT IN ({rest})" if rest else "TRUE"
        if nulls_pooled:
            conditions.append(f"({inside} OR {name} IS NULL)")
            null_code = other
        else:
            conditions.append(f"({inside} AND {name} IS NOT NULL)")
    if not mcgrad and null_count > 0:
        null_code = len(labels)
        labels.append(missing_label)
        conditions.append(f"{name} IS NULL")
    left = len(distinct) - len(kept)
    return CategoricalLevels(
        kept, labels, conditions, other, null_code, (left, int(sum(counts[len(kept) :])))
    )


def quantile_cuts(values: np.ndarray, levels: int) -> np.ndarray:
    """The smallest value, the quantiles k / ``levels`` (0 < k < ``levels``), the largest.

    Of the non-NaN values of ``values`` (float64, at least one), distinct and
    sorted: the same numbers as ``np.quantile(present, k / levels)`` (its
    default linear method, whose steps are repeated here; a zero is never
    -0.0, which labels would print), from the order
    statistics of :func:`polars_cumdev.kernel.levels.order_statistics`
    (histograms, no sort or partition of the column).
    """
    from polars_cumdev.kernel.levels import order_statistics

    n = values.shape[0] - int(np.count_nonzero(np.isnan(values)))

    def statistics(ranks: np.ndarray) -> tuple[np.ndarray, float, float]:
        found, _, low, high = order_statistics(values, ranks.astype(np.int64))
        return found, low, high

    return cuts_from_ranks(n, levels, statistics)


def cuts_from_ranks(
    n: int, levels: int, statistics: Callable[[np.ndarray], tuple[np.ndarray, float, float]]
) -> np.ndarray:
    """:func:`quantile_cuts` of ``n`` non-NaN values given by their order statistics.

    ``statistics(ranks)`` returns the values of ranks ``ranks`` (0-based,
    increasing) in increasing order, the smallest value and the largest; a
    table of distinct values and their counts gives them as exactly as the
    column does.
    """
    q = np.linspace(0.0, 1.0, levels + 1)[1:-1]
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above], following[above] = n - 1, n - 1
    below = virtual < 0
    previous[below], following[below] = 0, 0
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    # numpy's gamma is taken from the index -1 (its last element) where above
    gamma = virtual - np.where(above, -1, previous)
    ranks = np.unique(np.concatenate([previous, following]))
    found, low, high = statistics(ranks)
    found, low, high = found + 0.0, low + 0.0, high + 0.0  # -0.0 reads 0.0, whatever the order
    a = found[np.searchsorted(ranks, previous)]
    b = found[np.searchsorted(ranks, following)]
    difference = b - a
    inner = a + difference * gamma
    np.subtract(b, difference * (1 - gamma), out=inner, where=gamma >= 0.5)
    return np.unique(np.concatenate([[low], inner, [high]]))


#: Integers a double holds exactly: beyond +-2^53, two integers may become one double.
_EXACT = 1 << 53


def _wide_integers(column: pl.Series, levels: int) -> Coded:
    """The levels of an integer feature with values beyond +-2^53, in exact integers.

    Cast to float64, two such values may round to one double and become one
    level whose condition selects neither; here no value is ever converted.
    With at most ``levels`` distinct values each is a level. Otherwise the
    cuts are the quantiles k / ``levels`` of :func:`quantile_cuts` (NumPy's
    linear rule on the order statistics, the interpolation done in exact
    fractions), each rounded down: for integers, ``x <= c`` and
    ``x <= floor(c)`` select the same rows, so the bins are those of the
    exact cuts, and their conditions hold integer literals only.
    """
    from fractions import Fraction

    name = _quote(column.name)
    present = column.drop_nulls()
    distinct = present.unique().sort()
    if distinct.len() <= levels:
        values = distinct.to_list()
        codes = column.replace_strict(
            distinct, pl.Series(range(distinct.len()), dtype=pl.Int32), default=None
        )
        labels = [str(v) for v in values]
        conditions = [f"{name} = {v}" for v in values]
    else:
        ordered = present.sort()
        n = ordered.len()
        q = np.linspace(0.0, 1.0, levels + 1)[1:-1]
        cuts = [int(ordered[0])]
        for virtual in (n - 1) * q:
            previous = min(int(np.floor(virtual)), n - 1)
            following = min(previous + 1, n - 1)
            a, b = int(ordered[previous]), int(ordered[following])
            gamma = Fraction(float(virtual)) - previous
            cuts.append(int(np.floor(a + (b - a) * gamma)))  # exact: a Fraction's floor
        cuts.append(int(ordered[n - 1]))
        edges = sorted(set(cuts))
        # the number of edges below each value, less one, at least 0 (the first bin is closed)
        below = pl.Series(edges, dtype=column.dtype).search_sorted(present, side="left")
        bins = (below.cast(pl.Int32) - 1).clip(lower_bound=0)
        codes = pl.Series([None] * column.len(), dtype=pl.Int32).scatter(
            column.is_not_null().arg_true(), bins
        )
        labels, conditions = [], []
        for k in range(len(edges) - 1):
            low, high = edges[k], edges[k + 1]
            labels.append(f"{'[' if k == 0 else '('}{low}, {high}]")
            relation = ">=" if k == 0 else ">"
            conditions.append(f"({name} {relation} {low} AND {name} <= {high})")
    out = codes.fill_null(len(labels)).to_numpy().astype(np.int32)
    if column.null_count():
        labels.append(MISSING)
        conditions.append(f"{name} IS NULL")
    return Coded(out, labels, conditions)


def _numerical(column: pl.Series, family: Segments) -> Coded:
    from polars_cumdev.kernel.levels import bin_codes, few_values

    if column.dtype.is_integer() and column.null_count() < column.len():
        low, high = int(column.min()), int(column.max())  # type: ignore[arg-type]
        if low < -_EXACT or high > _EXACT:
            return _wide_integers(column, family.levels_of(column.name))
    values = np.ascontiguousarray(column.cast(pl.Float64).to_numpy(), dtype=np.float64)
    levels = family.bins_of(column.name)
    distinct = few_values(values, levels)
    few = distinct.shape[0] <= levels
    if few:
        codes = bin_codes(values, distinct, 0, distinct.shape[0])
    else:
        distinct = quantile_cuts(values, levels)
        codes = bin_codes(values, distinct, -1, distinct.shape[0] - 1)
    missing = bool((codes == (distinct.shape[0] if few else distinct.shape[0] - 1)).any())
    labels, conditions = numerical_labels(column.name, column.dtype, distinct, few, missing)
    return Coded(codes, labels, conditions)


def numerical_labels(
    column: str, dtype: pl.DataType, edges: np.ndarray, few: bool, missing: bool
) -> tuple[list[str], list[str]]:
    """A numerical feature's labels and SQL conditions: one per value of ``edges`` when
    ``few`` (the feature's distinct values), else one per bin between consecutive cuts;
    then ``(missing)`` when some row is null or NaN."""
    name = _quote(column)
    missing_expr = f"({name} IS NULL OR {name} = 'NaN'::float)"
    literal = dtype.is_integer() or dtype == pl.Boolean
    if literal:
        missing_expr = f"{name} IS NULL"
    if few:
        labels = [_label(int(v) if literal else float(v)) for v in edges]
        if dtype == pl.Boolean:
            conditions = [f"{name} = {'TRUE' if v else 'FALSE'}" for v in edges]
        else:
            conditions = [f"{name} = {_literal(int(v) if literal else float(v))}" for v in edges]
    else:
        labels, conditions = [], []
        for b in range(edges.shape[0] - 1):
            low, high = float(edges[b]), float(edges[b + 1])
            opening = "[" if b == 0 else "("
            labels.append(f"{opening}{_label(low)}, {_label(high)}]")
            relation = ">=" if b == 0 else ">"
            conditions.append(f"({name} {relation} {_literal(low)} AND {name} <= {_literal(high)})")
    if missing:
        labels.append(MISSING)
        conditions.append(missing_expr)
    return labels, conditions


def coded_features(batch: pl.DataFrame, family: Segments) -> list[Coded]:
    """Every feature of ``family`` coded on ``batch`` (the rows sorted by score).

    Codes follow the enumeration order of the levels: the order above for
    ``"cumdev"``, first appearance along the rows for ``"mcgrad"``.
    """
    from polars_cumdev.kernel.levels import first_appearance, remap

    coded = []
    for name in family.features:
        column = batch.get_column(name)
        if name in family.categorical:
            feature = _categorical(column, family)
        else:
            feature = _numerical(column, family)
        if family.rules == "mcgrad" and feature.labels:
            rank = first_appearance(feature.codes, len(feature.labels))
            order = np.argsort(rank)
            feature = Coded(
                remap(feature.codes, rank.astype(np.int32), 0),
                [feature.labels[i] for i in order],
                [feature.conditions[i] for i in order],
                feature.pooled,
            )
        coded.append(feature)
    return coded
