"""Where a group deviates: the located stretch, as columns of the screen-like results.

A screen says *that* a group deviates; these columns say *where* and by how
much. D = max C - min C is a rise or a fall; the stretch between its two
extremes is a poor answer where the curve is flat (the position of a random
walk's extreme spreads over the whole flat part, whatever n), so the library
reports the **shortest** stretch, in A (the share of the group's weight),
whose rise (or fall) reaches D - 2 sigma (:func:`polars_cumdev.kernel.stretches`).
With points i < j bounding it:

* ``from_score``: the score of point i + 1, the first point inside;
* ``to_score``: the score of point j;
* ``share``: A_j - A_i, the share of the group's weight inside;
* ``deviation``: (C_j - C_i) / (A_j - A_i), the group's average deviation
  from the full population there (signed: the slope of the curve).

They are null when z is null (see ``note``), when D <= 2 sigma (no
stretch stands out from the noise), or when the group is not significant at
the level the user set (:mod:`polars_cumdev.method.findings`: a stretch of
noise is no finding). The statistics layers compute the
threshold, group the curves and call :func:`locate`; the search itself is
compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import kernel_loader
from polars_cumdev.method.findings import LEVEL, STRETCH_COLUMNS, check_level, is_significant
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.normalization import normalized
from polars_cumdev.method.prepare import schema_of
from polars_cumdev.method.pvalues import kuiper_pvalue
from polars_cumdev.method.sums import boundary

__all__ = [
    "LOCATED",
    "LOCATION_COLUMNS",
    "LOCATION_SCHEMA",
    "NUMPY_POINTS",
    "THRESHOLD",
    "flag_stretch",
    "locate",
    "located",
    "searched",
    "stretches_numpy",
    "threshold",
]

LOCATION_COLUMNS = STRETCH_COLUMNS
LOCATION_SCHEMA: dict[str, pl.DataType] = {c: pl.Float64() for c in LOCATION_COLUMNS}
THRESHOLD = f"{nm.PREFIX}threshold"


def threshold(kuiper: pl.Expr, sigma2: pl.Expr) -> pl.Expr:
    """T = D - 2 sigma: the rise (or fall) the located stretch must reach."""
    return kuiper - 2.0 * sigma2.clip(lower_bound=0.0).sqrt()


#: Below this many points the search runs in NumPy (no Numba import), above compiled.
NUMPY_POINTS = 200_000


def numpy_search(points: int, kernel_loaded: bool) -> bool:
    """Whether a search of ``points`` points runs in NumPy (:data:`NUMPY_POINTS`).

    ``kernel_loaded``: the caller has run the kernel already, so a small
    compiled search costs no import of Numba either.
    """
    return (points < NUMPY_POINTS and not kernel_loaded) or not kernel_loader.available()


def stretches_numpy(
    starts: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    thresholds: np.ndarray,
    origins: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`polars_cumdev.kernel.stretches` in vectorized NumPy, for small inputs.

    Same arguments, same results; with ``origins`` = (A, C, sign) per group,
    :func:`polars_cumdev.kernel.stretches_from` (an explicit start point
    and the sign given). With each group's origin put in front of
    its points, the best start i for an end j is the latest point before j
    whose (signed) C is at most C_j - T; the minimum of C over [i, j) is then
    at most C_j - T, and over (i, j) above it, so i is found for every j at
    once by binary lifting over a table of minima of blocks of 2^L points
    (O(n log n) time and memory). The rise is always computed as the
    difference C_j - C_i, as in the compiled search.
    """
    starts = np.asarray(starts, dtype=np.int64)
    groups = starts.size - 1
    counts = np.diff(starts)
    lower = np.full(groups, -1, dtype=np.int64)
    upper = np.full(groups, -1, dtype=np.int64)
    if groups == 0 or a.size == 0:
        return lower, upper
    # Points with each group's origin in front: index starts[g] + g is group g's origin.
    group = np.repeat(np.arange(groups), counts + 1)
    head = starts[:-1] + np.arange(groups)  # the origins
    inner = np.ones(group.size, dtype=bool)
    inner[head] = False
    big_a = np.zeros(group.size)
    big_c = np.zeros(group.size)
    big_a[inner], big_c[inner] = a, c
    index = np.arange(group.size)
    if origins is not None:
        big_a[head], big_c[head] = origins[0], origins[1]
        sign = np.asarray(origins[2], dtype=np.float64)
    else:
        # Rise or fall: the first maximum and the first minimum of C (origin included).
        top = np.maximum.reduceat(big_c, head)
        bottom = np.minimum.reduceat(big_c, head)
        first_top = np.minimum.reduceat(np.where(big_c == top[group], index, group.size), head)
        first_bottom = np.minimum.reduceat(
            np.where(big_c == bottom[group], index, group.size), head
        )
        sign = np.where(first_bottom < first_top, 1.0, -1.0)
    value = sign[group] * big_c
    limit = np.asarray(thresholds, dtype=np.float64)[group]
    # minima[L][i] = min(value[i : i + 2^L]); lifting finds, for every j, the
    # earliest pos such that no point in [pos, j) rises to j by T (the rise
    # value_j - min, computed as that difference, is monotone in the min),
    # stopping at the group's origin; the start is the point before it.
    levels = [value]
    while (1 << len(levels)) <= counts.max() + 1:
        step = 1 << (len(levels) - 1)
        previous = levels[-1]
        levels.append(np.minimum(previous, np.append(previous[step:], np.full(step, np.inf))))
    pos = index.copy()
    origin = head[group]
    with np.errstate(invalid="ignore"):  # an unresolved curve may hold infinities
        for level in range(len(levels) - 1, -1, -1):
            candidate = pos - (1 << level)
            allowed = candidate >= origin
            block = levels[level][np.where(allowed, candidate, 0)]
            pos = np.where(allowed & ~(value - block >= limit), candidate, pos)
        start = pos - 1
        valid = (limit > 0.0) & inner & (start >= origin)
        valid &= value - value[np.maximum(start, 0)] >= limit
    if not valid.any():
        return lower, upper
    ends = index[valid]
    begins = start[valid]
    length = big_a[ends] - big_a[begins]
    owner = group[valid]
    order = np.lexsort((ends, length, owner))  # shortest first, then earliest end
    first = np.ones(order.size, dtype=bool)
    first[1:] = owner[order][1:] != owner[order][:-1]
    chosen = order[first]
    g = owner[chosen]
    lower[g] = begins[chosen] - origin[ends[chosen]] - 1
    upper[g] = ends[chosen] - origin[ends[chosen]] - 1
    return lower, upper


def searched(
    kuiper: np.ndarray,
    ks: np.ndarray,
    sigma: np.ndarray,
    thresholds: np.ndarray,
    level: float | None = None,
) -> np.ndarray:
    """Which groups have their stretch searched: T > 0 and, with ``level``, a p that can pass.

    With ``level``, only the groups whose Kuiper or KS p-value (method.md 4,
    from the same D, G and sigma) is at most ``level`` are: the result states
    a stretch only where the Benjamini-Hochberg q-value over the groups is at
    most ``level`` (:mod:`polars_cumdev.method.findings`), and q is never
    below p, so the others' stretches would be blanked anyway (on
    ``benchmarks/common.py``'s 1e7 rows, 132 of the 238 groups with T > 0,
    holding 17% of their points). A margin of a thousandth: the final p comes
    from these numbers by the same operations, and a group searched
    needlessly costs only time. A group whose p-value may still be replaced
    by a finite-sample one (:mod:`polars_cumdev.method.finite_sample`:
    Kuiper or KS asymptotic p at most its cutoff) can become significant, so
    it is searched too.
    """
    wanted = thresholds > 0.0
    if level is None or not wanted.any():
        return wanted
    from polars_cumdev.method.finite_sample import cutoff
    from polars_cumdev.method.pvalues import ks_pvalue

    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.asarray(kuiper_pvalue(np.where(wanted, kuiper / sigma, np.nan)))
        p = np.fmin(p, np.asarray(ks_pvalue(np.where(wanted, ks / sigma, np.nan))))
    return wanted & ~(p > cutoff(level) * 1.001)


def _searched(
    starts: np.ndarray, a: np.ndarray, c: np.ndarray, thresholds: np.ndarray, compiled: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The stretches' ends (:func:`stretches_numpy`'s result), searching only groups with T > 0.

    In NumPy, a group whose T is not positive (or NaN), which has no
    stretch, is left out of the search (on the census screen 8 groups of 41 have T > 0:
    the search read every point of all 41). Each group is searched on its
    own points alone, so the ends are those of a search over all groups.
    """
    if not numpy_search(a.size, compiled):  # (the compiled search skips such groups itself)
        # (two threads, each over its groups, from kernel.TWO_THREADS points)
        return kernel_loader.kernel().split_stretches(starts, a, c, thresholds)
    wanted = thresholds > 0.0
    if not wanted.all():
        lower = np.full(wanted.size, -1, dtype=np.int64)
        upper = np.full(wanted.size, -1, dtype=np.int64)
        if not wanted.any():
            return lower, upper
        counts = np.diff(starts)
        kept = np.repeat(wanted, counts)
        inner = np.concatenate([[0], np.cumsum(counts[wanted])]).astype(np.int64)
        found = _searched(inner, a[kept], c[kept], thresholds[wanted], compiled)
        lower[wanted], upper[wanted] = found
        return lower, upper
    return stretches_numpy(starts, a, c, thresholds)


def located(
    starts: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    s: np.ndarray | Callable[[np.ndarray], np.ndarray],
    thresholds: np.ndarray,
    compiled_search: bool = False,
) -> dict[str, np.ndarray]:
    """The location columns of groups laid end to end (NaN where there is none).

    ``starts`` are the groups' offsets (length groups + 1) in ``a`` (A_k),
    ``c`` (C_k) and ``s`` (S'_k), each group's points in order, the origin
    implicit; ``thresholds`` their T. ``s`` may instead be a function
    giving, for an array of point numbers within each group (shape groups
    by 2, -1 for none), their scores (NaN for none): the screen's compiled
    walk keeps no scores (:func:`polars_cumdev.kernel.curves.tie_scores`).
    Small inputs are searched in NumPy (:func:`stretches_numpy`), larger
    ones (or any, with ``compiled_search``: the compiled engine, whose
    kernel is loaded already) by the compiled kernel.
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    lower, upper = _searched(
        starts,
        np.asarray(a, dtype=np.float64),
        np.asarray(c, dtype=np.float64),
        np.ascontiguousarray(thresholds, dtype=np.float64),
        compiled_search,
    )
    found = upper >= 0
    head = starts[:-1]
    hi = np.where(found, head + upper, 0)
    lo = head + lower
    inside = np.where(found, head + lower + 1, 0)
    a_lo = np.where(lower >= 0, a[np.maximum(lo, 0)] if a.size else 0.0, 0.0)
    c_lo = np.where(lower >= 0, c[np.maximum(lo, 0)] if c.size else 0.0, 0.0)
    a_hi = a[hi] if a.size else np.zeros(len(found))
    c_hi = c[hi] if c.size else np.zeros(len(found))
    share = a_hi - a_lo
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = (c_hi - c_lo) / share
    if callable(s):
        ends = np.stack([np.where(found, lower + 1, -1), np.where(found, upper, -1)], axis=1)
        from_score, to_score = s(ends.astype(np.int64)).T
    else:
        from_score = s[inside] if s.size else np.zeros(len(found))
        to_score = s[hi] if s.size else np.zeros(len(found))
    columns = {
        "from_score": from_score,
        "to_score": to_score,
        "share": share,
        "deviation": deviation,
    }
    return {name: np.where(found, values, np.nan) for name, values in columns.items()}


def locate(
    points: pl.LazyFrame,
    keys: Sequence[str],
    thresholds: pl.LazyFrame,
    schema: pl.Schema | None = None,
) -> pl.LazyFrame:
    """Every group's located stretch from its accumulated points.

    Parameters
    ----------
    points
        Accumulated points (:func:`polars_cumdev.method.accumulate.accumulate`):
        each group's points contiguous and in order, with ``SCORE``, ``A``
        and ``CUMDIFF``.
    keys
        Grouping columns.
    thresholds
        One row per group: the keys and ``THRESHOLD`` (T).
    schema
        ``points``' schema (its keys' types are read), when the caller has it.

    Returns
    -------
    pl.LazyFrame
        One row per group of ``points``: the keys and :data:`LOCATION_COLUMNS`
        (null where there is no stretch).
    """
    keys = list(keys)
    source = schema if schema is not None else schema_of(points)
    schema = {**{k: source[k] for k in keys}, **LOCATION_SCHEMA}
    # The thresholds (one row per group) set beside the points, not joined to every
    # point (the join cost a small screen a third of the search); each group's T is
    # then matched to its first point, one row per group.
    tags = {k: f"{nm.PREFIX}of_{k}" for k in keys}
    point, listed = f"{nm.PREFIX}point", f"{nm.PREFIX}listed"
    beside = pl.concat(
        [
            points.select(*keys, nm.SCORE, nm.A, nm.CUMDIFF, pl.lit(True).alias(point)),
            thresholds.select(
                *[pl.col(k).alias(t) for k, t in tags.items()],
                THRESHOLD,
                pl.lit(True).alias(listed),
            ),
        ],
        how="horizontal_extend",
    )

    def run(batch: pl.DataFrame) -> pl.DataFrame:
        rows = batch.head(batch.height - batch.get_column(point).null_count())
        table = batch.head(batch.height - batch.get_column(listed).null_count()).select(
            *[pl.col(t).alias(k) for k, t in tags.items()], THRESHOLD
        )
        if rows.is_empty() or (table.is_empty() and not keys):
            return pl.DataFrame(schema=schema)
        heads = np.flatnonzero(rows.select(boundary(keys, 1)).to_series().to_numpy())
        key_frame = rows.select(keys)[pl.Series(heads)] if keys else pl.DataFrame()
        if keys:  # a group keyed NaN is matched too (method/keys.py)
            table = join_on_keys(
                key_frame.lazy(), table.lazy(), keys, source, maintain_order="left"
            )
            table = table.collect(engine="in-memory")
        found = located(
            np.append(heads, rows.height),
            rows.get_column(nm.A).to_numpy(),
            rows.get_column(nm.CUMDIFF).to_numpy(),
            rows.get_column(nm.SCORE).to_numpy(),
            table.get_column(THRESHOLD).fill_null(np.nan).to_numpy()[: heads.size],
        )
        body = pl.DataFrame(found).fill_nan(None)
        return pl.concat([key_frame, body], how="horizontal")

    return beside.map_batches(run, schema=pl.Schema(schema), streamable=False)


def flag_stretch(curve: pl.LazyFrame, min_scores: int, level: float = LEVEL) -> pl.LazyFrame:
    """A drill-down frame with ``located``: true on the points inside its located stretch.

    ``curve`` has the origin row (k = 0) first, then the points in order,
    with ``a``, ``cumdiff`` and ``sigma``. The stretch is searched when the
    normalized statistics exist (at least ``min_scores`` points and sigma
    positive, as in :func:`polars_cumdev.method.statistics.normalize`),
    D > 2 sigma and the curve's Kuiper p-value is at most ``level`` (one
    comparison: :mod:`polars_cumdev.method.findings`); otherwise no point is
    flagged.
    """
    level = check_level(level)

    def run(batch: pl.DataFrame) -> pl.DataFrame:
        flags = np.zeros(batch.height, dtype=bool)
        points = batch.filter(pl.col("k") > 0)
        sigmas = batch.get_column("sigma").drop_nulls()
        sigma = float(sigmas[0]) if sigmas.len() else None
        if normalized(points.height, sigma, min_scores):
            c = points.get_column("cumdiff").to_numpy()
            d = max(c.max(), 0.0) - min(c.min(), 0.0)
            if not is_significant(float(kuiper_pvalue(d / sigma)), level):
                return batch.with_columns(pl.Series(LOCATED, flags))
            arrays = (
                np.array([0, points.height], dtype=np.int64),
                np.ascontiguousarray(points.get_column("a").to_numpy(), dtype=np.float64),
                np.ascontiguousarray(c, dtype=np.float64),
                np.array([d - 2.0 * sigma]),
            )
            search = stretches_numpy if c.size < NUMPY_POINTS else kernel_loader.kernel().stretches
            lower, upper = search(*arrays)
            if upper[0] >= 0:
                k = batch.get_column("k").to_numpy()
                flags = (k >= lower[0] + 2) & (k <= upper[0] + 1)
        return batch.with_columns(pl.Series(LOCATED, flags))

    schema = schema_of(curve)
    return curve.map_batches(run, schema=pl.Schema({**schema, LOCATED: pl.Boolean()}))


#: The column of a drill-down frame that flags the points of the located stretch.
LOCATED = "located"
