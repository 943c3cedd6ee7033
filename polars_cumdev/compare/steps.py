"""Steps 1-6 of the comparison, and the effect, for every group in one query."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from polars_cumdev.compare.columns import (
    _ABS_R,
    _BLOCK,
    _BLOCKS,
    _C_ABS_TERM,
    _C_ERR_TERM,
    _C_ERROR,
    _COUNT,
    _D,
    _D_ERR,
    _G,
    _LEFT,
    _M_FIRST,
    _M_SECOND,
    _MW,
    _N_ALL,
    _N_LEFT,
    _N_SHARED,
    _R,
    _R_ERR,
    _R_HIGH,
    _R_LOW,
    _RMAX,
    _SHARED,
    _SIGMA2,
    _SIGMA2_ERR,
    _SIGMA2_ERROR,
    _SOURCE,
    _SW,
    _T,
    _TERM,
    _V,
    _V_RAW,
    _Options,
)
from polars_cumdev.compare.dither import _dithered
from polars_cumdev.compare.neighbours import _U, _neighbour, _over
from polars_cumdev.compare.sigma import _sigma_error_term, _sigma_term
from polars_cumdev.compare.verdict import _finish
from polars_cumdev.method import _names as nm
from polars_cumdev.method.location import THRESHOLD, locate, threshold
from polars_cumdev.method.prepare import Labels
from polars_cumdev.method.sums import ordered_sum
from polars_cumdev.method.ties import merge_ties, sort_by_score

_SHIFT = f"{nm.PREFIX}shift"


@dataclass(frozen=True)
class _Pipeline:
    """The lazy frames of one run of the machinery (all keyed by ``nm.GROUP``)."""

    points: pl.LazyFrame  # the centred differences, accumulated (one row per point)
    stats: pl.LazyFrame  # one row per group: counts, statistics, effect, note
    first: pl.LazyFrame  # the first subpopulation's rows (group, score, response, weight)
    second: pl.LazyFrame  # the second's (score, response, weight), shared by every group


def _shared() -> pl.Expr:
    """A score that the neighbouring entry of the other subpopulation has too.

    The frame must be sorted by (group, score, subpopulation).
    """
    s = pl.col(nm.SCORE)
    source = pl.col(_SOURCE)

    def same(offset: int) -> pl.Expr:
        return ((_neighbour(s, offset) == s) & (_neighbour(source, offset) != source)).fill_null(
            False
        )

    return same(1) | same(-1)


def _entries(
    first: pl.LazyFrame, second: pl.LazyFrame, groups: pl.LazyFrame, options: _Options
) -> pl.LazyFrame:
    """Merged points of both subpopulations for every group, sorted by (group, score).

    ``first`` has the group column and the standardized score, response and
    weight; ``second`` the same without the group column (it is crossed with
    every group id in ``groups``). Each subpopulation has distinct scores
    after merging, so a score shared by the two shows up as two neighbouring
    entries with the same score.
    """
    columns = [_G, _SOURCE, nm.SCORE, nm.RESPONSE, nm.WEIGHT, nm.ROWS]
    own = merge_ties(sort_by_score(first), [_G])
    other = merge_ties(sort_by_score(second))
    own = own.with_columns(pl.lit(0, dtype=pl.Int8).alias(_SOURCE))
    other = other.with_columns(pl.lit(1, dtype=pl.Int8).alias(_SOURCE))
    crossed = groups.join(other, how="cross")
    entries = pl.concat([own.select(columns), crossed.select(columns)], how="vertical")
    order = [_G, nm.SCORE, _SOURCE]
    entries = entries.sort(order).with_columns(_shared().alias(_SHARED))
    if options.ties == "dither":
        score = pl.col(nm.SCORE)
        move = pl.col(_SHARED) & (pl.col(_SOURCE) == 1)
        entries = (
            entries.with_columns(
                pl.when(move).then(_dithered(score, options.seed)).otherwise(score).alias(nm.SCORE)
            )
            .sort(order)
            .with_columns(_shared().alias(_LEFT))
        )
    else:
        entries = entries.with_columns(pl.col(_SHARED).alias(_LEFT))
    return entries


def _blocks(entries: pl.LazyFrame) -> pl.LazyFrame:
    """Steps 1-3: blocks, their aggregates and the centred difference on each interior block.

    One row per (group, block), in block order, with ``_BLOCK`` numbering the
    blocks of a group from 0. ``_D`` and ``_V_RAW`` are null on the first and
    the last block of a group (not interior).
    """
    source = pl.col(_SOURCE)
    w = pl.col(nm.WEIGHT)
    r = pl.col(nm.RESPONSE)
    # Step 2: a block starts where the subpopulation (or the group) changes;
    # the running count of starts numbers the blocks of the whole frame.
    start = (source != _neighbour(source, 1)).fill_null(True)
    last = start.shift(-1).fill_null(True)
    labelled = entries.with_columns(
        start.cum_sum().alias(_BLOCK),
        (w * r).alias(_R),
        (w * pl.col(nm.SCORE)).alias(_T),
        # The responses at the lowest and the highest score of the block, each
        # on its own row (null elsewhere), so the aggregation below does not
        # depend on the order in which a block's rows reach it.
        pl.when(start).then(r).alias(_R_LOW),
        pl.when(last).then(r).alias(_R_HIGH),
    )
    blocks = (
        labelled.group_by(_BLOCK)
        .agg(
            pl.col(_G).first(),  # constant within a block
            source.first(),  # constant within a block
            ordered_sum(w).alias(_SW),
            ordered_sum(pl.col(_R)),
            ordered_sum(pl.col(_T)),
            ordered_sum(pl.col(_R).abs()).alias(_ABS_R),
            pl.col(nm.ROWS).sum().alias(_COUNT),
            pl.len().alias(_MW),
            pl.col(_R_LOW).max(),  # the one non-null value
            pl.col(_R_HIGH).max(),
        )
        .sort(_BLOCK)
    )
    sw = pl.col(_SW)
    blocks = blocks.with_columns(
        (pl.col(_BLOCK) - _over(pl.col(_BLOCK).min())).alias(_BLOCK),
        _over(pl.len()).cast(pl.Int64).alias(_BLOCKS),
        (pl.col(_R) / sw).alias(_R),  # weighted-average response
        # A bound of its rounding error: each merged response is a ratio of
        # sums over its rows, the block's a ratio of sums over its points; a
        # sum of m terms errs by at most m units of the sum of their |values|.
        ((2.0 * (pl.col(_COUNT) + pl.col(_MW)) + 8.0) * _U * pl.col(_ABS_R) / sw).alias(_R_ERR),
        (pl.col(_T) / sw).alias(_T),  # weighted-average score
        # Step 1 (weights over the total of both subpopulations), then the
        # plain mean of the block's weights.
        (sw / _over(ordered_sum(sw)) / pl.col(_MW)).alias(_MW),
    )

    def before(name: str) -> pl.Expr:
        return _neighbour(pl.col(name), 1)

    def after(name: str) -> pl.Expr:
        return _neighbour(pl.col(name), -1)

    # Step 3, written once for both kinds of interior block: centred on block
    # b the difference is r_b - (r_{b-1} + r_{b+1}) / 2 for a block of the
    # first subpopulation and its negative for one of the second, which is
    # the spec's P/Q formulas followed by the "0 minus 1" sign.
    sign = pl.when(source == 0).then(pl.lit(1.0)).otherwise(pl.lit(-1.0))
    r_b = pl.col(_R)
    # The effect: every entry of block b is compared with the nearest entries
    # of the other subpopulation, the last entry of block b-1 and the first of
    # block b+1 (one side at the ends); summed over the block with the
    # entries' weights this is sw_b * (r_b - mean of the available sides).
    sides = pl.mean_horizontal(before(_R_HIGH), after(_R_LOW))
    d_error = (
        pl.col(_R_ERR)
        + (before(_R_ERR) + after(_R_ERR)) / 2.0
        + 2.0 * _U * (r_b.abs() + (before(_R).abs() + after(_R).abs()) / 2.0)
    )
    return blocks.with_columns(
        (sign * (r_b - (before(_R) + after(_R)) / 2.0)).alias(_D),
        d_error.alias(_D_ERR),
        ((before(_MW) + 2.0 * pl.col(_MW) + after(_MW)) / 4.0).alias(_V_RAW),
        (sign * sw * (r_b - sides)).alias(_TERM),
    )


def _accumulate(blocks: pl.LazyFrame, options: _Options) -> pl.LazyFrame:
    """Step 4: the interior blocks in score order, zoomed, normalized and accumulated."""
    k = pl.col(_BLOCK).cast(pl.Int64)
    interior = blocks.filter(pl.col(_D).is_not_null()).with_columns(
        k.alias(nm.K), (pl.col(_BLOCKS) - 2).alias(_N_ALL)
    )
    if options.fraction < 1.0:
        kept = (pl.col(_N_ALL).cast(pl.Float64) * options.fraction).floor()
        interior = interior.filter(pl.col(nm.K) <= kept)
    v = pl.col(_V_RAW) / _over(ordered_sum(pl.col(_V_RAW)))
    return interior.with_columns(
        v.alias(_V), _over(pl.len()).cast(pl.Int64).alias(nm.N)
    ).with_columns(
        _over(pl.col(_V).cum_sum()).alias(nm.A),
        _over((pl.col(_V) * pl.col(_D)).cum_sum()).alias(nm.CUMDIFF),
        _sigma_term(options).alias(_SIGMA2),
        (pl.col(_V) * pl.col(_D_ERR)).alias(_C_ERR_TERM),
        (pl.col(_V) * pl.col(_D).abs()).alias(_C_ABS_TERM),
        _sigma_error_term(options).alias(_SIGMA2_ERR),
    )


def _without_constant(
    first: pl.LazyFrame, second: pl.LazyFrame
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Both subpopulations with every response 0 when all of them are one value.

    The comparison sees responses only through differences, so subtracting a
    constant leaves it unchanged mathematically; a value like 0.3, averaged
    over weighted blocks, left rounding noise (sigma "not resolved") where
    every difference is 0 exactly.
    """
    r = pl.col(nm.RESPONSE)
    both = pl.concat([first.select(r), second.select(r)], how="vertical")
    shift = both.select(
        pl.when(r.min() == r.max()).then(r.min()).otherwise(0.0).fill_null(0.0).alias(_SHIFT)
    )
    return tuple(  # type: ignore[return-value]
        part.join(shift, how="cross", maintain_order="left")
        .with_columns(r - pl.col(_SHIFT))
        .drop(_SHIFT)
        for part in (first, second)
    )


def _pipeline(
    first: pl.LazyFrame,
    second: pl.LazyFrame,
    groups: pl.LazyFrame,
    options: _Options,
    labels: tuple[str, str],
    columns: Labels | None = None,
) -> _Pipeline:
    """Run steps 1-6 and the effect for every group of ``first`` against ``second``.

    ``groups`` holds the group ids (column ``nm.GROUP``), one row each; the
    statistics have one row per group id even when a group has no point.
    ``labels`` name the two subpopulations in the notes, ``columns`` the
    weight and response columns (when rounding leaves a statistic unresolved).
    """
    first, second = _without_constant(first, second)
    entries = _entries(first, second, groups, options)
    blocks = _blocks(entries)
    points = _accumulate(blocks, options).cache()

    source = pl.col(_SOURCE)
    status = entries.group_by(_G).agg(
        pl.col(nm.ROWS).filter(source == 0).sum().cast(pl.Int64).alias("n_first"),
        pl.col(nm.ROWS).filter(source == 1).sum().cast(pl.Int64).alias("n_second"),
        (source == 0).sum().cast(pl.Int64).alias(_M_FIRST),
        (source == 1).sum().cast(pl.Int64).alias(_M_SECOND),
        (pl.col(_SHARED) & (source == 0)).sum().cast(pl.Int64).alias(_N_SHARED),
        (pl.col(_LEFT) & (source == 0)).sum().cast(pl.Int64).alias(_N_LEFT),
    )
    in_first = source == 0
    effect = blocks.group_by(_G).agg(
        (
            (
                ordered_sum(pl.col(_TERM).filter(in_first))
                / ordered_sum(pl.col(_SW).filter(in_first))
                + ordered_sum(pl.col(_TERM).filter(~in_first))
                / ordered_sum(pl.col(_SW).filter(~in_first))
            )
            / 2.0
        ).alias("effect"),
        pl.len().cast(pl.Int64).alias(_BLOCKS),
    )
    c = pl.col(nm.CUMDIFF)
    summary = points.group_by(_G).agg(
        (c.max().clip(lower_bound=0.0) - c.min().clip(upper_bound=0.0)).alias("kuiper"),
        c.abs().max().alias("ks"),
        c.get(pl.col(nm.K).arg_max()).alias("delta"),
        (2.0 * ordered_sum(pl.col(_SIGMA2)).clip(lower_bound=0.0).sqrt()).alias("sigma"),
        # Bounds of the rounding errors of every C_k and of sigma^2 (4 times the
        # sum of the terms): the rule of polars_cumdev.method.resolution.
        (
            ordered_sum(pl.col(_C_ERR_TERM))
            + (pl.len() + 3.0) * _U * ordered_sum(pl.col(_C_ABS_TERM))
        ).alias(_C_ERROR),
        (
            4.0 * ordered_sum(pl.col(_SIGMA2_ERR))
            + 4.0 * (pl.len() + 3.0) * _U * ordered_sum(pl.col(_SIGMA2).abs())
        ).alias(_SIGMA2_ERROR),
    )
    rmax = pl.concat(
        [part.select(pl.col(nm.RESPONSE).abs().max().alias(_RMAX)) for part in (first, second)]
    ).select(pl.col(_RMAX).max())
    counts = ["n_first", "n_second", _M_FIRST, _M_SECOND, _N_SHARED, _N_LEFT]
    stats = (
        groups.join(status, on=_G, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col(counts).fill_null(0))
        .join(effect, on=_G, how="left", nulls_equal=True, maintain_order="left")
        .join(summary, on=_G, how="left", nulls_equal=True, maintain_order="left")
        .join(rmax, how="cross", maintain_order="left")
    )
    # Where the difference is: the located stretch of every group's curve, the
    # points labelled by the score of the block each is centred on.
    thresholds = summary.select(
        _G, threshold(pl.col("kuiper"), pl.col("sigma") ** 2).alias(THRESHOLD)
    )
    curves = points.with_columns(pl.col(_T).alias(nm.SCORE))
    found = locate(curves, [_G], thresholds)
    stats = stats.join(found, on=_G, how="left", nulls_equal=True, maintain_order="left")
    return _Pipeline(
        points=points,
        stats=_finish(stats, options, labels, columns or Labels()),
        first=first,
        second=second,
    )


def _standard(frame: pl.LazyFrame, group: pl.Expr | None) -> pl.LazyFrame:
    columns = [nm.SCORE, nm.RESPONSE, nm.WEIGHT]
    if group is None:
        return frame.select(columns)
    return frame.select(group.alias(_G), *columns)


# --------------------------------------------------------------------------
