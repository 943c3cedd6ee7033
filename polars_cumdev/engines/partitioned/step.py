"""Step 3: everything one score range contributes (a pure function of its rows and the plan)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import EVENT_SUMS, GID, MIDPOINT, QUERY, Engine
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled as _engines
from polars_cumdev.method.bins import bin_moments, midpoints
from polars_cumdev.method.node_columns import group_ids
from polars_cumdev.method.prefix_sums import (
    COUNT_SUMS,
    FLOAT_SUMS,
    MAXIMA,
    PREFIX_SCORE,
    SUMS,
    difference_error,
    full_population_prefix,
)
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.method.sums import boundary
from polars_cumdev.method.ties import CANONICAL, merge_ties

__all__ = [
    "RangeResult",
    "binned_points",
    "kernel_wanted",
    "range_step",
    "sorted_prefix",
    "zero_sums",
]


# Step 3: one range (a pure function of its rows and the small plan)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RangeResult:
    """What one range contributes.

    Attributes
    ----------
    cells
        One row per group present in the range (see :func:`range_step`).
    answers
        ``QUERY`` and the local running sums (:data:`polars_cumdev.method.bins.SUMS`)
        at the query's midpoint.
    totals
        One row: the running sums over the whole range.
    """

    cells: pl.DataFrame
    answers: pl.DataFrame
    totals: pl.DataFrame


def zero_sums() -> list[pl.Expr]:
    """The running sums and maxima of a range with no row (a one-row select)."""
    return [
        pl.lit(0, dtype=pl.Int64 if c in COUNT_SUMS else pl.Float64).alias(c)
        for c in (*SUMS, *MAXIMA)
    ]


def range_step(
    rows: FrameLike,
    plan: Plan,
    r: int,
    *,
    engine: Engine = "in-memory",
    compiled: bool | None = None,
) -> RangeResult:
    """Everything range ``r`` contributes to the screen (step 3).

    A pure function of the range's rows and the small :class:`Plan`, so an
    engine adapter only has to ship the plan to wherever the rows are.

    Parameters
    ----------
    rows
        The standardized rows of range ``r`` (keys, ``SCORE``, ``RESPONSE``,
        ``WEIGHT``), in any order; the function sorts them.
    plan
        The plan of :func:`polars_cumdev.engines.partitioned.plan_ranges`: the keys,
        the global centre c, the scale of the weights and the queries routed
        to this range.
    r
        The range's index, 0 <= r < ``plan.ranges``.
    engine
        Polars engine for this range's query.
    compiled
        Whether the compiled kernel (:func:`polars_cumdev.kernel.range_cells`)
        does the work after Polars' sort; by default when Numba is available
        and the range has at least :data:`polars_cumdev.method.compiled.KERNEL_ROWS`
        rows. Both give the same result to rounding.

    Returns
    -------
    RangeResult
        ``cells``: per group in the range, ``n``, ``n_scores``, ``weight``,
        the first point (``f_w``, ``f_r``, ``f_tie`` and, when the cell has
        two or more points, the local prefix at its upper midpoint
        ``f_up*``), the last point (``l_w``, ``l_r``, ``l_tie`` and the local
        prefix at its lower midpoint ``l_lo*``), and for the interior points
        (neither first nor last of the cell) the sum, running maximum and
        minimum of W'_k (R'_k - Rt_k) (and ``q_at_max``, ``q_at_min``: the
        positions in the cell of their first occurrences) and the two sigma sums with W'_k in
        place of a_k (the group's total weight is divided out by
        :func:`polars_cumdev.engines.partitioned.combine`), and the interior
        points' bounds of the rounding errors of C and of the sigma sums
        (``e_c``, ``e_b``, ``e_e``; :func:`polars_cumdev.method.sigma_terms.error_terms`)
        and how many of their bins overflowed (``overflows``).
        Weights are in the units of the plan's ``weight_scale``.
        ``answers``: local prefix sums (and running maxima) at each query
        midpoint.
        ``totals``: the range's running sums and maxima.
    """
    keys, centre = plan.keys, plan.centre
    queries = plan.queries_for(r)
    if compiled is not False:
        frame = as_lazy(rows).collect(engine=engine)
        if kernel_wanted(compiled, frame.height):
            return _compiled_step(frame, plan, queries)
        rows = frame
    ordered, prefix = sorted_prefix(rows, plan, engine)
    # A fresh one-row frame: a slice of `prefix` would keep its buffers alive.
    totals = (
        pl.DataFrame({c: [prefix.get_column(c)[-1]] for c in (*SUMS, *MAXIMA)})
        if prefix.height
        else pl.select(zero_sums())
    )
    points = _merged_by_group(ordered, keys, engine)
    del ordered
    located, moments = binned_points(points, prefix, centre)
    interior = ~pl.col("_first") & ~pl.col("_last")
    ref, var = moments.reference, moments.variance
    e_ref, e_bern, e_var = moments.reference_error, moments.bernoulli_error, moments.variance_error
    overflow = moments.overflow
    # Terms with W'_k in place of a_k = W'_k / W_total: the group's total weight
    # is a constant of the cell, divided out in the combination.
    w = pl.col(nm.WEIGHT)
    w2f = w * w * pl.col(nm.TIE)
    located = (
        located.with_columns(
            pl.when(interior).then(w * (pl.col(nm.RESPONSE) - ref)).otherwise(0.0).alias("_d"),
            pl.when(interior).then(w2f * ref * (1.0 - ref)).otherwise(0.0).alias("_sb"),
            pl.when(interior).then(w2f * var).otherwise(0.0).alias("_se"),
            pl.when(interior).then(w * e_ref).otherwise(0.0).alias("_ec"),
            pl.when(interior).then(w2f * e_bern).otherwise(0.0).alias("_eb"),
            pl.when(interior).then(w2f * e_var).otherwise(0.0).alias("_ee"),
            (interior & overflow).alias("_overflow"),
        )
        .with_columns(pl.col("_d").cum_sum().over(GID).alias("_q"))
        .drop(*moments.scratch)
    )
    q_interior = pl.col("_q").filter(interior)
    aggs = [
        *[pl.col(k).first() for k in keys],
        pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
        pl.len().cast(pl.Int64).alias("n_scores"),
        w.sum().alias("weight"),
        w.first().alias("f_w"),
        pl.col(nm.RESPONSE).first().alias("f_r"),
        pl.col(nm.TIE).first().alias("f_tie"),
        *[pl.col(c).first().alias(f"f_up{c}") for c in SUMS],
        w.last().alias("l_w"),
        pl.col(nm.RESPONSE).last().alias("l_r"),
        pl.col(nm.TIE).last().alias("l_tie"),
        *[pl.col(f"{c}_lo").last().alias(f"l_lo{c}") for c in SUMS],
        pl.col("_d").sum().alias("q_sum"),
        q_interior.max().alias("q_max"),
        q_interior.min().alias("q_min"),
        (q_interior.arg_max() + 1).cast(pl.Int64).alias("q_at_max"),
        (q_interior.arg_min() + 1).cast(pl.Int64).alias("q_at_min"),
        pl.col("_sb").sum().alias("s_b"),
        pl.col("_se").sum().alias("s_e"),
        pl.col("_ec").sum().alias("e_c"),
        pl.col("_eb").sum().alias("e_b"),
        pl.col("_ee").sum().alias("e_e"),
        pl.col("_overflow").sum().cast(pl.Int64).alias("overflows"),
        # (the effective events are counted by the compiled step alone: NaN, not known)
        *[pl.lit(float("nan")).alias(c) for c in EVENT_SUMS],
    ]
    cells = located.group_by(GID, maintain_order=True).agg(aggs).drop(GID)
    answers = _lookup(queries.lazy().select(QUERY, MIDPOINT), prefix, MIDPOINT).drop(MIDPOINT)
    cells_df, answers_df = pl.collect_all([cells, answers], engine=engine)
    return RangeResult(cells=cells_df, answers=answers_df, totals=totals)


def kernel_wanted(compiled: bool | None, rows: int) -> bool:
    """Whether a range of ``rows`` rows runs the compiled kernel.

    ``compiled`` decides when given; ``None``: from
    :data:`polars_cumdev.method.compiled.KERNEL_ROWS` rows, when Numba is there.
    """
    if compiled is not None:
        return compiled
    return rows >= _engines.KERNEL_ROWS and _engines.available()


def sorted_prefix(rows: FrameLike, plan: Plan, engine: Engine) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A range's rows sorted by score (weights rescaled) and their full-population prefix."""
    ordered = (
        as_lazy(rows)
        .with_columns(pl.col(nm.WEIGHT) * plan.weight_scale)
        .sort(CANONICAL)
        .collect(engine=engine)
    )
    prefix = full_population_prefix(ordered.lazy(), pl.lit(plan.centre)).collect(engine=engine)
    return ordered, prefix


def binned_points(points: pl.LazyFrame, prefix: pl.DataFrame, centre: float) -> tuple:
    """Merged points (contiguous per ``GID``) with their bins' moments.

    Adds ``_first`` and ``_last`` (the cell's first and last point) and the
    columns of :func:`polars_cumdev.method.bins.bin_moments` for the bin between
    the point's two midpoints, both looked up in the range's ``prefix``
    (meaningful for the interior points only). Returns the frame and the
    moments.
    """
    # Points are contiguous per group (``GID`` increasing), in increasing
    # score inside each group: neighbours are plain shifts, masked at the
    # group boundaries.
    points = points.with_columns(
        midpoints([GID]).alias(MIDPOINT),
        boundary([GID], -1).alias("_last"),
        boundary([GID], 1).alias("_first"),
    )
    located = _lookup(points, prefix, MIDPOINT)
    below = [pl.when(~pl.col("_first")).then(pl.col(c).shift(1)).alias(f"{c}_lo") for c in SUMS]
    located = located.with_columns(below)

    def total(c: str) -> pl.Expr:
        return pl.col(c) - pl.col(f"{c}_lo")

    error = difference_error(total, lambda c: pl.col(f"{c}_lomax"))
    moments = bin_moments(total, pl.lit(centre), error)
    return moments.on(located), moments


def _lookup(frame: pl.LazyFrame, prefix: pl.DataFrame, at: str) -> pl.LazyFrame:
    """Add the running sums and maxima at the last score <= column ``at`` (0 below the first).

    One binary search per row of ``frame`` into the prefix scores, then one
    gather per column from the prefix table with a row of zeros in front.
    """
    index = "_index"
    names = (*SUMS, *MAXIMA)
    zero = pl.DataFrame({c: [0] for c in names}, schema={c: prefix.schema[c] for c in names})
    table = pl.concat([zero, prefix.select(names)])
    scores = prefix.get_column(PREFIX_SCORE)
    return (
        frame.with_columns(pl.lit(scores).search_sorted(pl.col(at), side="right").alias(index))
        .with_columns(pl.lit(table.get_column(c)).gather(pl.col(index)).alias(c) for c in names)
        .drop(index)
    )


def _merged_by_group(ordered: pl.DataFrame, keys: Sequence[str], engine: Engine) -> pl.LazyFrame:
    """Merged points (method.md 1.1) of score-sorted rows, grouped contiguously.

    The screen's own tie merge (:func:`polars_cumdev.method.ties.merge_ties`), plus
    ``GID``, a group number increasing with the (contiguous) groups.
    """
    keys = list(keys)
    if keys:
        group_id = pl.struct(keys).rle_id() if len(keys) > 1 else pl.col(keys[0]).rle_id()
    else:
        group_id = pl.lit(0, dtype=pl.UInt32)
    merged = merge_ties(ordered.lazy(), keys).with_columns(group_id.set_sorted().alias(GID))
    return merged.collect(engine=engine).lazy()


def _table_rows(table: np.ndarray, at: np.ndarray | None) -> dict[str, np.ndarray]:
    """The kernel's prefix rows ``at`` as the columns ``SUMS`` and ``MAXIMA``.

    ``at`` -1 is a row of zeros; ``at`` None takes every row as it is.
    """
    from polars_cumdev.kernel import prefix as k

    # Gathered rows, then the -1s zeroed: no copy of the whole table with a zero row on top.
    if at is None:
        padded = table
    elif table.shape[0]:
        padded = table[np.maximum(at, 0)]
        padded[at < 0] = 0.0
    else:
        padded = np.zeros((at.shape[0], table.shape[1]))
    columns: dict[str, np.ndarray] = {}
    for j, c in enumerate(FLOAT_SUMS):
        columns[c] = padded[:, k.HI + j]
        columns[f"{c}_err"] = padded[:, k.LO + j]
        columns[f"{c}_lomax"] = padded[:, k.LOMAX + j]
    for c, index in zip(COUNT_SUMS, (k.ROWS, k.ZEROS, k.ONES), strict=True):
        columns[c] = padded[:, index].astype(np.int64)
    return {c: columns[c] for c in (*SUMS, *MAXIMA)}


def _canonical_columns(
    frame: pl.DataFrame, keys: Sequence[str]
) -> tuple[np.ndarray, tuple[np.ndarray, int, int], list[np.ndarray]]:
    """The range's rows in canonical order: the order, group numbers and ``[s, r, w]``.

    The columns ride along the sort
    (:func:`polars_cumdev.kernel.bucketsort.bucket_sort`), as in the
    in-memory node. The standardized score holds no -0.0
    (:mod:`polars_cumdev.method.signed_zeros`), whose sort key is 0.0's.
    """
    ids, offset, count = group_ids(frame, keys)
    s, r, w = (
        np.ascontiguousarray(frame.get_column(c).cast(pl.Float64).to_numpy())
        for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    )
    s, order, (r, w, ids) = _engines.kernel().bucketsort.bucket_sort(s, r, w, ids, True)
    return order, (ids, offset, count), [s, r, w]


def _compiled_step(frame: pl.DataFrame, plan: Plan, queries: pl.DataFrame) -> RangeResult:
    """:func:`range_step` by :func:`polars_cumdev.kernel.range_cells` (rows in any order)."""
    from polars_cumdev.kernel import ranges as k

    keys = plan.keys
    order, (ids, offset, count), (s, r, w) = _canonical_columns(frame, keys)
    midpoints_ = np.ascontiguousarray(queries.get_column(MIDPOINT).cast(pl.Float64).to_numpy())
    every = np.empty(0, dtype=np.bool_)  # (every group, no list of points)
    floats, ints, _, table, answers, _, _ = _engines.kernel().range_cells(
        ids, offset, s, r, w, plan.weight_scale, count, plan.centre, midpoints_, every
    )
    present = ints[:, k.C_FIRST] >= 0
    floats, ints = floats[present], ints[present]
    interior = ints[:, k.C_N_SCORES] > 2
    single = ints[:, k.C_L_LO] < 0
    f_up = _table_rows(table, ints[:, k.C_F_UP])
    l_lo = _table_rows(table, ints[:, k.C_L_LO])
    cells = pl.concat(
        [
            frame.select(keys)[pl.Series(order[ints[:, k.C_FIRST]])] if keys else pl.DataFrame(),
            pl.DataFrame(
                {
                    "n": ints[:, k.C_N],
                    "n_scores": ints[:, k.C_N_SCORES],
                    "weight": floats[:, k.C_WEIGHT],
                    "f_w": floats[:, k.C_F_W],
                    "f_r": floats[:, k.C_F_R],
                    "f_tie": floats[:, k.C_F_TIE],
                    **{f"f_up{c}": f_up[c] for c in SUMS},
                    "l_w": floats[:, k.C_L_W],
                    "l_r": floats[:, k.C_L_R],
                    "l_tie": floats[:, k.C_L_TIE],
                    **{f"l_lo{c}": pl.Series(l_lo[c]).set(pl.Series(single), None) for c in SUMS},
                    "q_sum": floats[:, k.C_Q_SUM],
                    "q_max": pl.Series(floats[:, k.C_Q_MAX]).set(pl.Series(~interior), None),
                    "q_min": pl.Series(floats[:, k.C_Q_MIN]).set(pl.Series(~interior), None),
                    "q_at_max": pl.Series(ints[:, k.C_Q_AT_MAX]).set(pl.Series(~interior), None),
                    "q_at_min": pl.Series(ints[:, k.C_Q_AT_MIN]).set(pl.Series(~interior), None),
                    "s_b": floats[:, k.C_S_B],
                    "s_e": floats[:, k.C_S_E],
                    "e_c": floats[:, k.C_E_C],
                    "e_b": floats[:, k.C_E_B],
                    "e_e": floats[:, k.C_E_E],
                    "overflows": ints[:, k.C_OVERFLOWS],
                    **{
                        c: floats[:, index]
                        for c, index in zip(
                            EVENT_SUMS,
                            (k.C_S_3, k.C_S_4, k.C_F_W3, k.C_F_W4, k.C_L_W3, k.C_L_W4),
                            strict=True,
                        )
                    },
                }
            ),
        ],
        how="horizontal",
    )
    answered = pl.DataFrame({QUERY: queries.get_column(QUERY), **_table_rows(table, answers)})
    last = np.array([table.shape[0] - 1])
    totals = pl.DataFrame(_table_rows(table, last if table.shape[0] else np.array([-1])))
    return RangeResult(cells=cells, answers=answered, totals=totals)
