"""A numerical segment feature's levels: its quantile cuts, codes, labels and conditions.

The rule of :func:`polars_cumdev.segments` for a numerical feature: with at
most ``levels`` distinct values each is a level; otherwise the feature is
cut at its quantiles k / ``levels`` (NumPy's default linear rule, from order
statistics rather than a sort), the first bin closed on the left; integers
beyond +-2^53 are cut in exact integer arithmetic; nulls and NaN are
``(missing)``. :func:`cuts_from_ranks` and :func:`numerical_labels` also
serve the cluster engines, which find the order statistics from value tables
merged over the parts (:mod:`polars_cumdev.engines.cluster.segment_levels`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from polars_cumdev.multicalibration.coding import (
    MISSING,
    Coded,
    Segments,
    label_of,
    literal,
    quote,
)

__all__ = ["cuts_from_ranks", "numerical_coded", "numerical_labels", "quantile_cuts"]


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

    name = quote(column.name)
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


def numerical_coded(column: pl.Series, family: Segments) -> Coded:
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
    name = quote(column)
    missing_expr = f"({name} IS NULL OR {name} = 'NaN'::float)"
    whole = dtype.is_integer() or dtype == pl.Boolean
    if whole:
        missing_expr = f"{name} IS NULL"
    if few:
        labels = [label_of(int(v) if whole else float(v)) for v in edges]
        if dtype == pl.Boolean:
            conditions = [f"{name} = {'TRUE' if v else 'FALSE'}" for v in edges]
        else:
            conditions = [f"{name} = {literal(int(v) if whole else float(v))}" for v in edges]
    else:
        labels, conditions = [], []
        for b in range(edges.shape[0] - 1):
            low, high = float(edges[b]), float(edges[b + 1])
            opening = "[" if b == 0 else "("
            labels.append(f"{opening}{label_of(low)}, {label_of(high)}]")
            relation = ">=" if b == 0 else ">"
            conditions.append(f"({name} {relation} {literal(low)} AND {name} <= {literal(high)})")
    if missing:
        labels.append(MISSING)
        conditions.append(missing_expr)
    return labels, conditions
