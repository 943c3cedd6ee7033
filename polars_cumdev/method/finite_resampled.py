"""Finite-sample p-values of ``screen(by=)`` when the responses are not all 0 or 1.

The 0/1 screen redraws a group's responses as Bernoulli of the full
population's bin means (:mod:`.finite_sample`). Real-valued responses and soft
labels have no such model; their null is the one the statistic itself states
(M. Tygert, "Cumulative deviation of a subpopulation from the full
population", (26) and (33)): in each bin, the subpopulation's responses follow
the full population's law there. A redraw gives each of the group's rows the
response of a row of its bin, picked with probability proportional to weight
(:mod:`polars_cumdev.kernel.resampled`); the full population, hence the bin
means, the bin variances and sigma, is held as observed (the approximation the
0/1 screen and the asymptotic sigma make: the group's rows are part of the bins).

The criterion generalizes :func:`~.finite_sample.effective_events`: with m2,
m3 and k4 = m4 - 3 m2^2 the variance, third central moment and fourth
cumulant of one redraw of row i (its bin's weighted moments),

    E = min( (sum w^2 m2)^3 / (sum |w|^3 |m3|)^2,  (sum w^2 m2)^2 / sum w^4 k4^+ ),

which is the 0/1 formula when the responses are 0/1 (m3 = v (1 - 2p),
k4 = v (1 - 6v)): the skewness and excess kurtosis of the group's sum on the
scale of a rare outcome. A few rows make a coarse walk even when the responses
are symmetric and light-tailed, so a group is resampled when
``min(E, n_eff) < 200``, ``n_eff = (sum w)^2 / sum w^2`` (as for a quantile's
hits). A resampled group's p-values travel to :func:`normalize` negated
(:func:`~.finite_sample.method_column` reads the sign: ``p_method`` is then
``"resampled"``).
"""

from __future__ import annotations

import numpy as np

from polars_cumdev.method import finite_sample as fs

__all__ = ["criterion", "population", "resampled"]


def population(s: np.ndarray, r: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """The full population sorted by score, response, weight: (scores, responses, weights,
    running weights with a leading 0). The order does not depend on the rows' order."""
    order = np.lexsort((w, r, s))
    ps, pr, pw = s[order], r[order], w[order]
    cw = np.concatenate([[0.0], np.cumsum(pw)])
    return ps, pr, pw, cw


def criterion(group: np.ndarray, w: np.ndarray, moments: np.ndarray, groups: int) -> np.ndarray:
    """min(E, n_eff) per group (module docstring) from each row's redraw ``moments``
    (mean, m2, m3, m4; 4 x rows) and weight."""
    top = float(np.max(np.abs(w))) if w.size else 0.0
    if 0.0 < top < np.inf:  # exactly, by a power of two (see fs.event_terms)
        w = np.ldexp(w, -int(np.frexp(top)[1]))
    _, m2, m3, m4 = moments
    w2 = w * w
    terms = (w2 * m2, w2 * np.abs(w) * np.abs(m3), w2 * w2 * np.maximum(m4 - 3.0 * m2 * m2, 0.0))
    sums = np.stack([np.bincount(group, weights=t, minlength=groups) for t in terms])
    return np.minimum(fs.effective_events(sums), fs.effective_rows(group, w, groups))


def resampled(
    starts: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    r: np.ndarray,
    point: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    full: tuple[np.ndarray, np.ndarray, np.ndarray],
    tests: int,
    level: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chosen, Kuiper p, KS p) of groups laid out as :func:`~.finite_sample.simulate` takes
    them: which groups meet the criterion, and their resampled p-values (positive).

    ``point``, ``lower``, ``upper``: each row's merged point and each point's midpoints
    (``finite_bins.midpoints``); ``full``: the population's scores, responses, weights.
    """
    from polars_cumdev.kernel.resampled import bin_moments, resampled_pvalues

    ps, pr, pw, cw = population(*(np.ascontiguousarray(a, dtype=np.float64) for a in full))
    lo = np.searchsorted(ps, lower, side="right").astype(np.int64)
    hi = np.searchsorted(ps, upper, side="right").astype(np.int64)
    moments = bin_moments(lo, hi, pr, pw)[:, point]
    sizes = np.diff(starts)
    group = np.repeat(np.arange(sizes.shape[0]), sizes)
    chosen = criterion(group, w, moments, sizes.shape[0]) < fs.MIN_EVENTS
    # a bin without rows (a midpoint rounded onto a score): no law to draw from, keep z's p
    empty = np.bincount(group, weights=(hi <= lo)[point], minlength=sizes.shape[0])
    chosen &= empty == 0
    keep = chosen[group]
    bounds = np.concatenate([[0], np.cumsum(sizes[chosen])]).astype(np.int64)
    draws = fs.redraws(sizes[chosen], tests, level)
    row = [np.ascontiguousarray(a[keep], dtype=np.float64) for a in (s, w, moments[0], r)]
    p_k, p_ks, _ = resampled_pvalues(
        bounds,
        *row,
        lo[point][keep],
        hi[point][keep],
        cw,
        pr,
        draws,
        fs.STOP,
        bool(np.all(pw == 1.0)),
    )
    return chosen, p_k, p_ks
