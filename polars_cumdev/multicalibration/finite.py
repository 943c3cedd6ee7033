"""The segments' finite-sample p-values (:mod:`polars_cumdev.method.finite_sample`).

For calibration the null law of a segment's 0/1 responses is Bernoulli of the
scores, row by row, whatever the other segments: each segment whose
asymptotic Kuiper or Kolmogorov-Smirnov p-value is small enough to matter
(:func:`~polars_cumdev.method.finite_sample.cutoff`) and whose effective
number of events is below
:data:`~polars_cumdev.method.finite_sample.MIN_EVENTS` gets p-values from
redraws of its own rows. Its rows are gathered once per feature subset that
holds such a segment (a row may belong to several of them), then every
flagged segment is simulated in one compiled call.

For the screen of segments (:func:`screen_segment_pvalues`) the null
probabilities are the full population's bin means at each segment's own
scores (method.md 1.2-1.3), as :func:`polars_cumdev.method.finite_groups`
takes them for ``screen(by=)``: so a segment that is a group of ``screen(by=)``
gets the same p-values there and here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_groups import prefix_means
from polars_cumdev.method.pvalues import pvalue_pairs
from polars_cumdev.multicalibration.family import Coded, marginals, subset_ids

__all__ = ["screen_segment_pvalues", "segment_pvalues"]


#: Largest cross of the features whose cells hold the event sums (else a pass per subset).
MAX_CELLS = 1 << 20


def _event_sums(
    coded: Sequence[Coded], s: np.ndarray, w: np.ndarray
) -> Callable[[tuple[int, ...]], np.ndarray]:
    """A function giving a subset's per-segment sums of the event terms (3 x segments;
    :func:`~polars_cumdev.method.finite_sample.effective_events`).

    The sums are taken once per cell of the features' full cross (one compiled
    pass over the rows), each subset's a marginal of it; a cross too large to
    tabulate costs a pass per subset asked for instead.
    """
    from polars_cumdev.kernel.finite_sample import event_sums

    rows = s.shape[0]
    counts = np.array([len(c.labels) for c in coded], dtype=np.int64)
    cells = int(np.prod(counts, dtype=np.float64)) if coded else 1
    if cells > MAX_CELLS:

        def per_subset(subset: tuple[int, ...]) -> np.ndarray:
            ids, size = subset_ids(coded, subset, rows)
            return event_sums(ids.astype(np.int64), s, w, size).T

        return per_subset
    cell, _ = subset_ids(coded, tuple(range(len(coded))), rows)
    table = event_sums(cell.astype(np.int64), s, w, cells)
    first = np.zeros(cells, dtype=np.int64)

    def marginal(subset: tuple[int, ...]) -> np.ndarray:
        return marginals(table, first, counts, subset)[0].T

    return marginal


def segment_pvalues(
    s: np.ndarray,
    w: np.ndarray,
    r: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    kept: Sequence[np.ndarray],
    z: np.ndarray,
    z_ks: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated (Kuiper p, KS p) of the kept segments, NaN where the asymptotic p stays.

    ``kept[i]`` are the kept segment numbers of subset i; ``z`` and ``z_ks``
    the kept segments' normalized statistics, stacked subset after subset;
    ``s``, ``w`` (ones when unweighted), ``r`` the rows in score order.
    """
    sim_k = np.full(z.shape, np.nan)
    sim_ks = np.full(z.shape, np.nan)
    p_k, p_ks, _, _ = pvalue_pairs(z, z_ks)
    with np.errstate(invalid="ignore"):
        small = ~np.isnan(z) & (np.fmin(p_k, p_ks) <= fs.cutoff(level))
    if not small.any():
        return sim_k, sim_ks
    tests = int(np.count_nonzero(~np.isnan(z)))
    sums_of = _event_sums(coded, s, w)
    starts = np.concatenate([[0], np.cumsum([k.shape[0] for k in kept])]).astype(np.int64)
    positions, groups, gathered = [], [], []
    for i, subset in enumerate(subsets):
        a, b = starts[i], starts[i + 1]
        if not small[a:b].any():
            continue
        numbers = kept[i][small[a:b]]
        few = fs.effective_events(sums_of(subset)[:, numbers]) < fs.MIN_EVENTS
        if not few.any():
            continue
        ids, size = subset_ids(coded, subset, s.shape[0])
        numbers = numbers[few]
        slot = np.full(size, -1, dtype=np.int64)
        first = sum(len(x) for x in positions)
        slot[numbers] = first + np.arange(numbers.shape[0])
        rows = np.flatnonzero(slot[ids] >= 0)
        groups.append(slot[ids[rows]])
        gathered.append(rows)
        positions.append(a + np.flatnonzero(small[a:b])[few])
    if not positions:
        return sim_k, sim_ks
    where = np.concatenate(positions)
    group = np.concatenate(groups)
    rows = np.concatenate(gathered)
    order, bounds = fs.grouped(group, s[rows], w[rows], r[rows])
    rows = rows[order]
    found_k, found_ks, _ = fs.simulate(bounds, s[rows], w[rows], s[rows], r[rows], tests, level)
    sim_k[where] = found_k
    sim_ks[where] = found_ks
    return sim_k, sim_ks


def screen_segment_pvalues(
    s: np.ndarray,
    w: np.ndarray,
    r: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    kept: Sequence[np.ndarray],
    z: np.ndarray,
    z_ks: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The screen's simulated (Kuiper p, KS p) of the kept segments, NaN where the asymptotic
    p stays; arguments as :func:`segment_pvalues` (``z`` with the screen's sigma).

    Each candidate's rows are redrawn as Bernoulli of the full population's bin
    means at the segment's scores; the criterion (effective events below
    :data:`~polars_cumdev.method.finite_sample.MIN_EVENTS`) is judged at those
    means, so it needs the candidates' rows first.
    """
    sim_k = np.full(z.shape, np.nan)
    sim_ks = np.full(z.shape, np.nan)
    p_k, p_ks, _, _ = pvalue_pairs(z, z_ks)
    with np.errstate(invalid="ignore"):
        small = ~np.isnan(z) & (np.fmin(p_k, p_ks) <= fs.cutoff(level))
    if not small.any():
        return sim_k, sim_ks
    tests = int(np.count_nonzero(~np.isnan(z)))
    starts = np.concatenate([[0], np.cumsum([k.shape[0] for k in kept])]).astype(np.int64)
    positions, groups, gathered = [], [], []
    count = 0
    for i, subset in enumerate(subsets):
        a, b = starts[i], starts[i + 1]
        if not small[a:b].any():
            continue
        numbers = kept[i][small[a:b]]
        ids, size = subset_ids(coded, subset, s.shape[0])
        slot = np.full(size, -1, dtype=np.int64)
        slot[numbers] = count + np.arange(numbers.shape[0])
        count += numbers.shape[0]
        rows = np.flatnonzero(slot[ids] >= 0)
        groups.append(slot[ids[rows]])
        gathered.append(rows)
        positions.append(a + np.flatnonzero(small[a:b]))
    where = np.concatenate(positions)
    group = np.concatenate(groups)
    rows = np.concatenate(gathered)
    order, bounds = fs.grouped(group, s[rows], w[rows], r[rows])
    rows, group = rows[order], group[order]
    gs, gw, gr = s[rows], w[rows], r[rows]
    # s is sorted: the running sums read at the midpoints give the bin means.
    p = prefix_means(s, np.cumsum(w), np.cumsum(w * r), gs, group, bounds)
    terms = fs.event_terms(p, gw)
    sums = np.stack([np.bincount(group, weights=t, minlength=count) for t in terms])
    chosen = fs.effective_events(sums) < fs.MIN_EVENTS
    if not chosen.any():
        return sim_k, sim_ks
    keep = chosen[group]
    chosen_bounds = np.concatenate([[0], np.cumsum(np.diff(bounds)[chosen])]).astype(np.int64)
    found_k, found_ks, _ = fs.simulate(
        chosen_bounds, gs[keep], gw[keep], p[keep], gr[keep], tests, level
    )
    sim_k[where[chosen]] = found_k
    sim_ks[where[chosen]] = found_ks
    return sim_k, sim_ks
