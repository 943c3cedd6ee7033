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
gets the same p-values there and here. When some response is not 0 or 1 (real
values, soft labels), the candidates are resampled within the full population's
bins instead (:mod:`polars_cumdev.method.finite_resampled`, the null, criterion
and draws of ``screen(by=)``'s groups), all in one compiled call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from polars_cumdev.method import finite_bound, finite_resampled
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_bins import midpoints, prefix_means
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


def _candidates(z: np.ndarray, z_ks: np.ndarray, level: float) -> tuple[np.ndarray, int]:
    """The kept segments whose asymptotic Kuiper or KS p-value is at most the cutoff, and
    the number of tests (segments with a z)."""
    p_k, p_ks, _, _ = pvalue_pairs(z, z_ks)
    with np.errstate(invalid="ignore"):
        small = ~np.isnan(z) & (np.fmin(p_k, p_ks) <= fs.cutoff(level))
    return small, int(np.count_nonzero(~np.isnan(z)))


def _gather(
    rows: int,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    kept: Sequence[np.ndarray],
    small: np.ndarray,
    chosen: Callable[[tuple[int, ...], np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The candidate segments' rows, each segment a group of its own (a row may be in several).

    ``chosen(subset, numbers)`` keeps some of a subset's candidate segment numbers
    (None: all). Returns (their places in the stacked kept segments, each gathered
    row's group, the rows), groups numbered in the order of the places; None if none.
    """
    starts = np.concatenate([[0], np.cumsum([k.shape[0] for k in kept])]).astype(np.int64)
    positions, groups, gathered = [], [], []
    count = 0
    for i, subset in enumerate(subsets):
        a, b = starts[i], starts[i + 1]
        if not small[a:b].any():
            continue
        numbers = kept[i][small[a:b]]
        keep = np.ones(numbers.shape[0], dtype=bool) if chosen is None else chosen(subset, numbers)
        if not keep.any():
            continue
        ids, size = subset_ids(coded, subset, rows)
        numbers = numbers[keep]
        slot = np.full(size, -1, dtype=np.int64)
        slot[numbers] = count + np.arange(numbers.shape[0])
        count += numbers.shape[0]
        found = np.flatnonzero(slot[ids] >= 0)
        groups.append(slot[ids[found]])
        gathered.append(found)
        positions.append(a + np.flatnonzero(small[a:b])[keep])
    if not positions:
        return None
    return np.concatenate(positions), np.concatenate(groups), np.concatenate(gathered)


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
    small, tests = _candidates(z, z_ks, level)
    if not small.any():
        return sim_k, sim_ks
    sums_of = _event_sums(coded, s, w)

    def few(subset: tuple[int, ...], numbers: np.ndarray) -> np.ndarray:
        return fs.effective_events(sums_of(subset)[:, numbers]) < fs.MIN_EVENTS

    found = _gather(s.shape[0], coded, subsets, kept, small, few)
    if found is None:
        return sim_k, sim_ks
    where, group, rows = found
    order, bounds = fs.grouped(group, s[rows], w[rows], r[rows])
    rows = rows[order]
    gs, gw, gr = s[rows], w[rows], r[rows]
    sizes = np.diff(bounds)
    other = (gr != 0.0) & (gr != 1.0)
    soft = np.bincount(np.repeat(np.arange(sizes.shape[0]), sizes), other, sizes.shape[0]) > 0
    for chosen, bounded in ((~soft, False), (soft, True)):
        if not chosen.any():
            continue
        keep = np.repeat(chosen, sizes)
        starts = np.concatenate([[0], np.cumsum(sizes[chosen])]).astype(np.int64)
        ps, pw, pr = gs[keep], gw[keep], gr[keep]
        if bounded:  # soft labels: the conservative bound, KS negated ("bound")
            found_k, found_ks = finite_bound.bound_pvalues(starts, ps, pw, pr)
            found_ks = -found_ks
        else:  # 0/1 responses: redrawn as Bernoulli of the scores
            found_k, found_ks, _ = fs.simulate(starts, ps, pw, ps, pr, tests, level)
        sim_k[where[chosen]] = found_k
        sim_ks[where[chosen]] = found_ks
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
    means, so it needs the candidates' rows first. Responses other than 0/1 are
    resampled within the bins (:func:`~polars_cumdev.method.finite_resampled.resampled`),
    their p-values returned negated (``p_method`` then says ``"resampled"``).
    """
    sim_k = np.full(z.shape, np.nan)
    sim_ks = np.full(z.shape, np.nan)
    small, tests = _candidates(z, z_ks, level)
    found = _gather(s.shape[0], coded, subsets, kept, small) if small.any() else None
    if found is None:
        return sim_k, sim_ks
    where, group, rows = found
    count = where.shape[0]
    order, bounds = fs.grouped(group, s[rows], w[rows], r[rows])
    rows, group = rows[order], group[order]
    gs, gw, gr = s[rows], w[rows], r[rows]
    if not np.all((r == 0.0) | (r == 1.0)):  # real responses, soft labels: resampled
        point, lower, upper = midpoints(gs, group, bounds)
        chosen, found_k, found_ks = finite_resampled.resampled(
            bounds, gs, gw, gr, point, lower, upper, (s, r, w), tests, level
        )
        sim_k[where[chosen]] = -found_k  # negated: p_method "resampled" (normalize)
        sim_ks[where[chosen]] = -found_ks
        return sim_k, sim_ks
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
