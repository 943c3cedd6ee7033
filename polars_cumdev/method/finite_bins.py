"""The screen's null probabilities: the full population's bin means at a group's own scores.

A group's merged point k owns the bin between the midpoints to its group's
neighbouring distinct scores (method.md 1.2-1.3); the full population's
weighted mean response over that bin is Rt_k, the probability each of the
group's rows is redrawn with under the screen's finite-sample null
(:mod:`polars_cumdev.method.finite_groups`), and the bins' bounds are where
the resampling null of :mod:`polars_cumdev.method.finite_resampled` draws from.
The range and cluster engines sum the population between the same midpoints
and call :func:`prefix_means`, so every engine gets the same means up to their
rounding (the population is summed in another order there:
:mod:`polars_cumdev.engines.partitioned.finite`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled
from polars_cumdev.method.kernel_loader import loaded
from polars_cumdev.method.numpy_order import canonical_sort

__all__ = ["bin_means", "midpoints", "prefix_means"]


def bin_means(
    full: pl.DataFrame, s: np.ndarray, group: np.ndarray, starts: np.ndarray
) -> np.ndarray:
    """Per row of the sorted groups, Rt of its merged point (method.md 1.2-1.3): the full
    population's weighted mean response over the bin between the midpoints to the group's
    neighbouring distinct scores (a score on a midpoint in the lower bin)."""
    scores, fr, fw = _population_in_order(full)
    return prefix_means(scores, np.cumsum(fw), np.cumsum(fw * fr), s, group, starts)


def _population_in_order(full: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The population's scores, responses and weights in canonical order (by score, each
    run of equal scores by weight, then response): the running sums then add the same
    values in the same order whatever the rows' order.

    From :data:`~polars_cumdev.method.compiled.KERNEL_ROWS` rows, when the compiled
    kernel is loaded already (the kernel engine's screen ran before this step), by its
    bucket sort (:func:`polars_cumdev.kernel.bucketsort.bucket_sort`), about four times
    as fast as NumPy's stable sort of the scores and the three gathers after it at 1e7
    rows (1.3 s against 4.8 s, loaded machine); otherwise by
    :func:`polars_cumdev.method.numpy_order.canonical_sort` (no Numba import, nor a
    compilation, for a screen on the Polars engine). The two give the same order
    (``tests/method/test_bin_means.py``).
    """
    fs_, fr, fw = (
        np.asarray(full[c].to_numpy(), dtype=np.float64) for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    )
    kernel = loaded()
    if fs_.shape[0] >= compiled.KERNEL_ROWS and kernel is not None:
        ids = np.empty(0, dtype=np.int32)
        scores, _, (fr, fw, _) = kernel.bucketsort.bucket_sort(fs_, fr, fw, ids, True)
        return scores, fr, fw
    found = canonical_sort(fs_, fw, fr)
    return found.s, found.r, found.w


def midpoints(
    s: np.ndarray, group: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per merged point of the sorted groups: the row-to-point map, and the point's lower
    and upper midpoints (-inf / +inf at a group's ends)."""
    first = np.ones(s.shape[0], dtype=bool)
    first[1:] = s[1:] != s[:-1]
    first[starts[:-1][starts[:-1] < s.shape[0]]] = True
    point = np.cumsum(first) - 1
    ps, pg = s[first], group[first]
    same_next = np.append(pg[1:] == pg[:-1], False)
    upper = np.where(same_next, (ps + np.append(ps[1:], np.inf)) / 2.0, np.inf)
    lower = np.where(
        np.insert(same_next[:-1], 0, False), np.insert(upper[:-1], 0, -np.inf), -np.inf
    )
    return point, lower, upper


def prefix_means(
    scores: np.ndarray,
    cw: np.ndarray,
    cwr: np.ndarray,
    s: np.ndarray,
    group: np.ndarray,
    starts: np.ndarray,
) -> np.ndarray:
    """:func:`bin_means` from the full population's running sums: ``cw[j]`` and ``cwr[j]``
    sum the weights and weighted responses of the rows with score at most ``scores[j]``
    (sorted). Only their values at the groups' midpoints (:func:`midpoints`) and at +inf
    are read, so a population summed between those midpoints gives the same means."""
    point, lower, upper = midpoints(s, group, starts)
    # the last population row at or below each midpoint (-1: none), searched once each
    high, low = (np.searchsorted(scores, x, side="right") - 1 for x in (upper, lower))

    def below(at: np.ndarray, c: np.ndarray) -> np.ndarray:
        return np.where(at >= 0, c[np.maximum(at, 0)], 0.0)

    weight = below(high, cw) - below(low, cw)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (below(high, cwr) - below(low, cwr)) / weight
    return np.clip(np.nan_to_num(mean, nan=0.0), 0.0, 1.0)[point]
