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

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT, Array
from polars_cumdev.kernel.split import TWO_THREADS

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
def _after(wa: float, ra: float, ia: int, wb: float, rb: float, ib: int) -> bool:
    """Whether row a comes after row b in (weight, response, row) order."""
    if wa != wb:
        return wa > wb
    if ra != rb:
        return ra > rb
    return ia > ib


# Runs are sorted by insertion in blocks of this many rows, then merged.
_BLOCK = 16


@njit(**JIT)
def _sort_keys(keys: F64, rows: I64, spare: F64, spare_rows: I64, n: int) -> I64:
    """Sort the first n (weight, response) pairs and their rows; returns the sorted rows.

    The rows make every key distinct, so the order is that of a stable sort
    by weight then response, however the sort proceeds: insertion within
    blocks of :data:`_BLOCK`, then merges through ``spare`` (no allocation).
    """
    for low in range(0, n, _BLOCK):
        high = min(low + _BLOCK, n)
        for j in range(low + 1, high):
            w0, r0, i0 = keys[j, 0], keys[j, 1], rows[j]
            k = j - 1
            while k >= low and _after(keys[k, 0], keys[k, 1], rows[k], w0, r0, i0):
                keys[k + 1, 0], keys[k + 1, 1], rows[k + 1] = keys[k, 0], keys[k, 1], rows[k]
                k -= 1
            keys[k + 1, 0], keys[k + 1, 1], rows[k + 1] = w0, r0, i0
    source, source_rows, target, target_rows = keys, rows, spare, spare_rows
    width = _BLOCK
    while width < n:
        for low in range(0, n, 2 * width):
            middle, high = min(low + width, n), min(low + 2 * width, n)
            i, j = low, middle
            for out in range(low, high):
                take_right = i >= middle
                if not take_right and j < high:
                    take_right = _after(
                        source[i, 0], source[i, 1], source_rows[i],
                        source[j, 0], source[j, 1], source_rows[j],
                    )  # fmt: skip
                at = j if take_right else i
                target[out, 0], target[out, 1] = source[at, 0], source[at, 1]
                target_rows[out] = source_rows[at]
                if take_right:
                    j += 1
                else:
                    i += 1
        source, source_rows, target, target_rows = target, target_rows, source, source_rows
        width *= 2
    return source_rows


@njit(**JIT)
def _order_run(
    w: Array,
    r: Array,
    weighted: bool,
    begin: int,
    end: int,
    order: npt.NDArray[np.int64],
    keys: F64,
    rows: I64,
    spare: F64,
    spare_rows: I64,
) -> None:
    """Rows begin..end-1 of ``order`` in increasing (weight, response), stably.

    ``keys``, ``rows``, ``spare`` and ``spare_rows`` are work space of at
    least end - begin rows.
    """
    size = end - begin
    for j in range(size):
        keys[j, 0] = float(w[begin + j]) if weighted else 0.0
        keys[j, 1] = float(r[begin + j])
        rows[j] = j
    ranked = _sort_keys(keys, rows, spare, spare_rows, size)
    for j in range(size):
        order[begin + j] = begin + ranked[j]


@njit(**JIT)
def _unordered_run(s: Array, r: Array, w: Array, weighted: bool, begin: int, stop: int) -> int:
    """The first row, from ``begin`` to ``stop``, of a run of equal scores out of order (-1: none).

    ``stop`` is the end of the rows or the first row of a run.
    """
    m = stop
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
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    begin: int,
    stop: int,
    order: npt.NDArray[np.int64],
) -> None:
    """Every run of equal scores from row ``begin`` to ``stop`` put in order in ``order``."""
    room = 0
    keys, spare = np.empty((0, 2)), np.empty((0, 2))
    rows, spare_rows = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    i = begin
    while i >= 0:
        end = i + 2
        while end < stop and s[end] == s[i]:
            end += 1
        if end - i > room:  # work space for the longest run so far (grown rarely)
            room = max(2 * room, end - i, 64)
            keys, spare = np.empty((room, 2)), np.empty((room, 2))
            rows, spare_rows = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
        _order_run(w, r, weighted, i, end, order, keys, rows, spare, spare_rows)
        i = _unordered_run(s, r, w, weighted, end, stop)


@njit(**JIT)
def _run_start(s: Array, i: int) -> int:
    """The first row of the run of equal scores holding row i."""
    while i > 0 and s[i - 1] == s[i]:
        i -= 1
    return i


def tie_order(
    s: np.ndarray, r: np.ndarray, w: np.ndarray, weighted: bool, threads: int | None = None
) -> np.ndarray:
    """The rows (sorted by score) in canonical order: a permutation, or empty if they are.

    Parameters
    ----------
    s
        Scores, in increasing order (NaN refused before).
    r, w
        Responses and weights of the same rows (``w`` read only if ``weighted``).
    weighted
        Whether ties are ordered by weight first.
    threads
        1 or 2; None: two from :data:`polars_cumdev.kernel.split.TWO_THREADS`
        rows. On two, the rows are cut at the start of a run near the middle
        and each thread orders the runs of one half: the same permutation.

    Returns
    -------
    numpy.ndarray
        ``order`` such that the rows ``order[0], order[1], ...`` are sorted by
        score, then weight, then response; empty when the rows already are.
    """
    m = s.shape[0]
    begin = _unordered_run(s, r, w, weighted, 0, m)
    if begin < 0:  # (the search allocates nothing: a compiled loop that may allocate
        return np.empty(0, dtype=np.int64)  # ran ten times slower on continuous scores)
    order = np.arange(m, dtype=np.int64)
    if threads is None:
        threads = 2 if m >= TWO_THREADS else 1
    middle = _run_start(s, max(begin, m // 2))
    if threads < 2 or middle <= begin:
        _order_runs(s, r, w, weighted, begin, m, order)
        return order
    later = _unordered_run(s, r, w, weighted, middle, m)
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(_order_runs, s, r, w, weighted, later, m, order) if later >= 0 else None
        _order_runs(s, r, w, weighted, begin, middle, order)
        if other is not None:
            other.result()
    return order
