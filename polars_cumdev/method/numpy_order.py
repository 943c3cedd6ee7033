"""The canonical order of rows in memory, by NumPy: score, ties by weight, then response.

The order of :func:`polars_cumdev.method.ties.sort_by_score` (``CANONICAL``),
found from the arrays of a frame in memory without a Polars sort: NumPy's
sort of one float column is a vectorized one, about four times as fast as
Polars' ``arg_sort`` at 134,094 rows (5 ms against 20 ms on the shared
2-core machine), and a sort by three keys (Polars' or ``np.lexsort``) costs
about 45 ms there. So the rows are sorted by score alone, and only the runs
of equal scores are ordered further, by the keys that can change a sum over
a tie (:func:`polars_cumdev.method.ties.tie_points`, whose ``reduceat``
sums need not add in row order, so that rows are interchangeable only when
equal or when every sum over the tie is exact):

* without weights and with 0/1 responses, none: every weight is the same
  power of two (1 rescaled), so every sum of a tie (of W, W R and W^2) is
  exact whatever the order;
* without weights, by response (rows of one response are then equal);
* with weights and 0/1 responses (no -0.0), by one integer key holding the
  weight's bits (a positive double's bits sort as the double) and the
  response after them;
* otherwise by weight, then response (``np.lexsort``).

One key is a sort of that column followed by a stable sort of the runs'
numbers (a radix sort with at most 65,536 distinct scores, as NumPy sorts
16-bit integers), both read in the rows' own order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["canonical_order", "canonical_sort"]


def canonical_order(s: np.ndarray, w: np.ndarray | None, r: np.ndarray) -> np.ndarray:
    """The rows' order by score, ties by weight (``w``; None: all equal), then response.

    ``s``, ``w`` and ``r`` are float64 arrays without NaN, the score without
    -0.0, the weights positive. Rows this order may leave in another order
    than the sort by the three keys are interchangeable in every sum over a
    tie (see the module's docstring).
    """
    return canonical_sort(s, w, r)[0]


def canonical_sort(
    s: np.ndarray, w: np.ndarray | None, r: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """:func:`canonical_order`, with what it found on the way: the scores in that order,
    where each run of equal scores starts (a boolean per row), and whether every score
    is distinct (a caller then need not look for ties again)."""
    order = np.argsort(s)
    ordered = s[order]
    first = np.ones(s.shape[0], dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    if first.all():
        return order, ordered, first, True
    return _within_runs(order, first, w, r), ordered, first, False


def _within_runs(
    order: np.ndarray, first: np.ndarray, w: np.ndarray | None, r: np.ndarray
) -> np.ndarray:
    """The order by score ``order`` with each run of equal scores put in canonical order.

    The keys are read in the rows' own order (no copy of them in the order by
    score): the rows sorted by key, then stably by their run of equal scores.
    """
    binary = bool(np.all((r == 0.0) | (r == 1.0))) and not bool(np.signbit(r).any())
    if w is None and binary:
        return order
    # Each row's run of equal scores, as 16-bit numbers when they fit (a radix sort then;
    # and each array of 134,094 rows fewer, or smaller, is its pages' faults saved).
    small = int(np.count_nonzero(first)) <= 1 << 16
    count = np.cumsum(first, dtype=np.uint16 if small else np.int64)
    count -= 1  # (16 bits: 65,536 runs wrap to 0, less 1 is 65,535, the last run's number)
    run = np.empty(order.shape[0], dtype=count.dtype)
    run[order] = count
    if w is None:
        key = r
    elif binary:
        key = w.view(np.uint64) << np.uint64(1)
        key |= r != 0.0  # (the response, 0 or 1, after the weight's bits)
    else:
        return np.lexsort((r, w, run))
    by_key = np.argsort(key)
    return by_key[np.argsort(run[by_key], kind="stable")]
