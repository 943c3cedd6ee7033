"""The compiled node's rows in order of score: a radix sort of the score, one gather.

:func:`polars_cumdev.method.compiled.node` receives the user's rows in any
order and hands the kernel the rows sorted by score. Polars'
``DataFrame.sort`` finds the order with a comparison sort on the threads; a
least-significant-digit radix sort of the scores' bits
(:func:`polars_cumdev.kernel.ranks.radix_order`, one byte per pass over the
bytes in which the scores differ) finds it in about half the processor time
(``benchmarks/multicalibration.py``), and ``DataFrame.gather`` then moves
the rows. Equal scores may come out in another order than Polars' sort
would give them; the node puts every run of equal scores in its canonical
order right after (by weight, then response), so the kernel's sums are the
same bits either way.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.method.kernel_loader import kernel

__all__ = ["RADIX_ROWS", "by_score"]

#: Fewest rows sorted by the radix sort (the kernel, and so Numba, is loaded from there on).
RADIX_ROWS = 1_000_000


def by_score(batch: pl.DataFrame, score: str) -> pl.DataFrame:
    """``batch`` sorted by column ``score`` (ascending; equal scores in no set order).

    The radix sort for a Float64 score without nulls from :data:`RADIX_ROWS`
    rows; Polars' sort otherwise (other types, nulls, small frames: those
    are refused or cheap).
    """
    column = batch.get_column(score)
    if batch.height < RADIX_ROWS or column.dtype != pl.Float64 or column.null_count():
        return batch.sort(score)
    ranks = kernel().ranks
    raw = np.ascontiguousarray(column.to_numpy()).view(np.uint64)
    varying, _ = ranks.survey(raw, ranks.FLOAT)
    _, rows = ranks.radix_order(raw, ranks.FLOAT, varying, ranks.RADIX_BYTES)
    return batch.gather(pl.Series(rows))
