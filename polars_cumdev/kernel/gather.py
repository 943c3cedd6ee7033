"""Moving the node's columns into a new order in one compiled pass, on two threads.

The compiled node (:mod:`polars_cumdev.method.compiled`) reads the rows in
score order: once it knows the order, it moves the score, response and
weight columns and the rows' group numbers into it, and, on data with ties,
moves them again within each run of equal scores
(:mod:`polars_cumdev.kernel.tieorder`). :func:`gather_rows` does each move
for all the columns at once: the index is read once, and the reads of the
four columns at the same row overlap in the memory system. Each thread
fills its own half of the output. Against Polars' ``DataFrame.gather`` of
the same columns (``benchmarks/kernel_stages.py``) this takes about two
thirds of the time on contiguous columns, and under half on a batch the
streaming engine hands over in many chunks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import JIT, Array
from polars_cumdev.kernel.split import TWO_THREADS

__all__ = ["gather_rows"]


@njit(**JIT)
def _gather_slice(
    index: Array,
    begin: int,
    end: int,
    a: Array,
    b: Array,
    c: Array,
    d: Array,
    out_a: Array,
    out_b: Array,
    out_c: Array,
    out_d: Array,
) -> None:
    """``out_x[i] = x[index[i]]`` for i in begin..end-1, for each non-empty column x."""
    has_a, has_b, has_c, has_d = a.size > 0, b.size > 0, c.size > 0, d.size > 0
    for i in range(begin, end):
        j = index[i]
        if has_a:
            out_a[i] = a[j]
        if has_b:
            out_b[i] = b[j]
        if has_c:
            out_c[i] = c[j]
        if has_d:
            out_d[i] = d[j]


def gather_rows(index: np.ndarray, columns: list[np.ndarray], threads: int = 2) -> list[np.ndarray]:
    """Every column at the rows of ``index`` (``column[index]``).

    Empty columns (an absent weight, say) stay empty. Each column keeps its
    dtype; the values are copied, never converted. The columns are moved
    four at a time; on two threads from
    :data:`~polars_cumdev.kernel.split.TWO_THREADS` rows, each filling half
    of every output (the same arrays as on one thread).
    """
    n = index.shape[0]
    cut = n // 2 if threads >= 2 and n >= TWO_THREADS else n
    moved = []
    for first in range(0, len(columns), 4):
        some = columns[first : first + 4]
        padded = [*some, *[np.empty(0, dtype=np.uint8)] * (4 - len(some))]
        outputs = [np.empty(n if c.size else 0, dtype=c.dtype) for c in padded]
        if cut < n:
            with ThreadPoolExecutor(max_workers=1) as pool:
                other = pool.submit(_gather_slice, index, cut, n, *padded, *outputs)
                _gather_slice(index, 0, cut, *padded, *outputs)
                other.result()
        else:
            _gather_slice(index, 0, n, *padded, *outputs)
        moved += outputs[: len(some)]
    return moved
