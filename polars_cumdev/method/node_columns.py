"""The node's columns as the kernel reads them: NumPy arrays, and the rows' group numbers.

:mod:`polars_cumdev.method.compiled` hands the kernel the score, response
and weight as NumPy arrays (:func:`numbers`, one contiguous array however
many chunks the batch came in: :func:`contiguous`) and, for the analyses
by group, each row's group number (:func:`group_ids`). The partitioned
engine's compiled range step (:mod:`polars_cumdev.engines.partitioned.step`)
numbers its groups the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.errors import CumdevError
from polars_cumdev.method import _names as nm

__all__ = ["GID", "contiguous", "group_ids", "numbers"]

#: The column of group numbers where a frame carries them.
GID = f"{nm.PREFIX}gid"
# Key ranges up to this size map to group numbers by an offset (else a join).
_DIRECT_RANGE = 1 << 24
_INT64_END = 1 << 63

# Numeric dtypes NumPy holds as they are (no 128-bit integers; Float16 is cast, as Numba's
# kernel does not read half precision).
_NUMPY_NUMBERS = (
    pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
    pl.Float32, pl.Float64,
)  # fmt: skip


def numbers(column: pl.Series) -> np.ndarray:
    """A checked numeric column as a NumPy array the kernel reads as doubles.

    Booleans become 0/1 bytes; dtypes NumPy or the kernel cannot read
    (Int128, UInt128, Decimal, Float16) are cast to Float64, as the Polars
    stages cast every column (a score that float64 cannot hold exactly was
    refused by the checks).
    """
    if column.dtype == pl.Boolean:
        column = column.cast(pl.UInt8)
    elif not any(column.dtype == kind for kind in _NUMPY_NUMBERS):
        column = column.cast(pl.Float64)
    return contiguous(column)


def contiguous(column: pl.Series) -> np.ndarray:
    """A column without nulls as one NumPy array: a view of one chunk, or NumPy's copy of many.

    The streaming engine hands the node its batch in many chunks. Joined by
    Polars, the copy would live in Polars' allocator, which keeps the pages
    after the copy is dropped (the node's peak memory under the streaming
    engine was 0.9x the input above the in-memory engine's); NumPy's copy is
    returned to the system when dropped, and gets huge pages.
    """
    if column.n_chunks() <= 1:
        return np.ascontiguousarray(column.to_numpy())
    return np.concatenate([chunk.to_numpy() for chunk in column.get_chunks()])


def group_ids(batch: pl.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, int, int]:
    """Group numbers of the rows of ``batch``: ``(ids, offset, count)``, 0 <= id - offset < count.

    A single integer-like key without nulls whose values span less than 2^24
    and stay below 2^63
    (integers, booleans, dates, times, strings through a categorical cast) is
    its own number, offset by its smallest value: the kernel reads the
    column as it is, with no copy. Any other key set is numbered by a join
    with its distinct values (null keys included). Numbers with no row are
    allowed: the kernel reports them as absent.
    """
    if not keys:
        return np.zeros(batch.height, dtype=np.int8), 0, 1
    if len(keys) == 1:
        column = batch.get_column(keys[0])
        if column.dtype == pl.String:
            column = column.cast(pl.Categorical)
        if column.dtype == pl.Boolean:
            column = column.cast(pl.Int8)
        physical = column.to_physical()
        numpy_integer = physical.dtype.is_integer() and physical.dtype not in (
            pl.Int128,
            pl.UInt128,
        )
        if numpy_integer and physical.null_count() == 0 and physical.len():
            low, high = int(physical.min()), int(physical.max())  # type: ignore[arg-type]
            # the kernel subtracts the offset in int64: keys from 2^63 on (UInt64) are joined
            if high - low + 1 < _DIRECT_RANGE and high < _INT64_END:
                return contiguous(physical), low, high - low + 1
    # Float keys are joined as (is NaN, value with NaN as 0): NaN is a key like any
    # other, and a join on NaN itself is not matched in every case (a one-row
    # frame with a NaN key found no partner, and an unmatched row numbered
    # outside the groups crashed the compiled walk).
    columns = []
    for key in keys:
        column = pl.col(key)
        if batch.schema[key].is_float():
            columns += [column.is_nan().alias(f"{key}{GID}nan"), column.fill_nan(0.0)]
        else:
            columns.append(column)
    coded = batch.select(columns)
    table = coded.unique().with_row_index(GID)
    ids = coded.join(
        table, on=coded.columns, how="left", nulls_equal=True, maintain_order="left"
    ).get_column(GID)
    if ids.null_count():  # never hand the kernel a row outside the groups
        raise CumdevError(f"internal error: {ids.null_count()} rows matched no group of {keys}")
    return ids.to_numpy(), 0, max(table.height, 1)
