"""Weighted isotonic regression of many sequences at once, and resamples under calibration.

The CORP reliability diagram (:mod:`polars_cumdev.corp.decomposition`) needs the weighted
least-squares nondecreasing fit of the responses on the scores for every
group, and again for every resample of every group when it draws consistency
bands. The pool-adjacent-violators algorithm (PAV) that computes it is
sequential, and :func:`scipy.optimize.isotonic_regression` fits one sequence
per call. A Python loop over groups (or over resamples times groups) is what
the library avoids, so here every sequence is fitted in *one* call.

How: the sequences, each a segment of responses in [0, 1], are laid end to
end, and segment s is lifted by the offset 2 s. Every lifted value of segment
s lies in [2 s, 2 s + 1], strictly below every value of segment s + 1, so the
constraint across a boundary can never bind: the fit of the whole is the fit
of each segment, lifted. No pool crosses a boundary; this is exact in real
arithmetic and holds in floating point too, since the gap of 1 between
segments is far larger than any rounding.

What the offset costs, and how it is paid back: lifting a value to the
magnitude 2 s rounds it to the spacing of doubles there, about 2 s * 2.2e-16,
and SciPy's running means are then formed at that magnitude: taken as they
are, the fitted values of a thousand segments differ from separate fits by
about 1e-12, of ten thousand by about 1e-11, growing linearly with the number
of segments (``tests/analyses/test_corp.py`` and ``benchmarks/corp.py`` measure it).
So only the *block structure* is taken from SciPy (which runs of points pool
together); every block's value is then recomputed as the weighted mean of the
original, unlifted responses of its points, which is what a fit of that
segment alone returns, to a few units in the last place whatever the number
of segments. Where two adjacent blocks have means equal to within the
rounding of the lifted values, the recomputed means may come out decreasing
by a unit in the last place; such a block is lifted to its predecessor's
value (:func:`_nondecreasing`), so the result is exactly monotone within each
segment. A block pooled, or not, because of such a near-tie changes the fit
by no more than that rounding.

Resamples for consistency bands (:func:`consistency_band`) use the same
device: each resample of all segments is fitted in one call. The loop runs
over resamples (a hundred by default), never over groups or rows; laying
many resamples end to end in one call as well was measured and gains
nothing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["consistency_band", "fit_segments", "segment_starts"]

_Float = npt.NDArray[np.float64]
_Int = npt.NDArray[np.int64]


def segment_starts(segment: npt.ArrayLike) -> _Int:
    """Indices where a new segment begins (``segment`` sorted, e.g. 0, 0, 1, 1, 1, 2)."""
    ids = np.asarray(segment)
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]])).astype(np.int64)


def _nondecreasing(values: _Float, segment: _Int) -> _Float:
    """Lift every value that is below its predecessor in the same segment to that predecessor.

    The result is the running maximum within each segment. It only ever
    changes values at rounding-level dips (see the module docstring), and
    each pass resolves one more step of a run of dips, so it ends at once in
    practice.
    """
    same = segment[1:] == segment[:-1]
    while True:
        dips = np.flatnonzero(same & (values[1:] < values[:-1])) + 1
        if dips.size == 0:
            return values
        values[dips] = values[dips - 1]


def fit_segments(y: npt.ArrayLike, w: npt.ArrayLike, segment: npt.ArrayLike) -> _Float:
    """Weighted nondecreasing least-squares fit of every segment, in one SciPy call.

    Parameters
    ----------
    y
        Responses in [0, 1], each segment's points in increasing order of
        score (ties already merged: one point per distinct score).
    w
        Positive weights of the points.
    segment
        Segment index of every point: nondecreasing, consecutive integers
        from 0 (e.g. the group of the point). Segments are fitted
        independently.

    Returns
    -------
    numpy.ndarray
        The fitted values: within each segment nondecreasing, constant on
        each block of pooled points and equal there to the weighted mean of
        the block's responses.
    """
    from scipy.optimize import isotonic_regression

    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    ids = np.asarray(segment, dtype=np.int64)
    if y.size == 0:
        return np.zeros(0, dtype=np.float64)
    lifted = isotonic_regression(y + 2.0 * ids, weights=w, increasing=True)
    starts = np.asarray(lifted.blocks[:-1], dtype=np.int64)
    lengths = np.diff(np.asarray(lifted.blocks, dtype=np.int64))
    means = np.add.reduceat(w * y, starts) / np.add.reduceat(w, starts)
    means = _nondecreasing(means, ids[starts])
    return np.repeat(means, lengths)


def consistency_band(
    score: npt.ArrayLike,
    weight: npt.ArrayLike,
    count: npt.ArrayLike,
    point: npt.ArrayLike,
    segment: npt.ArrayLike,
    *,
    resamples: int,
    level: float,
    seed: int,
) -> tuple[_Float, _Float]:
    """Pointwise quantiles of the isotonic fit when the scores are calibrated.

    The rows enter as *classes*: rows of one segment sharing both score and
    weight are interchangeable under the hypothesis, so a class is its score
    x, its weight v and its number of rows c. A resample draws, for every
    class, the number of successes among its rows, Binomial(c, x): the
    responses are Bernoulli(score), the scores and weights stay as observed.
    A point (a distinct score of a segment, several classes when the weights
    differ) gets the response sum(v * successes) / sum(v * c), and every
    segment is refitted by :func:`fit_segments`, all segments in one call.
    At each point the band is the pair of empirical quantiles, at
    (1 - level) / 2 and (1 + level) / 2, of the refitted values (linear
    interpolation between order statistics, NumPy's default and R's type 7).

    The draws come from one ``numpy.random.default_rng(seed)``, resample
    after resample; within one, first a uniform U for every class of one row
    (a success when U < x), in the order given, then Binomial(c, x) for every
    class of several rows, in the order given. (Per-element binomial draws
    cost some 150 ns each, a uniform a few; most classes of continuous
    scores hold one row.)

    The loop runs over resamples, each step vectorized over every class,
    point and segment: ``benchmarks/corp.py`` measures it as fast as drawing
    and fitting many resamples at once in one long sequence, which only adds
    memory traffic. Memory: the fitted values of all resamples, 8 bytes per
    resample and point, for the quantiles.

    Parameters
    ----------
    score, weight, count
        Per class: the score x in [0, 1], the weight v > 0 and the number of
        rows c >= 1.
    point
        Per class, the index of its point: nondecreasing, consecutive from 0.
    segment
        Per class, the segment (group) index: nondecreasing, consecutive from
        0, constant within a point.
    resamples
        Number of resamples (>= 1).
    level
        Coverage of the band, in (0, 1).
    seed
        Seed of the generator.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper)``, one value per point.
    """
    x = np.asarray(score, dtype=np.float64)
    v = np.asarray(weight, dtype=np.float64)
    c = np.asarray(count, dtype=np.int64)
    starts = segment_starts(point)  # first class of every point
    points = starts.size
    if points == 0:
        empty = np.zeros(0, dtype=np.float64)
        return empty, empty.copy()
    ids = np.asarray(segment, dtype=np.int64)[starts]
    total = np.add.reduceat(v * c, starts)  # the weight of every point
    single = c == 1
    x_one, x_many, c_many = x[single], x[~single], c[~single]
    rng = np.random.default_rng(seed)
    successes = np.empty(x.size, dtype=np.float64)
    fits = np.empty((resamples, points), dtype=np.float64)
    for resample in range(resamples):
        successes[single] = rng.random(x_one.size) < x_one
        successes[~single] = rng.binomial(c_many, x_many)
        y = np.add.reduceat(successes * v, starts) / total
        fits[resample] = fit_segments(y, total, ids)
    lower, upper = np.quantile(fits, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
    return lower, upper
