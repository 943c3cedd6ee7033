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

The sort of the integer key does not depend on the scores' order, so where
the key is certain to be needed (a weighted, 0/1 frame of at least
:data:`_PARALLEL_ROWS` rows whose first :data:`_PROBE` scores already repeat)
it runs on a second thread while this one sorts the scores (NumPy releases
the interpreter's lock while it sorts): on 134,094 rows of 2-decimal scores
and log-normal weights the two sorts took 7.5 ms side by side against 10.6 ms
one after the other, and the whole canonical sort with the gathers after it
13.2-14.2 ms against 15.1-16.3 ms (idle machine, best of many calls, the old
and new code in turn in one process). The order found is the same either
way; only the wall time differs (``benchmarks/small_calibration.py`` times
the whole calibration).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

__all__ = ["Sorted", "canonical_order", "canonical_sort"]


class Sorted(NamedTuple):
    """The rows in canonical order (:func:`canonical_sort`)."""

    #: The order: row numbers of the input.
    order: np.ndarray
    #: The scores, weights (None without) and responses in that order.
    s: np.ndarray
    w: np.ndarray | None
    r: np.ndarray
    #: Where each run of equal scores starts (a boolean per row).
    first: np.ndarray
    #: Whether every score is distinct (a caller then need not look for ties again).
    distinct: bool


def canonical_order(s: np.ndarray, w: np.ndarray | None, r: np.ndarray) -> np.ndarray:
    """The rows' order by score, ties by weight (``w``; None: all equal), then response.

    ``s``, ``w`` and ``r`` are float64 arrays without NaN, the score without
    -0.0, the weights positive. Rows this order may leave in another order
    than the sort by the three keys are interchangeable in every sum over a
    tie (see the module's docstring).
    """
    return canonical_sort(s, w, r).order


def canonical_sort(s: np.ndarray, w: np.ndarray | None, r: np.ndarray) -> Sorted:
    """:func:`canonical_order`, with the columns in that order and what it found on the way.

    Where the integer key of a weight and a 0/1 response is sorted, the
    weights and responses in order are read back from the sorted key (the
    weight's bits and the response's bit, exactly): one gather of the rows
    instead of two.
    """
    binary = _binary(r)
    ahead = _KeySort(w, r) if _repeats_early(s, w, binary) else None
    order = np.argsort(s)
    ordered = s[order]
    first = np.ones(s.shape[0], dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    distinct = bool(first.all())  # (never with ``ahead``: its probe found a repeated score)
    key = None
    if not distinct:
        order, key = _within_runs(order, first, w, r, binary, ahead)
    if key is not None:  # (the weight's bits, then the response's)
        w_in, r_in = (key >> np.uint64(1)).view(np.float64), (key & np.uint64(1)).astype(float)
    else:
        w_in, r_in = None if w is None else w[order], r[order]
    return Sorted(order, ordered, w_in, r_in, first, distinct)


#: Fewest rows for which the key's sort runs beside the scores' (below, a thread's start,
#: about 0.1 ms, is a good part of the sort it would save).
_PARALLEL_ROWS = 50_000
#: How many of the first scores are looked at for a repeat.
_PROBE = 1_024


def _binary(r: np.ndarray) -> bool:
    """Whether every response is 0 or 1 (no -0.0)."""
    return bool(np.all((r == 0.0) | (r == 1.0))) and not bool(np.signbit(r).any())


def _repeats_early(s: np.ndarray, w: np.ndarray | None, binary: bool) -> bool:
    """Whether the integer key will certainly be sorted: weights, 0/1 responses, enough
    rows, and a score repeated among the first :data:`_PROBE` (so some run has two rows)."""
    if w is None or not binary or s.shape[0] < _PARALLEL_ROWS:
        return False
    head = np.sort(s[:_PROBE])
    return bool((head[1:] == head[:-1]).any())


def _key(w: np.ndarray, r: np.ndarray) -> np.ndarray:
    """One integer per row: the weight's bits (a positive double's bits sort as the double),
    then the 0/1 response."""
    key = w.view(np.uint64) << np.uint64(1)
    key |= r != 0.0
    return key


def _key_order(w: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows' order by :func:`_key`, and the keys in that order."""
    key = _key(w, r)
    by_key = np.argsort(key)
    return by_key, key[by_key]


class _KeySort:
    """:func:`_key_order` on a thread of its own, started at once; :meth:`result` waits."""

    def __init__(self, w: np.ndarray, r: np.ndarray) -> None:
        self._rows = w, r
        self._found: tuple[np.ndarray, np.ndarray] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._found = _key_order(*self._rows)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self._thread.join()
        if self._found is None:  # (the thread failed, e.g. out of memory: sort here)
            return _key_order(*self._rows)
        return self._found


def _within_runs(
    order: np.ndarray,
    first: np.ndarray,
    w: np.ndarray | None,
    r: np.ndarray,
    binary: bool,
    ahead: _KeySort | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The order by score ``order`` with each run of equal scores put in canonical order,
    and the integer key (:func:`_key`) in that order where it was sorted (else None).

    The keys are read in the rows' own order (no copy of them in the order by
    score): the rows sorted by key, then stably by their run of equal scores.
    ``ahead``: the integer key's sort, already started.
    """
    if w is None and binary:
        return order, None
    # Each row's run of equal scores, as 16-bit numbers when they fit (a radix sort then;
    # and each array of 134,094 rows fewer, or smaller, is its pages' faults saved).
    small = int(np.count_nonzero(first)) <= 1 << 16
    count = np.cumsum(first, dtype=np.uint16 if small else np.int64)
    count -= 1  # (16 bits: 65,536 runs wrap to 0, less 1 is 65,535, the last run's number)
    run = np.empty(order.shape[0], dtype=count.dtype)
    run[order] = count
    if w is None:
        by_key = np.argsort(r)
        return by_key[np.argsort(run[by_key], kind="stable")], None
    if not binary:
        return np.lexsort((r, w, run)), None
    by_key, keys = ahead.result() if ahead is not None else _key_order(w, r)
    within = np.argsort(run[by_key], kind="stable")
    return by_key[within], keys[within]
