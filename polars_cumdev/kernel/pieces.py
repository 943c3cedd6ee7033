"""The flagged groups' curves in one range, and the points a crossing stretch may use.

The compiled form of the last stage of
:func:`polars_cumdev.engines.partitioned.range_points` (whose Polars form,
for ranges walked by the Polars stages, is the oracle in the tests). The
points come listed by :func:`polars_cumdev.kernel.ranges.range_cells`, each
group's together and in increasing order of score, with their running
columns over the group's cell; the group's constants come from the first
pass (:mod:`polars_cumdev.engines.partitioned.locating`).

:func:`calibration_pieces` is the same stage for calibration by ranges
(:func:`polars_cumdev.engines.partitioned.calibration_step.walked_points`), whose
points are those of the range's calibration walk; a point-by-point Python
transcription is its oracle in the tests. Both mark the candidates with one loop.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["calibration_pieces", "curve_pieces"]


@njit(**JIT)
def _mark(
    c: F64,
    lo: int,
    hi: int,
    band: tuple[float, float, float, float],
    end: npt.NDArray[np.bool_],
    start: npt.NDArray[np.bool_],
) -> None:
    """The candidates among one group's points ``lo:hi``: with v = sign C, ``end`` where v
    exceeds every earlier v of the range and the point before it (C = ``c_base``) and
    reaches ``hi_level``; ``start`` where v is below every later v and at most
    ``lo_level``. ``band`` is ``(sign, c_base, lo_level, hi_level)``."""
    sign, c_base, lo_level, hi_level = band
    highest = sign * c_base  # the running maximum of v, from the point before the range
    for i in range(lo, hi):
        v = sign * c[i]
        end[i] = v > highest and v >= hi_level
        highest = max(highest, v)
    lowest = np.inf  # the minimum of v over the points after i
    for i in range(hi - 1, lo - 1, -1):
        v = sign * c[i]
        start[i] = v < lowest and v <= lo_level
        lowest = min(lowest, v)


@njit(**JIT)
def curve_pieces(
    starts: I64,
    score: F64,
    running_weight: F64,
    steps: F64,
    place: I64,
    constants: F64,
    prior_n: I64,
) -> tuple[F64, F64, I64, F64, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Each listed point's place on its group's whole curve, and whether it is a candidate.

    Parameters
    ----------
    starts
        Offsets of the groups' points (length groups + 1).
    score, running_weight, steps, place
        Per point: S'_k, the cell's weight up to it, the cell's sum of the
        steps W'_j (R'_j - Rt_j) up to it and its place in the cell (1, 2, ...).
    constants
        Per group, the columns ``c_first`` (C at the cell's first point),
        ``total`` (the group's W), ``tl`` (the last point's term, added when
        the cell has two points or more), ``prior_w`` (the weight before the
        cell), ``next_score`` (the score of the group's next point after the
        range, NaN: none), ``sign`` (+1 or -1), ``c_base`` (C at the point
        before the range) and ``lo_level``, ``hi_level`` (the band of the
        candidates), in that order.
    prior_n
        Per group, the number of its points before the range.

    Returns
    -------
    tuple
        Per point: ``a`` (A_k), ``c`` (C_k), ``position`` (k on the whole
        curve), ``next`` (the score of the following point), ``end`` (v = sign
        C_k is a strict running maximum, from the point before the range, and
        at least ``hi_level``) and ``start`` (v is a strict minimum of the
        points after it in the cell, and at most ``lo_level``). The
        arithmetic is that of the Polars form, in the same order.
    """
    n = score.shape[0]
    a = np.empty(n)
    c = np.empty(n)
    position = np.empty(n, dtype=np.int64)
    following = np.empty(n)
    end = np.empty(n, dtype=np.bool_)
    start = np.empty(n, dtype=np.bool_)
    for j in range(starts.shape[0] - 1):
        lo, hi = starts[j], starts[j + 1]
        c_first, total, tl, prior_w, next_score, sign, c_base, lo_level, hi_level = constants[j]
        for i in range(lo, hi):
            last = i == hi - 1
            tail = tl if last and place[i] > 1 else 0.0
            c[i] = c_first + (steps[i] / total + tail)
            a[i] = (prior_w + running_weight[i]) / total
            position[i] = prior_n[j] + place[i]
            following[i] = next_score if last else score[i + 1]
        _mark(c, lo, hi, (sign, c_base, lo_level, hi_level), end, start)
    return a, c, position, following, end, start


@njit(**JIT)
def calibration_pieces(
    starts: I64, first: I64, curves: F64, constants: F64
) -> tuple[F64, F64, F64, F64, F64, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The calibration's form of :func:`curve_pieces`: each flagged group's points in one
    range, placed on the group's whole curve, and whether each is a candidate.

    Parameters
    ----------
    starts
        Offsets of the flagged groups' points in the output (length groups + 1), as
        :func:`curve_pieces` takes them.
    first
        Per flagged group, the row of ``curves`` holding its first point.
    curves
        The range's walk (:func:`polars_cumdev.kernel.calibration_walk`): per point,
        the cell's running weight, its running sum of W'_k (R'_k - S'_k) and S'_k.
    constants
        Per flagged group, in this order: ``total`` (its W), ``prior_w`` (the
        weight before the cell), ``c_base`` (C at the point before the range),
        ``prior_n`` (the number of its points before the range), ``next_score``
        (the score of its next point after the range, NaN: none), ``sign`` (+1 or
        -1), ``lo_level`` and ``hi_level`` (the band of the candidates).

    Returns
    -------
    tuple
        Per point, the groups one after the other: ``score``, ``a`` (A_k = (weight
        before the cell + running weight) / W), ``c`` (C_k = C before the range +
        running sum / W), ``position`` (k on the whole curve), ``next`` (the score of
        the following point), ``end`` and ``start`` as :func:`curve_pieces` marks
        them (equations (44)-(47) of "Cumulative deviation of a subpopulation from
        the full population"; the candidates of
        :mod:`polars_cumdev.engines.partitioned.locating`).
    """
    n = starts[-1]
    score = np.empty(n)
    a = np.empty(n)
    c = np.empty(n)
    position = np.empty(n)
    following = np.empty(n)
    end = np.empty(n, dtype=np.bool_)
    start = np.empty(n, dtype=np.bool_)
    for j in range(starts.shape[0] - 1):
        lo, hi = starts[j], starts[j + 1]
        total, prior_w, c_base, prior_n, next_score, sign, lo_level, hi_level = constants[j]
        for i in range(lo, hi):
            row = first[j] + (i - lo)
            score[i] = curves[row, 2]
            a[i] = (prior_w + curves[row, 0]) / total
            c[i] = c_base + curves[row, 1] / total
            position[i] = prior_n + (i - lo + 1)
        for i in range(lo, hi - 1):
            following[i] = score[i + 1]
        if hi > lo:
            following[hi - 1] = next_score
        _mark(c, lo, hi, (sign, c_base, lo_level, hi_level), end, start)
    return score, a, c, position, following, end, start
