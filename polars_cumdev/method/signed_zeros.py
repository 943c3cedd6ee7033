"""Scores that are equal are equal in bits: a score of -0.0 is read as 0.0.

-0.0 and 0.0 are one score (they compare equal, and the method merges them
into one tie), but their bits differ. Were both kept, the tie's merged score
would take the sign of whichever row came first, so the curves' scores and
the located stretches' ends could change sign with the input's row order.
Every route therefore reads such a score as 0.0 before it sorts: the Polars
plan in its standardized score column (:func:`polars_cumdev.method.prepare.prepare`),
the compiled node on the rows it receives (:func:`unsigned_score`), and the
partitioned and cluster engines through the standardized frame.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["unsigned_score", "zero_without_sign"]


def zero_without_sign(
    score: pl.Expr, dtype: pl.DataType | type[pl.DataType] = pl.Float64
) -> pl.Expr:
    """``score`` with -0.0 replaced by 0.0.

    Parameters
    ----------
    score
        A float expression (the standardized score S_i of method.md).
    dtype
        The float dtype of ``score`` (that of the 0.0 put in).

    Returns
    -------
    pl.Expr
        The same values, with 0.0 wherever ``score`` is -0.0 or 0.0; NaN,
        infinities and nulls unchanged. Equal scores merge into one tie
        (method.md 1.1; M. Tygert, "Cumulative deviation of a subpopulation
        from the full population"), which then has one score in bits too.
    """
    return pl.when(score == 0.0).then(pl.lit(0.0, dtype=dtype)).otherwise(score)


def unsigned_score(batch: pl.DataFrame, score: str) -> pl.DataFrame:
    """``batch`` with its float column ``score`` holding no -0.0.

    Parameters
    ----------
    batch
        The rows the compiled node received.
    score
        The name of the score column (any numeric dtype; only floats change).

    Returns
    -------
    pl.DataFrame
        ``batch`` itself when the column holds no -0.0 (checked on its bits,
        without a copy), else a copy with -0.0 replaced by 0.0 in the
        column's own dtype.
    """
    dtype = batch.schema[score]
    if not dtype.is_float():
        return batch
    if dtype in (pl.Float32, pl.Float64) and not any(map(_has_minus_zero, _chunks(batch, score))):
        return batch
    return batch.with_columns(zero_without_sign(pl.col(score), dtype).alias(score))


def _chunks(batch: pl.DataFrame, score: str) -> list[np.ndarray]:
    """The column's chunks as NumPy views, without joining them.

    The streaming engine hands the node its batch in many chunks; joined, the
    column would be copied into Polars' allocator, which keeps the pages.
    """
    return [chunk.to_numpy() for chunk in batch.get_column(score).get_chunks()]


def _has_minus_zero(values: np.ndarray) -> bool:
    """Whether ``values`` (float32 or float64, no nulls) holds -0.0, read from its bits."""
    unsigned = values.view(f"u{values.itemsize}")
    return bool(np.any(unsigned == np.array(1 << (8 * values.itemsize - 1), unsigned.dtype)))
