"""A conservative finite-sample p-value for calibration of soft labels (docs/method.md).

Calibration of probabilities with responses in [0, 1] that are not all 0 or 1
has no law to redraw from: the null states only E[Y_i | s_i] = s_i, the rows
independent. Where the asymptotic tail is not trusted (the effective number of
events of :mod:`polars_cumdev.method.finite_sample`, from the scores, below
its threshold, and the group a candidate), the p-value is instead an upper
bound on the null tail that holds for every such law, at every size.

Along the group's rows in score order, S_k = sum_{i <= k} w_i (Y_i - s_i) is
a martingale. For a convex f and Y in [0, 1] with mean s, f(Y) <= (1 - Y) f(0)
+ Y f(1) gives E f(Y) <= (1 - s) f(0) + s f(1): the Bernoulli(s) law has the
largest expectation of every convex function (it is above every such law in
the convex order). With f = exp, each increment's conditional moment
generating function is at most the Bernoulli one, for every lambda > 0:

    psi_i(lambda) = log(1 - s_i + s_i e^{lambda w_i}) - lambda w_i s_i  (>= 0),

so M_k = exp(lambda S_k - sum_{i <= k} psi_i(lambda)) is a nonnegative
supermartingale from 1, and Ville's maximal inequality gives, with Psi the sum
of psi_i over the group's rows, for every a >= 0,

    P(max_k S_k >= a) <= exp(Psi(lambda) - lambda a),

the smallest over a fixed grid of lambda taken (Chernoff's bound with the
Bernoulli cumulants; it is also below Freedman's and Bennett's bounds, which
replace every row by the worst one). The same with w_i (s_i - Y_i) bounds
P(max_k (-S_k) >= b). The tie-merged curve of method.md 2 takes S at the
ends of the ties only, whose extremes are at most those of the row walk (in
any order of the rows within a tie): every bound of the row walk holds for it.

* Kolmogorov-Smirnov, G = max |S|: P(G >= g) <= B_up(g) + B_down(g).
* Kuiper, D = max S - min S (S_0 = 0 included): two bounds, the smaller taken
  (the smaller of two upper bounds of the same probability is one too).
  (a) Split: D >= d implies max S >= a or max(-S) >= d - a, for every a in
  [0, d]; the smallest sum B_up(a) + B_down(d - a) over a grid of a.
  (b) Restart (groups of at most :data:`RESTARTS` distinct scores): D >= d
  implies |S_k - S_j| >= d for some tie end j (or j = 0) and some later k;
  the walk after j is a martingale whose Psi sums the rows after j, so the
  sum over those j of B_up(d) + B_down(d) restarted there bounds it. (a)
  wins for long groups, (b) for groups of a few distinct scores.

Every quantity is a function of the scores and weights alone (the observed
statistic aside), so p = min(1, bound(D)) satisfies P(p <= t) <= t for every
t under the null, for every law of the responses on [0, 1] with those means.
It is conservative: a deviation must be larger than the asymptotic test needs
(docs/method.md gives the cost). Every engine brings the group's rows to the
driver and calls the same function on them in the same order: the same bits.
The loops over the rows and the grids are compiled (:mod:`polars_cumdev.kernel.bound`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["GRID", "LAMBDAS", "RESTARTS", "bound_pvalues", "summer"]

#: The grid of lambda times the group's largest weight (Chernoff's parameter).
LAMBDAS = np.geomspace(1e-2, 64.0, 96)
#: Points a / d of the split bound's grid (0 and 1 included).
GRID = 129
#: Groups of at most this many distinct scores also get the restart bound.
RESTARTS = 1000
#: The smallest p-value reported (a bound that underflows is reported as this).
TINY = float(np.finfo(np.float64).tiny)


def summer(starts: np.ndarray):
    """Each group's running sum, as a function of the values (rows sorted by group;
    ``starts``: G + 1 offsets), added in row order from the group's first row: the same
    bits whatever the other groups. Groups of similar sizes (within a factor of two) are
    summed together as the rows of one padded array (at most twice their rows), one pass
    per size class; the layout is worked out once."""
    sizes = np.diff(starts)
    within = np.arange(int(starts[-1])) - np.repeat(starts[:-1], sizes)
    kind = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    classes = []
    for size_class in np.unique(kind[sizes > 0]):  # (a loop over size classes, <= 64)
        chosen = np.flatnonzero((kind == size_class) & (sizes > 0))
        counts = sizes[chosen]
        place = np.repeat(np.arange(chosen.size), counts)
        index = np.repeat(starts[chosen] - (np.cumsum(counts) - counts), counts)
        index = index + np.arange(place.size)  # the chosen groups' rows, in order
        classes.append((index, place, within[index], (chosen.size, int(counts.max()))))

    def run(values: np.ndarray) -> np.ndarray:
        out = np.empty(values.shape[0])
        for index, place, column, shape in classes:
            padded = np.zeros(shape)
            padded[place, column] = values[index]
            out[index] = np.cumsum(padded, axis=1)[place, column]
        return out

    return run


def bound_pvalues(
    starts: np.ndarray, s: np.ndarray, w: np.ndarray, r: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The bound's (Kuiper p, KS p) of groups laid out as
    :func:`~polars_cumdev.method.finite_sample.simulate` takes them (sorted by group, score)."""
    from polars_cumdev.kernel import bound  # (Numba only where a group is bounded)
    from polars_cumdev.kernel.split import on_threads

    groups = starts.shape[0] - 1
    if groups <= 0:
        return np.zeros(0), np.zeros(0)
    sizes = np.diff(starts)
    group = np.repeat(np.arange(groups), sizes)
    top_w = np.zeros(groups)
    np.maximum.at(top_w, group, w)
    lam = LAMBDAS[None, :] / np.where(top_w > 0.0, top_w, 1.0)[:, None]  # groups x L
    # the walk at the ends of the ties, within each group
    sums = summer(starts)
    walk = sums(w * (r - s))
    end = np.ones(s.shape[0], dtype=bool)
    end[:-1] = (s[1:] != s[:-1]) | (group[1:] != group[:-1])
    top, low = np.zeros(groups), np.zeros(groups)
    np.maximum.at(top, group[end], walk[end])
    np.minimum.at(low, group[end], walk[end])
    d, g = top - low, np.maximum(top, -low)
    points = np.bincount(group[end], minlength=groups)
    few = points <= RESTARTS
    again = few[group] & end  # restart points: tie ends but the last
    again[starts[1:] - 1] = False
    at = group[again]
    psi_up, psi_down = np.empty((groups, LAMBDAS.size)), np.empty((groups, LAMBDAS.size))
    # two threads, each half the lambdas of every group; each its own minima, then the
    # smaller of the two (the same whatever the split)
    half = LAMBDAS.size // 2
    jobs = []
    rows = (np.ascontiguousarray(s, dtype=np.float64), np.ascontiguousarray(w, dtype=np.float64))
    arrays = (np.asarray(starts, dtype=np.int64), *rows, lam, g, d, again)
    for columns in ((0, half), (half, LAMBDAS.size)):
        mins = (np.zeros((groups, 4)), np.zeros(at.size), np.zeros(at.size))
        jobs.append((*arrays, np.array(columns), psi_up, psi_down, *mins))
    with ThreadPoolExecutor(1) as pool:
        on_threads(pool, bound.exponents, jobs)
    first, second = jobs[0][-3:], jobs[1][-3:]
    folded, rest_up, rest_down = (np.minimum(a, b) for a, b in zip(first, second, strict=True))
    ks_up, ks_down, zero_up, zero_down = folded.T
    ks = np.exp(ks_up) + np.exp(ks_down)
    restart = np.exp(zero_up) + np.exp(zero_down)
    restart += np.bincount(at, weights=np.exp(rest_up) + np.exp(rest_down), minlength=groups)
    kuiper = np.empty(groups)
    bound.split(psi_up, psi_down, lam, d, np.linspace(0.0, 1.0, GRID), kuiper)
    kuiper = np.where(few, np.minimum(kuiper, restart), kuiper)
    return (np.clip(kuiper, TINY, 1.0), np.clip(ks, TINY, 1.0))
