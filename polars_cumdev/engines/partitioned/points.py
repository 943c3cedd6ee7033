"""The second pass of a range: the flagged groups' points, their best stretch and candidates.

See :mod:`polars_cumdev.engines.partitioned.locating` for the method. Two
routes give the points: the compiled one (the first pass's bucket sort and
walk, :func:`polars_cumdev.kernel.range_cells`, listing the flagged groups'
points as it closes them, then :func:`polars_cumdev.kernel.curve_pieces`)
and the Polars stages (sort, tie merge, prefix sums, bins; used without
Numba, and the oracle of ``tests/engines/test_range_points.py``). At 1e7
continuous scores in 8 ranges the compiled route took the second pass from
6.6 to 3.2 s (``benchmarks/README.md``, the seventh round).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import GID, TOTAL_WEIGHT, Engine
from polars_cumdev.engines.partitioned.locating import FID, LIMIT, SIGN, search, stretch_columns
from polars_cumdev.engines.partitioned.step import (
    _canonical_columns,
    _merged_by_group,
    binned_points,
    kernel_wanted,
    sorted_prefix,
)
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled as _engines
from polars_cumdev.method.prepare import FrameLike, as_lazy

__all__ = ["range_points"]

STRETCH = ("from_score", "to_score", "share", "deviation", "end")
# The columns each route gives a point, running over its cell (as the compiled
# walk lists them, :data:`polars_cumdev.kernel.ranges.LISTED_COLUMNS`): the weight
# up to it, the sum of the steps W'_j (R'_j - Rt_j) up to it (interior points
# only: the bins of a cell's first and last points reach across ranges), its
# place in the cell (1, 2, ...).
RUNNING_WEIGHT, STEPS, PLACE = "_a", "_q", "_k"
POINT_COLUMNS = (GID, nm.SCORE, RUNNING_WEIGHT, STEPS, PLACE)
# A group's constants, in the order :func:`polars_cumdev.kernel.pieces.curve_pieces` reads them.
PIECE_CONSTANTS = (
    "c_first",
    TOTAL_WEIGHT,
    "tl",
    "prior_w",
    "next_score",
    SIGN,
    "c_base",
    "lo_level",
    "hi_level",
)
#: What a route through a range gives: the points (:data:`POINT_COLUMNS`, each
#: group's together, in increasing order of score) and one row per group with
#: ``GID`` and its cell's columns, in the same order.
Listed = tuple[pl.DataFrame, pl.DataFrame]
#: The points' places on their curves: group offsets, the groups, and per point
#: ``score``, ``a``, ``c``, ``position``, ``next``, ``end`` and ``start``.
Pieces = tuple[np.ndarray, pl.DataFrame, dict[str, np.ndarray]]


def range_points(
    rows: FrameLike,
    plan: Plan,
    cells: pl.DataFrame,
    *,
    engine: Engine = "in-memory",
    compiled: bool | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The flagged groups' located pieces in one range (the second pass's step).

    Parameters
    ----------
    rows
        The standardized rows of the range, all of them (the full-population
        prefix needs every row), in any order.
    plan
        The plan of the first pass.
    cells
        The range's flagged cells
        (:meth:`polars_cumdev.engines.partitioned.locating.Locating.for_range`).
    engine
        Polars engine for the range's queries.
    compiled
        Whether the points come from the compiled kernel (:func:`_kernel_points`:
        the bucket sort and the first pass's walk) or from the Polars stages;
        by default as in :func:`~polars_cumdev.engines.partitioned.range_step`
        (the kernel from :data:`polars_cumdev.method.compiled.KERNEL_ROWS`
        rows, when Numba is installed). Both give the same points to rounding.

    Returns
    -------
    tuple of DataFrames
        ``bests``: per flagged group, the shortest stretch whose end lies in
        the range and whose start is the point before the range's first one
        or later (``FID``, the location columns and ``end``, the end's
        position on the group's curve); ``candidates``: the points that may
        start or end a stretch crossing ranges (``FID``, ``position``, ``a``,
        ``c``, ``score`` and ``next``, the score of the following point).
    """
    frame = as_lazy(rows).collect(engine=engine)
    kernel = kernel_wanted(compiled, frame.height)
    if kernel:
        starts, groups, values = _compiled_pieces(_kernel_points(frame, plan, cells))
    else:
        starts, groups, values = _polars_pieces(_polars_points(frame, plan, cells, engine), engine)
    picked = values["end"] | values["start"]
    candidates = pl.DataFrame(
        {
            FID: np.repeat(groups.get_column(FID).to_numpy(), np.diff(starts))[picked],
            **{c: values[c][picked] for c in ("position", "a", "c", "score", "next")},
        },
        schema_overrides={FID: groups.schema[FID]},
    ).with_columns(pl.col("next").fill_nan(None))
    return _bests(starts, groups, values, kernel), candidates


def _compiled_pieces(listed: Listed) -> Pieces:
    """:func:`polars_cumdev.kernel.pieces.curve_pieces` on the listed points."""
    points, groups = listed
    starts, place = _starts(points), points.get_column(PLACE).to_numpy()
    constants = groups.select(
        pl.col(c).cast(pl.Float64).fill_null(np.nan) for c in PIECE_CONSTANTS
    ).to_numpy()
    a, c, position, following, end, start = _engines.kernel().curve_pieces(
        starts,
        *(points.get_column(c).to_numpy() for c in (nm.SCORE, RUNNING_WEIGHT, STEPS)),
        place,
        np.ascontiguousarray(constants),
        groups.get_column("prior_n").to_numpy(),
    )
    score = points.get_column(nm.SCORE).to_numpy()
    values = {"score": score, "a": a, "c": c, "position": position, "next": following}
    return starts, groups, {**values, "end": end, "start": start}


def _polars_pieces(listed: Listed, engine: Engine) -> Pieces:
    """:func:`_compiled_pieces` by Polars expressions (the oracle of the tests)."""
    points, groups = listed
    total = pl.col(TOTAL_WEIGHT)
    # As in combine: C_f = off + tf, C_k = off + tf + Q_k, C_l = off + tf + (Q_sum + tl).
    following = pl.col("_next")  # the next point's score in the cell (null at the last)
    tail = pl.when(following.is_null() & (pl.col(PLACE) > 1)).then(pl.col("tl")).otherwise(0.0)
    v = pl.col(SIGN) * pl.col("c")
    before = pl.col(SIGN) * pl.col("c_base")
    earlier = v.cum_max().shift(1).over(GID).fill_null(-np.inf)
    later = v.reverse().cum_min().reverse().shift(-1).over(GID).fill_null(np.inf)
    frame = (
        points.lazy()
        .join(groups.lazy(), on=GID, how="inner", maintain_order="left")
        .with_columns(pl.col(nm.SCORE).shift(-1).over(GID).alias("_next"))
        .with_columns(
            (pl.col("c_first") + (pl.col(STEPS) / total + tail)).alias("c"),
            (pl.col("prior_w") + pl.col(RUNNING_WEIGHT)).alias("a"),
            (pl.col("prior_n") + pl.col(PLACE)).alias("position"),
            following.fill_null(pl.col("next_score")).alias("next"),
        )
        .select(
            pl.col(nm.SCORE).alias("score"),
            "a",
            "c",
            "position",
            "next",
            # Candidates: a strict prefix maximum of v (after the point before the
            # range) reaching the band, or a strict suffix minimum below it.
            ((v > pl.max_horizontal(before, earlier)) & (v >= pl.col("hi_level"))).alias("end"),
            ((v < later) & (v <= pl.col("lo_level"))).alias("start"),
            total,
        )
        .collect(engine=engine)
    )
    # A_k = (weight up to k) / W, divided by NumPy: Polars may divide by a
    # broadcast scalar through its reciprocal, which is not exact for integers.
    values = {c: frame.get_column(c).to_numpy() for c in frame.columns if c != TOTAL_WEIGHT}
    values["a"] = values["a"] / frame.get_column(TOTAL_WEIGHT).to_numpy()
    values["next"] = frame.get_column("next").fill_null(np.nan).to_numpy()
    return _starts(points), groups, values


def _starts(points: pl.DataFrame) -> np.ndarray:
    """The offsets of the groups' points (each group's first has place 1), and the end."""
    place = points.get_column(PLACE).to_numpy()
    return np.append(np.flatnonzero(place == 1), place.shape[0]).astype(np.int64)


def _polars_points(frame: pl.DataFrame, plan: Plan, cells: pl.DataFrame, engine: Engine) -> Listed:
    """The flagged groups' points by the Polars stages (see :func:`_kernel_points`)."""
    keys = plan.keys
    ordered, prefix = sorted_prefix(frame, plan, engine)
    if keys:  # only the flagged groups' points are needed
        ordered = ordered.join(
            cells.select(keys), on=keys, how="semi", nulls_equal=True, maintain_order="left"
        )
    points = _merged_by_group(ordered, keys, engine)
    del ordered
    if keys:
        points = points.join(
            cells.lazy(), on=keys, how="inner", nulls_equal=True, maintain_order="left"
        )
    else:
        points = points.join(cells.lazy(), how="cross", maintain_order="left")
    located, moments = binned_points(points, prefix, plan.centre)
    interior = ~pl.col("_first") & ~pl.col("_last")
    step = pl.col(nm.WEIGHT) * (pl.col(nm.RESPONSE) - moments.reference)
    constants = [c for c in cells.columns if c not in keys]
    located = located.select(
        GID,
        nm.SCORE,
        pl.col(nm.WEIGHT).cum_sum().over(GID).alias(RUNNING_WEIGHT),
        pl.when(interior).then(step).otherwise(0.0).cum_sum().over(GID).alias(STEPS),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(GID).alias(PLACE),
        *constants,
    ).collect(engine=engine)
    return located.select(POINT_COLUMNS), located.filter(pl.col(PLACE) == 1).select(GID, *constants)


def _kernel_points(frame: pl.DataFrame, plan: Plan, cells: pl.DataFrame) -> Listed:
    """The flagged groups' points, each group's contiguous and in increasing order of score.

    Returns the points (:data:`POINT_COLUMNS`: ``GID``, ``SCORE`` (S'_k),
    :data:`RUNNING_WEIGHT` (in the plan's units), :data:`STEPS`,
    :data:`PLACE`) and, one row per group in the same order, ``GID`` and
    the columns of its cell (the keys excepted). The rows are
    sorted by the compiled bucket sort and walked once by
    :func:`polars_cumdev.kernel.range_cells`, the first pass's walk, which
    lists the points as it closes them; the Polars stages
    (:func:`_polars_points`) give the same points to rounding.
    """
    from polars_cumdev.kernel import ranges as k

    keys = plan.keys
    order, (ids, offset, count), (s, r, w) = _canonical_columns(frame, keys)
    first = k.first_rows(ids, offset, count)
    present = np.flatnonzero(first >= 0)
    groups = pl.DataFrame({GID: present})
    if keys:  # each present group's keys, from its first row, matched to the flagged cells
        named = frame.select(keys)[pl.Series(order[first[present]])]
        groups = pl.concat([named, groups], how="horizontal")
        groups = groups.join(cells, on=keys, how="inner", nulls_equal=True).drop(keys)
    else:
        groups = groups.join(cells, how="cross")
    flagged = np.zeros(count, dtype=np.bool_)
    flagged[groups.get_column(GID).to_numpy()] = True
    *_, owners, listed = _engines.kernel().range_cells(
        ids, offset, s, r, w, plan.weight_scale, count, plan.centre, np.empty(0), flagged
    )
    del ids, s, r, w
    by_group = k.grouped_order(owners, count)  # (each group's points stay in score order)
    owners, listed = owners[by_group], listed[by_group]
    points = pl.DataFrame(
        {
            GID: owners,
            nm.SCORE: listed[:, k.L_SCORE],
            RUNNING_WEIGHT: listed[:, k.L_WEIGHT],
            STEPS: listed[:, k.L_STEPS],
            PLACE: listed[:, k.L_PLACE].astype(np.int64),
        }
    )
    return points, groups.sort(GID)


def _bests(
    starts: np.ndarray, groups: pl.DataFrame, values: dict[str, np.ndarray], compiled_search: bool
) -> pl.DataFrame:
    """Each group's best stretch starting at the point before the range or later.

    ``compiled_search``: the kernel ran already (the compiled search whatever the size).
    """
    if starts.shape[0] <= 1:
        return pl.DataFrame(schema={FID: pl.Int64, **dict.fromkeys(STRETCH, pl.Float64)})
    first = starts[:-1]
    values = {c: values[c].astype(np.float64) for c in ("a", "c", "next", "score", "position")}
    origin_a = (groups.get_column("prior_w") / groups.get_column(TOTAL_WEIGHT)).to_numpy()
    origin_c = groups.get_column("c_base").to_numpy()
    lower, upper = search(
        starts,
        values["a"],
        values["c"],
        (origin_a, origin_c, groups.get_column(SIGN).to_numpy()),
        groups.get_column(LIMIT).to_numpy(),
        compiled_search,
    )
    origins = {
        "a": origin_a,
        "c": origin_c,
        "next": values["score"][first],
        "position": values["position"][first] - 1.0,
    }
    columns = stretch_columns(starts, lower, upper, values, origins)
    return pl.DataFrame({FID: groups.get_column(FID), **columns}).fill_nan(None).drop_nulls("share")
