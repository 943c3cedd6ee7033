"""Each segment feature's levels, and every row's level code, on the rows sorted by score.

The rules are those of :func:`polars_cumdev.segments` (see
:mod:`~polars_cumdev.multicalibration.family`): a categorical feature keeps the values
:meth:`~polars_cumdev.multicalibration.family.Segments.kept_count` says (by
default every value with at least ``min_rows`` rows, 50 at most; with
``levels``, the ``levels - 1`` most frequent) and pools the rest into
``(other)`` (here); a numerical feature is cut at its quantiles k / ``levels``
(raw values when it has at most ``levels`` distinct ones;
:mod:`~polars_cumdev.multicalibration.numerical_levels`); nulls are ``(missing)``
(multicalibration-mcgrad.md, section a, for the ``"mcgrad"`` rules). A level's
label is the value as text; when a real value reads like one of the made-up
labels, the made-up label gets more parentheses (``((missing))``), so one
label never names two levels. Each feature costs one pass or two over its
column (:mod:`polars_cumdev.kernel.levels`); integer features of a small range
are counted without hashing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.multicalibration.coding import (
    MISSING,
    OTHER,
    Coded,
    Segments,
    label_of,
    literal,
    made_up,
    quote,
)
from polars_cumdev.multicalibration.numerical_levels import numerical_coded

__all__ = ["CategoricalLevels", "categorical_levels", "coded_features"]

#: Widest value range of an integer feature counted directly (else hashed by Polars).
_DIRECT = 1 << 16
#: Integer features counted directly lie within +-2^62: the compiled counts and lookups
#: subtract the smallest value in int64, which the values then never leave.
_SAFE = 1 << 62


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
    name = quote(column)
    mcgrad = family.rules == "mcgrad"
    if not mcgrad:
        table = table.filter(pl.col("v").is_not_null())
    tie = ["n", "first"] if mcgrad else ["n", "v"]
    table = table.sort(tie, descending=[True, False], nulls_last=True)
    distinct = table.get_column("v").to_list()
    counts = table.get_column("n").to_list()
    kept = distinct[: family.kept_count(column, counts)]  # the rule: Segments.kept_count
    pooled = len(kept) < len(distinct)
    real = {label_of(v) for v in kept if v is not None}
    missing_label, other_label = made_up(MISSING, real), made_up(OTHER, real)
    labels = [missing_label if v is None else label_of(v) for v in kept]
    conditions = [f"{name} IS NULL" if v is None else f"{name} = {literal(v)}" for v in kept]
    other = len(kept)
    null_code = kept.index(None) if None in kept else None
    if pooled:
        labels.append(other_label)
        rest = ", ".join(literal(v) for v in kept if v is not None)
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
            feature = numerical_coded(column, family)
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
