"""The screen's walk without a prefix table: each bin closes when the running sums reach it.

:func:`polars_cumdev.kernel.walks.screen_groups` keeps the full population's
running sums at every distinct score (:func:`prefix_table`, 15 doubles per
distinct score: 1.2 GB for 1e7 continuous scores) and looks each bin's upper
end up in it. Here the same bins are found in two passes over the rows
sorted by score, and the running sums are never stored:

1. :func:`boundaries` -- for each row that opens a new tie of its group,
   the row where the group's previous tie's bin ends: the last row whose
   score is at most the midpoint B_k of the two scores ((6)-(7) of M. Tygert,
   "Cumulative deviation of a subpopulation from the full population"; a binary
   search in the sorted scores between the two ties). The closing is filed under
   that row (a linked list per row: ``head[u]``, ``link[i]``); each group's
   points are counted, so that its curve's place is known.
2. :func:`sweep` -- one walk carrying the compensated running sums (as
   :func:`prefix_table` adds them) and every group's open tie. After the last
   row of a distinct score, the ties filed under it are closed: the bin is
   the difference of the running sums now and at the group's previous
   closing (kept per group), with :func:`bin_moments`' arithmetic on the
   same numbers as the table's rows, so the results are those of
   :func:`screen_groups` bit for bit. Each closed point is also written at
   its place in the curves (W_g A_k, W_g C_k, S'_k), which the located
   stretch reads without walking the rows again.

Memory: two 32-bit integers per row and three doubles per merged point.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import (
    F64,
    HI,
    I64,
    JIT,
    LO,
    LOMAX,
    ONES,
    ROWS,
    TABLE_COLUMNS,
    ZEROS,
    Array,
    _two_sum,
    midpoint,
    moments_between,
    weight,
)
from polars_cumdev.kernel.walks import (
    C_LAST,
    C_MAX,
    C_MIN,
    GROUP_COLUMNS,
    N_SCORES,
    WEIGHT,
    _accumulate,
    merged_tie,
)

__all__ = ["boundaries", "screen_events", "sweep"]


@njit(**JIT)
def _last_row_at_most(s: Array, value: float, low: int, high: int) -> int:
    """Largest row u in [low, high] with s[u] <= value (s[low] <= value assumed)."""
    while low < high:
        mid = (low + high + 1) // 2
        if float(s[mid]) <= value:
            low = mid
        else:
            high = mid - 1
    return low


@njit(**JIT)
def boundaries(
    gid: Array, offset: int, s: Array, groups: int, head: Array, link: Array
) -> tuple[I64, I64]:
    """File every tie's closing under the row where its bin ends (see the module).

    ``head`` (length rows, filled with -1 by the caller) and ``link``
    (length rows) receive the linked lists: ``head[u]`` is the last row i
    whose arrival closes a tie at row u, ``link[i]`` the next such row
    (-1: none); the closed tie is that of group ``gid[i]``. Returns
    ``(points, first)``: each group's number of merged points and first row
    (-1 if absent).
    """
    m = s.shape[0]
    points = np.zeros(groups, dtype=np.int64)
    first = np.full(groups, -1, dtype=np.int64)
    last = np.zeros(groups)
    tie_row = np.zeros(groups, dtype=np.int64)
    for i in range(m):
        g = int(gid[i]) - offset
        si = float(s[i])
        if first[g] < 0:
            first[g] = i
        elif last[g] == si:
            continue
        else:
            u = _last_row_at_most(s, midpoint(last[g], si), tie_row[g], i - 1)
            link[i] = head[u]
            head[u] = i
        last[g] = si
        tie_row[g] = i
        points[g] += 1
    return points, first


# Columns of a queued closing: the tie (score, W, W R, W^2, first R) and, as
# doubles, its rows, whether its responses are mixed, its group and the
# snapshot of the running sums it ends at.
Q_SCORE, Q_W, Q_WR, Q_WW, Q_FIRST, Q_ROWS, Q_MIXED, Q_GROUP, Q_SNAP = range(9)
QUEUE = 1024


@njit(**JIT)
def _flush(
    out: F64,
    queue: F64,
    queued: int,
    snaps: F64,
    lows: F64,
    opened: npt.NDArray[np.bool_],
    centre: float,
    starts: I64,
    curves: F64,
    record: bool,
) -> None:
    """Close the queued ties in order: each bin runs from the group's previous closing.

    (The closings wait in a queue so that their arithmetic does not sit on
    the running sums' chain of additions: done at once, each one stalled the
    walk about twice as long.)
    """
    for q in range(queued):
        g = int(queue[q, Q_GROUP])
        k = int(queue[q, Q_SNAP])
        rows = int(queue[q, Q_ROWS])
        response, factor = merged_tie(
            queue[q, Q_W], queue[q, Q_WR], queue[q, Q_WW], queue[q, Q_FIRST],
            queue[q, Q_MIXED] == 1.0, rows,
        )  # fmt: skip
        ref, var, e_ref, e_bern, e_var, overflow, _, _ = moments_between(
            snaps, k, lows, g if opened[g] else -1, centre
        )
        for j in range(TABLE_COLUMNS):  # (an element loop: a slice copy may allocate)
            lows[g, j] = snaps[k, j]
        opened[g] = True
        _accumulate(
            out, g, queue[q, Q_W], response, factor, rows, ref, var, e_ref, e_bern, e_var,
            overflow,
        )  # fmt: skip
        if record:
            at = starts[g] + int(out[g, N_SCORES]) - 1
            curves[at, 0] = out[g, WEIGHT]
            curves[at, 1] = out[g, C_LAST]
            curves[at, 2] = queue[q, Q_SCORE]


@njit(**JIT)
def _enqueue(queue: F64, queued: int, g: int, tie: F64, ints: I64, snap: int) -> None:
    """Queue the closing of group g's open tie at the running sums ``snap``."""
    for j in range(5):
        queue[queued, j] = tie[g, j]
    queue[queued, Q_ROWS] = ints[g, 0]
    queue[queued, Q_MIXED] = ints[g, 1]
    queue[queued, Q_GROUP] = g
    queue[queued, Q_SNAP] = snap


@njit(**JIT)
def sweep(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
    centre: float,
    head: Array,
    link: Array,
    starts: I64,
    record: bool,
) -> tuple[F64, F64]:
    """The screen's statistics (:func:`screen_groups`' ``out``) from :func:`boundaries`' lists.

    With ``record``, also the curves of every group: ``curves[:, starts[g] + k]``
    holds A_k and C_k (divided by the group's W_g) and S'_k of group g's
    point k (``starts`` from the counts of :func:`boundaries`); else
    ``curves`` is empty.
    """
    m = s.shape[0]
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    curves = np.empty((starts[-1] if record else 0, 3))
    tie = np.zeros((groups, 5))  # score, W, W R, W^2, first R of the open tie
    tie[:, 0] = np.nan
    ints = np.zeros((groups, 2), dtype=np.int64)  # rows, mixed
    lows = np.zeros((groups, TABLE_COLUMNS))
    opened = np.zeros(groups, dtype=np.bool_)
    queue = np.empty((QUEUE + 2 * groups, 9))
    snaps = np.empty((QUEUE + 1, TABLE_COLUMNS))
    queued = 0
    snapped = 0
    h0 = h1 = h2 = h3 = 0.0
    l0 = l1 = l2 = l3 = 0.0
    m0 = m1 = m2 = m3 = 0.0
    zeros = 0
    ones = 0
    for i in range(m):
        g = int(gid[i]) - offset
        si = float(s[i])
        wi = weight(w, weighted, scale, i)
        ri = float(r[i])
        # The running sums, as prefix_table adds them.
        rc = ri - centre
        wr = wi * rc
        h0, e = _two_sum(h0, wi)
        l0 += e
        h1, e = _two_sum(h1, wi * wi)
        l1 += e
        h2, e = _two_sum(h2, wr)
        l2 += e
        h3, e = _two_sum(h3, wr * rc)
        l3 += e
        m0 = max(m0, abs(l0))
        m1 = max(m1, abs(l1))
        m2 = max(m2, abs(l2))
        m3 = max(m3, abs(l3))
        zeros += ri == 0.0
        ones += ri == 1.0
        # The group's open tie (method.md 1.1); a previous tie is closed already.
        if tie[g, 0] == si:
            tie[g, 1] += wi
            tie[g, 2] += wi * ri
            tie[g, 3] += wi * wi
            if ri != tie[g, 4]:
                ints[g, 1] = 1
            ints[g, 0] += 1
        else:
            tie[g, 0] = si
            tie[g, 1] = wi
            tie[g, 2] = wi * ri
            tie[g, 3] = wi * wi
            tie[g, 4] = ri
            ints[g, 0] = 1
            ints[g, 1] = 0
        j = head[i]
        if j < 0 and i < m - 1:
            continue
        row = snaps[snapped]
        row[HI], row[HI + 1], row[HI + 2], row[HI + 3] = h0, h1, h2, h3
        row[LO], row[LO + 1], row[LO + 2], row[LO + 3] = l0, l1, l2, l3
        row[LOMAX], row[LOMAX + 1], row[LOMAX + 2], row[LOMAX + 3] = m0, m1, m2, m3
        row[ROWS] = i + 1
        row[ZEROS] = zeros
        row[ONES] = ones
        while j >= 0:
            _enqueue(queue, queued, int(gid[j]) - offset, tie, ints, snapped)
            queued += 1
            j = link[j]
        snapped += 1
        if queued >= QUEUE or snapped >= QUEUE or i == m - 1:
            if i == m - 1:  # every group's last tie: its bin runs to +inf
                for g in range(groups):
                    if not np.isnan(tie[g, 0]):
                        _enqueue(queue, queued, g, tie, ints, snapped - 1)
                        queued += 1
            _flush(out, queue, queued, snaps, lows, opened, centre, starts, curves, record)
            queued = 0
            snapped = 0
    if record:
        for g in range(groups):
            total = out[g, WEIGHT]
            for k in range(starts[g], starts[g + 1]):
                curves[k, 0] /= total
                curves[k, 1] /= total
    return out, curves


def screen_events(
    gid: np.ndarray,
    offset: int,
    s: np.ndarray,
    r: np.ndarray,
    w: np.ndarray,
    weighted: bool,
    scale: float,
    groups: int,
    centre: float,
    record: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every group's screen statistics, and with ``record`` their curves (A_k, C_k, S'_k).

    The result of :func:`polars_cumdev.kernel.walks.screen_groups` (``out``,
    ``first``) without its prefix table, plus ``starts`` (offsets of the
    groups' points, length groups + 1) and ``curves`` (rows A_k and C_k,
    already divided by the group's W_g, and S'_k; empty without ``record``).
    """
    m = s.shape[0]
    index = np.int32 if m < 2**31 - 1 else np.int64
    head = np.full(m, -1, dtype=index)
    link = np.empty(m, dtype=index)
    points, first = boundaries(gid, offset, s, groups, head, link)
    starts = np.zeros(groups + 1, dtype=np.int64)
    np.cumsum(points, out=starts[1:])
    out, curves = sweep(
        gid, offset, s, r, w, weighted, scale, groups, centre, head, link, starts, record
    )
    return out, first, starts, curves
