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
def _unordered_run(s: Array, r: Array, w: Array, weighted: bool, begin: int) -> int:
    """The first row, from ``begin``, of a run of equal scores out of order (-1: none)."""
    m = s.shape[0]
    i = begin
    while i < m - 1:
        if s[i + 1] != s[i]:
            i += 1
            continue
        end = i + 2
        while end < m and s[end] == s[i]:
            end += 1
        if not _in_order(w, r, weighted, i, end):
            return i
        i = end
    return -1


@njit(**JIT)
def _order_runs(
    s: Array, r: Array, w: Array, weighted: bool, begin: int, order: npt.NDArray[np.int64]
) -> None:
    """Every run of equal scores from row ``begin`` on put in order in ``order``."""
    i = begin
    while i >= 0:
        end = i + 2
        while end < s.shape[0] and s[end] == s[i]:
            end += 1
        _order_run(w, r, weighted, i, end, order)
        i = _unordered_run(s, r, w, weighted, end)


def tie_order(s: np.ndarray, r: np.ndarray, w: np.ndarray, weighted: bool) -> np.ndarray:
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
    begin = _unordered_run(s, r, w, weighted, 0)
    if begin < 0:  # (the search allocates nothing: a compiled loop that may allocate
        return np.empty(0, dtype=np.int64)  # ran ten times slower on continuous scores)
    order = np.arange(s.shape[0], dtype=np.int64)
    _order_runs(s, r, w, weighted, begin, order)
    return order
