"""The segment levels of a multicalibration on a cluster, the same whatever the partitioning.

The level rule of :func:`polars_cumdev.segments` reads a feature's column only
through its table of distinct values and their rows: a categorical feature
keeps its most frequent values
(:func:`~polars_cumdev.multicalibration.levels.categorical_levels`), a
numerical one is cut at quantiles, which are order statistics, and the order
statistic of rank k is the value whose running count of rows passes k
(:func:`~polars_cumdev.multicalibration.numerical_levels.cuts_from_ranks`). Each part
sends its tables (:func:`value_tables`), the driver adds them up by value
(exact integer counts, so any partitioning gives the same table) and applies
the rule (:func:`levels_from_tables`); the workers then code their rows with
the :class:`Levels` (:func:`feature_codes`), as the in-process audit codes
them (:func:`~polars_cumdev.multicalibration.levels.coded_features`).

A numerical feature's table has a row per distinct value: small for a
feature with few values, up to the rows of the column for a continuous one
(16 bytes a value on the driver).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.multicalibration.family import Coded, Segments
from polars_cumdev.multicalibration.levels import categorical_levels
from polars_cumdev.multicalibration.numerical_levels import cuts_from_ranks, numerical_labels

__all__ = ["Levels", "feature_codes", "levels_from_tables", "merge_tables", "value_tables"]

#: Integers a double holds exactly (the in-process rule switches to exact integers beyond).
_EXACT = 1 << 53


def refuse_unsupported(family: Segments, method: str, engine: str) -> None:
    """The choices the cluster engines do not run, refused before any work."""
    if family.rules != "cumdev":
        raise InvalidParameterError(
            f"rules={family.rules!r} orders levels by first appearance along the rows sorted by "
            f"score, which a {engine} cluster does not hold in one order; use rules='cumdev' "
            "or run multicalibration in process"
        )
    if method != "holm":
        raise InvalidParameterError(
            f"method={method!r} redraws every row for each resample; on {engine} only "
            "method='holm' runs (run the bootstrap in process)"
        )


def _column(rows: pl.DataFrame, name: str, categorical: bool) -> pl.Series:
    column = rows.get_column(name)
    if categorical:
        if column.dtype == pl.Categorical or isinstance(column.dtype, pl.Enum):
            return column.cast(pl.String)
        return column
    if column.dtype.is_integer() and column.null_count() < column.len():
        low, high = int(column.min()), int(column.max())  # type: ignore[arg-type]
        if low < -_EXACT or high > _EXACT:
            raise InvalidParameterError(
                f"numerical feature {name!r} has integers beyond +-2^53 ({low} ... {high}); "
                "the cluster engines cut numerical features in float64: make it categorical "
                "or run multicalibration in process"
            )
    return column.cast(pl.Float64)


def value_tables(rows: pl.DataFrame, family: Segments) -> list[pl.DataFrame]:
    """Per feature, a part's distinct values ``v`` (null and NaN included) and rows ``n``."""
    out = []
    for name in family.features:
        column = _column(rows, name, name in family.categorical)
        table = column.to_frame("v").group_by("v").agg(pl.len().cast(pl.Int64).alias("n"))
        out.append(table)
    return out


def merge_tables(parts: Sequence[Sequence[pl.DataFrame]], count: int) -> list[pl.DataFrame]:
    """The parts' tables added up by value, per feature."""
    merged = []
    for f in range(count):
        tables = [p[f] for p in parts]
        table = pl.concat(tables, how="vertical_relaxed").group_by("v").agg(pl.col("n").sum())
        merged.append(table)
    return merged


@dataclass(frozen=True)
class Levels:
    """Every feature's levels (small and picklable: the driver sends it to the workers).

    Per feature: ``kept`` (categorical: the values with a level of their own,
    coded 0, 1, ...; numerical: None), ``edges`` (numerical: the distinct
    values, or the cuts; categorical: None), ``few`` (numerical: ``edges``
    are values), ``other`` (categorical: the code of the pooled values;
    numerical: the code of a null or NaN), ``null_code`` (categorical: the
    code of a null, -1 when none), and ``coded``: the labels, conditions and
    pooled counts (with no row).
    """

    features: tuple[str, ...]
    categorical: tuple[bool, ...]
    kept: tuple[tuple | None, ...]
    dtypes: tuple[pl.DataType, ...]
    edges: tuple[np.ndarray | None, ...]
    few: tuple[bool, ...]
    other: tuple[int, ...]
    null_code: tuple[int, ...]
    coded: tuple[Coded, ...]


def _numerical(name: str, dtype: pl.DataType, table: pl.DataFrame, levels: int) -> tuple:
    present = table.filter(pl.col("v").is_not_null() & pl.col("v").is_not_nan()).sort("v")
    missing = present.height < table.height
    values = present.get_column("v").to_numpy().astype(np.float64)
    counts = present.get_column("n").to_numpy().astype(np.int64)
    few = values.shape[0] <= levels
    if few:
        edges = values
    else:
        running = np.cumsum(counts)

        def statistics(ranks: np.ndarray) -> tuple[np.ndarray, float, float]:
            return values[np.searchsorted(running, ranks, side="right")], values[0], values[-1]

        edges = cuts_from_ranks(int(running[-1]), levels, statistics)
    labels, conditions = numerical_labels(name, dtype, edges, few, missing)
    other = edges.shape[0] if few else edges.shape[0] - 1
    return edges, few, other, Coded(np.zeros(0, dtype=np.int32), labels, conditions)


def levels_from_tables(
    tables: Sequence[pl.DataFrame], family: Segments, schema: pl.Schema
) -> Levels:
    """The levels of the whole columns from their merged :func:`value_tables`."""
    kept, dtypes, edges, few, other, nulls, coded, kinds = [], [], [], [], [], [], [], []
    for name, table in zip(family.features, tables, strict=True):
        categorical = name in family.categorical
        kinds.append(categorical)
        dtype = schema[name]
        if categorical:
            if dtype == pl.Categorical or isinstance(dtype, pl.Enum):
                dtype = pl.String()
            nulls_in = table.filter(pl.col("v").is_null()).get_column("n").sum()
            level = categorical_levels(name, table, int(nulls_in), family)
            kept.append(tuple(level.kept))
            edges.append(None)
            few.append(False)
            other.append(level.other)
            nulls.append(-1 if level.null_code is None else level.null_code)
            coded.append(Coded(np.zeros(0, np.int32), level.labels, level.conditions, level.pooled))
        else:
            found = _numerical(name, dtype, table, family.bins_of(name))
            kept.append(None)
            edges.append(found[0])
            few.append(found[1])
            other.append(found[2])
            nulls.append(-1)
            coded.append(found[3])
        dtypes.append(dtype)
    return Levels(
        tuple(family.features), tuple(kinds), tuple(kept), tuple(dtypes), tuple(edges),
        tuple(few), tuple(other), tuple(nulls), tuple(coded),
    )  # fmt: skip


def feature_codes(rows: pl.DataFrame, levels: Levels) -> list[Coded]:
    """Every feature of a batch of rows coded with ``levels`` (the in-process codes)."""
    from polars_cumdev.kernel.levels import bin_codes

    out = []
    for f, name in enumerate(levels.features):
        column = _column(rows, name, levels.categorical[f])
        template = levels.coded[f]
        if levels.categorical[f]:
            kept = levels.kept[f] or ()
            index = pl.Series([v for v in kept if v is not None], dtype=levels.dtypes[f])
            codes_of = pl.Series(range(len(kept)), dtype=pl.Int32).filter(
                pl.Series([v is not None for v in kept], dtype=pl.Boolean)
            )
            values = column.cast(levels.dtypes[f]) if column.dtype != levels.dtypes[f] else column
            coded = values.replace_strict(
                index, codes_of, default=levels.other[f], return_dtype=pl.Int32
            )
            codes = coded.to_numpy().astype(np.int32)
            if levels.null_code[f] >= 0 and values.null_count():
                codes[values.is_null().to_numpy()] = levels.null_code[f]
        else:
            values = np.ascontiguousarray(column.to_numpy(), dtype=np.float64)
            edges = levels.edges[f]
            assert edges is not None
            offset = 0 if levels.few[f] else -1
            codes = bin_codes(values, edges, offset, levels.other[f])
        out.append(Coded(codes, template.labels, template.conditions, template.pooled))
    return out
