"""The screen's walk without a prefix table: each bin closes when the running sums reach it.

:func:`polars_cumdev.kernel.walks.screen_groups` keeps the full population's
running sums at every distinct score (:func:`prefix_table`, 15 doubles per
distinct score: 1.2 GB for 1e7 continuous scores) and looks each bin's upper
end up in it. Here the same bins are found in two passes over the rows
sorted by score, and the running sums are never stored:

1. :func:`boundaries` (:mod:`polars_cumdev.kernel.boundaries`) -- for each
   row that opens a new tie of its group, the row where the group's previous
   tie's bin ends: the last row whose score is at most the midpoint B_k of the
   two scores ((6)-(7) of M. Tygert, "Cumulative deviation of a subpopulation
   from the full population"; a binary search in the sorted scores between the
   two ties). The closing is filed under that row (linked lists per row:
   ``heads[t, u]``, ``link[i]``, one list per thread); each group's points are
   counted, so that its curve's place is known.
2. :func:`sweep` -- one walk (per thread) carrying the compensated running
   sums (as :func:`prefix_table` adds them) and every group's open tie. After the last
   row of a distinct score, the ties filed under it are closed: the bin is
   the difference of the running sums now and at the group's previous
   closing (kept per group), with :func:`bin_moments`' arithmetic on the
   same numbers as the table's rows, so the results are those of
   :func:`screen_groups` bit for bit. Each closed point is also written at
   its place in the curves (W_g A_k and W_g C_k), which the located
   stretch reads without walking the rows again (the scores of the points it
   ends at come from :func:`polars_cumdev.kernel.curves.tie_scores`: a third
   column of S'_k was 0.4 times the input's memory at the screen's peak).
   Each closed point also adds its terms of the group's effective number of
   events (``EVENTS_3``, ``EVENTS_4`` of :mod:`polars_cumdev.kernel.walks`), which
   the finite-sample step reads to set aside the groups that need no look at
   their rows.

Memory: two 32-bit integers per row (three on two threads) and two doubles
per merged point.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.boundaries import boundaries, file_closings
from polars_cumdev.kernel.curves import divide_by_weight
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
    moments_between,
    weight,
)
from polars_cumdev.kernel.split import TWO_THREADS
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


# Columns of a queued closing: the tie (W, W R, W^2, first R) and, as doubles,
# its rows, whether its responses are mixed, its group and the snapshot of the
# running sums it ends at; then the tie's sums of W^3 and W^4 (for the effective
# events: EVENTS_3 and EVENTS_4 of polars_cumdev.kernel.walks). (Its score is not
# queued: the curves keep none.)
Q_W, Q_WR, Q_WW, Q_FIRST, Q_ROWS, Q_MIXED, Q_GROUP, Q_SNAP, Q_W3, Q_W4 = range(10)
Q_COLUMNS = 10
QUEUE = 16384
# UNSIGNED: this walk indexes its arrays by rows and groups held as unsigned
# integers. With a signed index Numba adds a test for a negative one (counted
# from the end) to every access; without them the one-thread walk took 1.25-1.32
# -> 1.14-1.17 s at 1e7 continuous rows and 0.77-0.84 -> 0.69-0.74 s at 5-decimal
# ones, with the same bits (a gcc transcription, benchmarks/c_walk.py, took
# 0.70-0.82 of Numba's time before).


@njit(**JIT)
def _flush(
    out: F64,
    queue: F64,
    queued: int,
    snaps: F64,
    lows: F64,
    centre: float,
    starts: I64,
    curves: F64,
    record: bool,
    owner: npt.NDArray[np.int8],
    who: int,
) -> None:
    """Close the queued ties of the groups with ``owner[g] == who``, in order.

    Each bin runs from the group's previous closing, whose running sums are
    kept in ``lows[g]``; before a group's first closing that row is zeros, so
    its first bin subtracts nothing: exactly the sums from -inf, with no
    branch for it. (The closings wait in a
    queue so that their arithmetic does not sit on the running sums' chain of
    additions: done at once, each one stalled the walk about twice as long.)
    A closing touches only its group's state, so two threads may close the
    same batch for disjoint sets of groups.
    """
    for q in range(queued):
        g = np.uint64(queue[q, Q_GROUP])  # (unsigned indices: see UNSIGNED)
        if owner[g] != who:
            continue
        k = np.uint64(queue[q, Q_SNAP])
        rows = int(queue[q, Q_ROWS])
        response, factor = merged_tie(
            queue[q, Q_W], queue[q, Q_WR], queue[q, Q_WW], queue[q, Q_FIRST],
            queue[q, Q_MIXED] == 1.0, rows,
        )  # fmt: skip
        below = np.int64(g)  # (signed: moments_between tells -1, no lower row, apart)
        moments = moments_between(snaps, k, lows, below, centre)
        ref, var, e_ref, e_bern, e_var, overflow, _, _ = moments
        for j in range(TABLE_COLUMNS):  # (an element loop: a slice copy may allocate)
            lows[g, j] = snaps[k, j]
        _accumulate(
            out, g, queue[q, Q_W], response, factor, rows, ref, var, e_ref, e_bern, e_var,
            overflow, queue[q, Q_W3], queue[q, Q_W4],
        )  # fmt: skip
        if record:
            at = np.uint64(starts[g] + int(out[g, N_SCORES]) - 1)
            curves[at, 0] = out[g, WEIGHT]
            curves[at, 1] = out[g, C_LAST]


@njit(**JIT)
def _enqueue(queue: F64, queued: int, g: int, tie: F64, ints: I64, snap: int) -> None:
    """Queue the closing of group g's open tie at the running sums ``snap``."""
    queue[queued, Q_W], queue[queued, Q_WR] = tie[g, 1], tie[g, 2]
    queue[queued, Q_WW], queue[queued, Q_FIRST] = tie[g, 3], tie[g, 4]
    queue[queued, Q_ROWS] = ints[g, 0]
    queue[queued, Q_MIXED] = ints[g, 1]
    queue[queued, Q_GROUP] = g
    queue[queued, Q_SNAP] = snap
    queue[queued, Q_W3], queue[queued, Q_W4] = tie[g, 5], tie[g, 6]


# The running sums carried from one batch of rows to the next: h, l, m (4 each),
# the counts of rows with R = 0 and R = 1.
SUMS = 14


@njit(**JIT)
def _fill(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    centre: float,
    heads: Array,
    link: Array,
    sums: F64,
    tie: F64,
    ints: I64,
    queue: F64,
    snaps: F64,
    begin: int,
) -> tuple[int, int]:
    """Walk the rows from ``begin`` until ``queue`` or ``snaps`` is full: their closings queued.

    Carries the running sums (``sums``) and every group's open tie (``tie``,
    ``ints``) from one call to the next. Returns ``(end, queued)``: the first
    row not walked and the number of closings queued (at the last row, every
    group's last tie too).
    """
    m = s.shape[0]
    groups = tie.shape[0]
    lists = heads.shape[0]
    room = snaps.shape[0] - 1  # a batch ends once it holds this many snapshots or closings
    h0, h1, h2, h3 = sums[0], sums[1], sums[2], sums[3]
    l0, l1, l2, l3 = sums[4], sums[5], sums[6], sums[7]
    m0, m1, m2, m3 = sums[8], sums[9], sums[10], sums[11]
    zeros, ones = int(sums[12]), int(sums[13])
    queued = 0
    snapped = 0
    end = m
    for n in range(begin, m):
        i = np.uint64(n)  # (unsigned indices: see UNSIGNED)
        g = np.uint64(int(gid[i]) - offset)
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
        ww = wi * wi
        if tie[g, 0] == si:
            tie[g, 1] += wi
            tie[g, 2] += wi * ri
            tie[g, 3] += ww
            tie[g, 5] += ww * wi
            tie[g, 6] += ww * ww
            if ri != tie[g, 4]:
                ints[g, 1] = 1
            ints[g, 0] += 1
        else:
            tie[g, 0] = si
            tie[g, 1] = wi
            tie[g, 2] = wi * ri
            tie[g, 3] = ww
            tie[g, 4] = ri
            tie[g, 5] = ww * wi
            tie[g, 6] = ww * ww
            ints[g, 0] = 1
            ints[g, 1] = 0
        if heads[0, i] < 0 and heads[lists - 1, i] < 0 and n < m - 1:
            continue
        row = snaps[snapped]
        row[HI], row[HI + 1], row[HI + 2], row[HI + 3] = h0, h1, h2, h3
        row[LO], row[LO + 1], row[LO + 2], row[LO + 3] = l0, l1, l2, l3
        row[LOMAX], row[LOMAX + 1], row[LOMAX + 2], row[LOMAX + 3] = m0, m1, m2, m3
        row[ROWS] = n + 1
        row[ZEROS] = zeros
        row[ONES] = ones
        for list_ in range(lists):  # (the closings of different groups: any order)
            j = heads[list_, i]
            while j >= 0:
                _enqueue(queue, queued, int(gid[np.uint64(j)]) - offset, tie, ints, snapped)
                queued += 1
                j = link[j]
        snapped += 1
        if n == m - 1:  # every group's last tie: its bin runs to +inf
            for last in range(groups):
                if not np.isnan(tie[last, 0]):
                    _enqueue(queue, queued, last, tie, ints, snapped - 1)
                    queued += 1
        if queued >= room or snapped >= room:
            end = n + 1
            break
    sums[0], sums[1], sums[2], sums[3] = h0, h1, h2, h3
    sums[4], sums[5], sums[6], sums[7] = l0, l1, l2, l3
    sums[8], sums[9], sums[10], sums[11] = m0, m1, m2, m3
    sums[12], sums[13] = zeros, ones
    return end, queued


def _walk_share(
    columns: tuple,
    heads: np.ndarray,
    link: np.ndarray,
    closing: tuple,
    owner: np.ndarray,
    who: int,
    batch: int,
) -> None:
    """Walk every row, closing the points of the groups with ``owner[g] == who``.

    ``heads`` holds the lists of those groups' closings (one row of
    :func:`boundaries`' lists). The running sums and the open ties are this
    walk's own; ``closing`` is the shared ``(out, lows, centre, starts,
    curves, record)``, of which the walk writes its groups' rows only.
    """
    gid, offset, s, r, w, weighted, scale, groups, centre = columns
    m = s.shape[0]
    tie = np.zeros((groups, 7))  # score, W, W R, W^2, first R, W^3, W^4 of the open tie
    tie[:, 0] = np.nan
    ints = np.zeros((groups, 2), dtype=np.int64)  # rows, mixed
    sums = np.zeros(SUMS)
    queue, snaps = np.empty((batch + 2 * groups, Q_COLUMNS)), np.empty((batch + 1, TABLE_COLUMNS))
    out, lows, centre, starts, curves, record = closing
    begin = 0
    while begin < m:
        begin, queued = _fill(
            gid, offset, s, r, w, weighted, scale, centre, heads, link, sums, tie, ints,
            queue, snaps, begin,
        )  # fmt: skip
        _flush(out, queue, queued, snaps, lows, centre, starts, curves, record, owner, who)


def sweep(
    gid: np.ndarray,
    offset: int,
    s: np.ndarray,
    r: np.ndarray,
    w: np.ndarray,
    weighted: bool,
    scale: float,
    groups: int,
    centre: float,
    heads: np.ndarray,
    link: np.ndarray,
    starts: np.ndarray,
    owner: np.ndarray,
    record: bool,
    batch: int = QUEUE,
) -> tuple[np.ndarray, np.ndarray]:
    """The screen's statistics (:func:`screen_groups`' ``out``) from :func:`boundaries`' lists.

    With ``record``, also the curves of every group: ``curves[starts[g] + k]``
    holds A_k and C_k (divided by the group's W_g) of group g's
    point k (``starts`` from the counts of :func:`boundaries`); else
    ``curves`` is empty.

    ``heads`` has one row of lists per thread (:func:`file_closings`), row
    t holding the closings of the groups with ``owner[g] == t``. Each thread
    walks every row in batches of ``batch`` closings, carrying its own
    running sums (the same additions in the same order on each: the same
    numbers) and closing its groups' points (:func:`_fill`, then
    :func:`_flush`). No thread waits for the other and no batch crosses
    between the cores (an earlier design, one thread carrying the sums and
    both closing, spent about as much time passing the batches between the
    cores as it saved). A group's closings are done once, in the order of
    the rows, with the same numbers, and touch only its own state, so the
    results are the same bits on one thread or two.
    """
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    curves = np.empty((starts[-1] if record else 0, 2))
    lows = np.zeros((groups, TABLE_COLUMNS))
    columns = (gid, offset, s, r, w, weighted, scale, groups, centre)
    closing = (out, lows, centre, starts, curves, record)
    shares = [(heads[t : t + 1], link, closing, owner, t, batch) for t in range(heads.shape[0])]
    with ThreadPoolExecutor(max_workers=max(len(shares) - 1, 1)) as pool:
        others = [pool.submit(_walk_share, columns, *share) for share in shares[1:]]
        _walk_share(columns, *shares[0])
        for future in others:
            future.result()
    if record:
        divide_by_weight(out, starts, curves)
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
    batch: int = QUEUE,
    threads: int = 2,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every group's screen statistics, and with ``record`` their curves (A_k and C_k).

    The result of :func:`polars_cumdev.kernel.walks.screen_groups` (``out``,
    ``first``) without its prefix table, plus ``starts`` (offsets of the
    groups' points, length groups + 1) and ``curves`` (rows A_k and C_k,
    already divided by the group's W_g; empty without ``record``).
    ``batch``: closings per batch of :func:`sweep` (fewer in the tests, to
    run many batches on small data) and ``threads`` (1 or 2: the walks of
    :func:`file_closings` and :func:`sweep`): the results depend on neither.
    """
    two = threads >= 2 and s.shape[0] >= TWO_THREADS
    heads, link, points, first, owner = file_closings(gid, offset, s, groups, 2 if two else 1)
    starts = np.zeros(groups + 1, dtype=np.int64)
    np.cumsum(points, out=starts[1:])
    columns = (gid, offset, s, r, w, weighted, scale, groups, centre, heads, link, starts, owner)
    out, curves = sweep(*columns, record, batch)
    return out, first, starts, curves


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
