"""Rows of equal score put in a canonical order after a sort by score alone.

The compiled node sorts the rows by score only (one key: on tie-heavy data a
sort by score, weight and response cost a quarter to a half more) and this
pass then orders each run of equal scores by weight, then response, as
:func:`polars_cumdev.method.ties.sort_by_score` does in one sort. Every sum
over a tie or a bin then adds the same values in the same order whatever the
order of the input rows (rows equal in all three columns are interchangeable
in every sum), so the results are the same bits.

On continuous scores there are no runs and the pass is one read of the
scores; runs already in order are left as they are.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT, Array

__all__ = ["tie_order"]


@njit(**JIT)
def _in_order(w: Array, r: Array, weighted: bool, begin: int, end: int) -> bool:
    """Whether rows begin..end-1 are in increasing order of (weight, response)."""
    for i in range(begin + 1, end):
        wa = float(w[i - 1]) if weighted else 0.0
        wb = float(w[i]) if weighted else 0.0
        if wa > wb or (wa == wb and float(r[i - 1]) > float(r[i])):
            return False
    return True


@njit(**JIT)
def _order_run(
    w: Array, r: Array, weighted: bool, begin: int, end: int, order: npt.NDArray[np.int64]
) -> None:
    """Rows begin..end-1 of ``order`` in increasing (weight, response), stably."""
    size = end - begin
    responses = np.empty(size)
    for j in range(size):
        responses[j] = float(r[begin + j])
    by_response = np.argsort(responses, kind="mergesort")
    if weighted:
        weights = np.empty(size)
        for j in range(size):
            weights[j] = float(w[begin + by_response[j]])
        by_weight = np.argsort(weights, kind="mergesort")  # stable: responses stay in order
        for j in range(size):
            order[begin + j] = begin + by_response[by_weight[j]]
    else:
        for j in range(size):
            order[begin + j] = begin + by_response[j]


@njit(**JIT)
def tie_order(s: Array, r: Array, w: Array, weighted: bool) -> npt.NDArray[np.int64]:
    """The rows (sorted by score) in canonical order: a permutation, or empty if they are.

    Parameters
    ----------
    s
        Scores, in increasing order (NaN refused before).
    r, w
        Responses and weights of the same rows (``w`` read only if ``weighted``).
    weighted
        Whether ties are ordered by weight first.

    Returns
    -------
    numpy.ndarray
        ``order`` such that the rows ``order[0], order[1], ...`` are sorted by
        score, then weight, then response; empty when the rows already are.
    """
    m = s.shape[0]
    order = np.empty(0, dtype=np.int64)
    begin = 0
    while begin < m:
        end = begin + 1
        while end < m and s[end] == s[begin]:
            end += 1
        if end - begin > 1 and not _in_order(w, r, weighted, begin, end):
            if order.shape[0] == 0:
                order = np.arange(m)
            _order_run(w, r, weighted, begin, end, order)
        begin = end
    return order
