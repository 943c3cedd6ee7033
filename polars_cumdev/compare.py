"""Two subpopulations compared directly, without a common score.

This module implements the numerical contract of ``two-subpopulations.md``,
which follows M. Tygert, "A graphical method of cumulative differences between
two subpopulations", J. Big Data 8 (2021) 158 (arXiv 2108.02666). The steps
cited below ("step 1" to "step 6", "the effect") are that page's.

Everything is expressed as one lazy Polars query. The same machinery serves
three public functions:

* :func:`compare` -- one pair of selections, one row of statistics;
* :func:`compare_curve` -- the same pair, point by point, for a chart;
* :func:`compare_all` -- every group of a column against one reference group,
  all groups in one query, with Benjamini-Hochberg adjustment across groups.

Internally a *group* is one comparison. :func:`compare` is the case of a
single group (a constant group id); :func:`compare_all` uses the values of the
``by`` column. For every group the query

1. merges tied scores inside each subpopulation (method.md 1.1, via
   :func:`polars_cumdev.ties.merge_ties`); the second subpopulation (the
   reference of :func:`compare_all`) is merged once and crossed with every
   group id;
2. finds the distinct scores shared by the two subpopulations and, with
   ``ties="dither"``, moves the shared scores of the second subpopulation
   (see :func:`dither_scores`);
3. sorts by score and numbers the maximal runs of one subpopulation
   ("blocks", step 2): a new block starts wherever the subpopulation changes;
   the weights are normalized by the total of both subpopulations (step 1)
   when the blocks' mean weights are taken;
4. aggregates each block and forms the centred difference on every interior
   block from its two neighbours (step 3, a ``shift`` that stops at the
   group's edges);
5. accumulates (step 4), takes the Kuiper and Kolmogorov-Smirnov statistics
   (step 5) and the scale sigma (step 6), and computes the weighted average
   treatment effect from the same blocks.

No Python loop runs over rows or groups; NumPy is used only inside
``map_batches`` for the dither and the p-values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.accumulate import check_fraction
from polars_cumdev.errors import (
    ColumnTypeError,
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
    OverlapError,
    TiedScoresError,
)
from polars_cumdev.prepare import (
    Check,
    FrameLike,
    Prepared,
    as_lazy,
    mask_checks,
    prepare,
    resolve_mask,
    schema_of,
)
from polars_cumdev.statistics import benjamini_hochberg, pvalue_columns, verdict
from polars_cumdev.subpopulation import variance_share
from polars_cumdev.ties import merge_ties, sort_by_score
from polars_cumdev.weights import rescale

__all__ = [
    "COMPARE_ALL_COLUMNS",
    "COMPARE_COLUMNS",
    "COMPARE_CURVE_COLUMNS",
    "DITHER",
    "compare",
    "compare_all",
    "compare_curve",
    "dither_scores",
]

COMPARE_COLUMNS = (
    "n_first",
    "n_second",
    "kuiper",
    "ks",
    "delta",
    "sigma",
    "kuiper_z",
    "ks_z",
    "kuiper_p",
    "ks_p",
    "kuiper_log10p",
    "ks_log10p",
    "effect",
    "variance",
    "note",
)
"""Columns of :func:`compare`, in order."""

# Statistics that are never NaN or infinite when present.
_CHECKED = ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z", "effect")

COMPARE_ALL_COLUMNS = (
    "n_first",
    "n_second",
    "kuiper",
    "ks",
    "delta",
    "sigma",
    "kuiper_z",
    "ks_z",
    "kuiper_p",
    "ks_p",
    "kuiper_log10p",
    "ks_log10p",
    "kuiper_q",
    "ks_q",
    "effect",
    "variance",
    "note",
)
"""Columns of :func:`compare_all` after the ``by`` column, in order."""

COMPARE_CURVE_COLUMNS = (
    "k",
    "a",
    "k_over_n",
    "score",
    "cumdiff",
    "sigma",
    "centre",
    "difference",
    "v",
    "variance_share",
)
"""Columns of :func:`compare_curve`, in order."""

DITHER = 1e-8
"""Relative size of the dither of ``ties="dither"`` (see :func:`dither_scores`)."""

_VARIANCES = ("empirical", "score")
_TIES = ("error", "dither")

# Internal columns (the prefix keeps them clear of user columns).
_P = nm.PREFIX
_FIRST = f"{_P}first"
_SECOND = f"{_P}second"
_SOURCE = f"{_P}source"  # 0: first subpopulation, 1: second (the reference)
_SHARED = f"{_P}shared"  # the score occurs in both subpopulations (before dithering)
_LEFT = f"{_P}left"  # the score still occurs in both (after dithering)
_W = f"{_P}w"  # weight normalized by the total of both subpopulations (step 1)
_BLOCK = f"{_P}block"
_BLOCKS = f"{_P}blocks"
_SW = f"{_P}block_weight"
_R = f"{_P}block_response"
_T = f"{_P}block_score"
_MW = f"{_P}block_mean_weight"
_R_LOW = f"{_P}response_at_lowest"
_R_HIGH = f"{_P}response_at_highest"
_TERM = f"{_P}effect_term"
_D = f"{_P}d"
_V_RAW = f"{_P}v_raw"
_V = f"{_P}v"
_N_ALL = f"{_P}n_all"
_SIGMA2 = f"{_P}sigma2"
_M_FIRST = f"{_P}m_first"
_M_SECOND = f"{_P}m_second"
_N_SHARED = f"{_P}n_shared"
_N_LEFT = f"{_P}n_left"
_INVALID = f"{_P}invalid"

_G = nm.GROUP

# SplitMix64 constants (Steele, Lea and Flood, OOPSLA 2014).
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# --------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    variance: str
    ties: str
    seed: int
    fraction: float = 1.0


def _options(variance: object, ties: object, seed: object, fraction: object = 1.0) -> _Options:
    if variance not in _VARIANCES:
        raise InvalidParameterError(
            f"`variance` must be 'empirical' or 'score', got {variance!r} "
            "('score' reads the scores as the success probabilities of Bernoulli responses)"
        )
    if ties not in _TIES:
        raise InvalidParameterError(f"`ties` must be 'error' or 'dither', got {ties!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidParameterError(f"`seed` must be an int, got {seed!r}")
    return _Options(
        variance=str(variance),
        ties=str(ties),
        seed=int(seed),
        fraction=check_fraction(fraction),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------
# The dither
# --------------------------------------------------------------------------


def _splitmix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64 output function of the state ``z`` (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + _GAMMA
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def dither_scores(scores: npt.ArrayLike, seed: int) -> npt.NDArray[np.float64]:
    """Move each score by a pseudo-random amount of about one part in 1e8.

    This is the perturbation ``ties="dither"`` applies to the scores of the
    second subpopulation that also occur in the first (two-subpopulations.md:
    ties between the subpopulations "may be broken by dithering the scores by
    about one part in 1e8 with a seeded generator"). The amount depends only
    on the score's value and ``seed``, never on the row order or on the other
    scores, so the same score is moved the same way in every comparison:

    1. ``key = splitmix64(seed mod 2**64)``;
    2. ``h = splitmix64(bits(x) XOR key)``, where ``bits(x)`` is the IEEE-754
       bit pattern of the float64 score (with -0.0 read as 0.0) and
       ``splitmix64`` is the output function of the SplitMix64 generator
       (add 0x9E3779B97F4A7C15, then the two xor-shift-multiply rounds);
    3. ``u = (h >> 11) / 2**53`` in [0, 1) and the sign is + when the lowest
       bit of ``h`` is 1, - otherwise;
    4. ``x' = x + sign * 1e-8 * (0.5 + u / 2) * max(|x|, tiny)``, ``tiny`` the
       smallest normal float64 (so a score of 0 moves too).

    The relative change is between 0.5e-8 and 1e-8, so ``x' != x`` always.

    Parameters
    ----------
    scores
        Scores to dither (any shape; read as float64).
    seed
        Any Python int; it selects the pseudo-random stream.

    Returns
    -------
    numpy.ndarray
        The dithered scores, float64, same shape.
    """
    x = np.array(scores, dtype=np.float64) + 0.0  # a fresh array; -0.0 becomes 0.0
    key = _splitmix64(np.array([int(seed) % 2**64], dtype=np.uint64))[0]
    h = _splitmix64(x.view(np.uint64) ^ key)
    u = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
    sign = np.where((h & np.uint64(1)) == np.uint64(1), 1.0, -1.0)
    size = DITHER * (0.5 + 0.5 * u) * np.maximum(np.abs(x), np.finfo(np.float64).tiny)
    return x + sign * size


def _dithered(score: pl.Expr, seed: int) -> pl.Expr:
    def apply(series: pl.Series) -> pl.Series:
        values = series.cast(pl.Float64).to_numpy()
        return pl.Series(series.name, dither_scores(values, seed), dtype=pl.Float64)

    return score.map_batches(apply, return_dtype=pl.Float64, is_elementwise=True)


# --------------------------------------------------------------------------
# The shared machinery: one comparison per value of the internal group column
# --------------------------------------------------------------------------


def _over(expr: pl.Expr) -> pl.Expr:
    return expr.over(_G)


def _neighbour(expr: pl.Expr, offset: int) -> pl.Expr:
    """``expr`` on the row ``offset`` rows away if that row is in the same group, else null.

    The frame must hold each group's rows contiguously (it is sorted by
    group). A plain shift with a test on the group column is much cheaper than
    ``shift(...).over(group)`` when there are many groups. (At the two ends
    of the frame the shifted value is null anyway, whatever the test says.)
    """
    g = pl.col(_G)
    return pl.when(g.eq_missing(g.shift(offset))).then(expr.shift(offset))


@dataclass(frozen=True)
class _Pipeline:
    """The lazy frames of one run of the machinery (all keyed by ``nm.GROUP``)."""

    points: pl.LazyFrame  # the centred differences, accumulated (one row per point)
    stats: pl.LazyFrame  # one row per group: counts, statistics, effect, note


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
            w.sum().alias(_SW),
            pl.col(_R).sum(),
            pl.col(_T).sum(),
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
        (pl.col(_T) / sw).alias(_T),  # weighted-average score
        # Step 1 (weights over the total of both subpopulations), then the
        # plain mean of the block's weights.
        (sw / _over(sw.sum()) / pl.col(_MW)).alias(_MW),
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
    return blocks.with_columns(
        (sign * (r_b - (before(_R) + after(_R)) / 2.0)).alias(_D),
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
    v = pl.col(_V_RAW) / _over(pl.col(_V_RAW).sum())
    return interior.with_columns(
        v.alias(_V), _over(pl.len()).cast(pl.Int64).alias(nm.N)
    ).with_columns(
        _over(pl.col(_V).cum_sum()).alias(nm.A),
        _over((pl.col(_V) * pl.col(_D)).cum_sum()).alias(nm.CUMDIFF),
        _sigma_term(options).alias(_SIGMA2),
    )


def _sigma_term(options: _Options) -> pl.Expr:
    """Step 6, per point: the terms whose sum is (sigma / 2)^2.

    Empirical: e_k^2 u_k^2 / 16 with e_k = d_{k+1} - d_k and u_k = v_k + v_{k+1}
    (null on a group's last point). Score: v_k^2 t_k (1 - t_k).
    """
    v = pl.col(_V)
    if options.variance == "empirical":
        e = _neighbour(pl.col(_D), -1) - pl.col(_D)
        u = v + _neighbour(v, -1)
        return e * e * u * u / 16.0
    # The block-centre scores lie in [0, 1] when the scores do; the clip only
    # keeps a dithered score of exactly 0 or 1 from giving a negative term.
    t = pl.col(_T).clip(0.0, 1.0)
    return v * v * t * (1.0 - t)


def _pipeline(
    first: pl.LazyFrame,
    second: pl.LazyFrame,
    groups: pl.LazyFrame,
    options: _Options,
    labels: tuple[str, str],
) -> _Pipeline:
    """Run steps 1-6 and the effect for every group of ``first`` against ``second``.

    ``groups`` holds the group ids (column ``nm.GROUP``), one row each; the
    statistics have one row per group id even when a group has no point.
    ``labels`` name the two subpopulations in the notes.
    """
    entries = _entries(first, second, groups, options)
    blocks = _blocks(entries)
    points = _accumulate(blocks, options)

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
                pl.col(_TERM).filter(in_first).sum() / pl.col(_SW).filter(in_first).sum()
                + pl.col(_TERM).filter(~in_first).sum() / pl.col(_SW).filter(~in_first).sum()
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
        (2.0 * pl.col(_SIGMA2).sum().clip(lower_bound=0.0).sqrt()).alias("sigma"),
    )
    counts = ["n_first", "n_second", _M_FIRST, _M_SECOND, _N_SHARED, _N_LEFT]
    stats = (
        groups.join(status, on=_G, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col(counts).fill_null(0))
        .join(effect, on=_G, how="left", nulls_equal=True, maintain_order="left")
        .join(summary, on=_G, how="left", nulls_equal=True, maintain_order="left")
    )
    return _Pipeline(points=points, stats=_finish(stats, options, labels))


def _finish(stats: pl.LazyFrame, options: _Options, labels: tuple[str, str]) -> pl.LazyFrame:
    """Notes, nulls where a statistic is undefined, z-scores and p-values."""
    one, two = labels
    few = (pl.col(_M_FIRST) < 2) | (pl.col(_M_SECOND) < 2)
    tied = (pl.col(_N_SHARED) > 0) if options.ties == "error" else pl.lit(False)
    left = pl.col(_N_LEFT) > 0
    flat = pl.col(_BLOCKS) < 3
    sigma = pl.col("sigma")
    note = (
        pl.when(few)
        .then(
            pl.format(
                f"too few distinct scores ({{}} in {one}, {{}} in {two}): "
                "each subpopulation needs at least two",
                pl.col(_M_FIRST),
                pl.col(_M_SECOND),
            )
        )
        .when(tied)
        .then(
            pl.format(
                f"{{}} distinct score(s) occur in both {one} and {two}; the method needs "
                "disjoint scores: pass ties='dither' to break them",
                pl.col(_N_SHARED),
            )
        )
        .when(left)
        .then(
            pl.format(
                "{} shared score(s) remain after dithering: try another seed",
                pl.col(_N_LEFT),
            )
        )
        .when(flat)
        .then(
            pl.format(
                f"the scores of {one} and {two} do not interleave ({{}} blocks): there is no "
                "interior block to centre a difference on",
                pl.col(_BLOCKS),
            )
        )
        .when(sigma <= 0.0)
        .then(
            pl.lit(
                "sigma is 0 (too few centred differences, or no spread): "
                "the normalized statistics are undefined"
            )
        )
        .when(pl.col(_N_SHARED) > 0)
        .then(
            pl.format(
                f"{{}} score(s) shared with {one} dithered in {two} (seed {options.seed})",
                pl.col(_N_SHARED),
            )
        )
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    invalid = few | tied | left | flat
    undefined = invalid | (sigma <= 0.0)

    def unless(condition: pl.Expr, name: str) -> pl.Expr:
        return pl.when(condition).then(None).otherwise(pl.col(name)).alias(name)

    return (
        stats.with_columns(invalid.alias(_INVALID), note.alias("note"))
        .with_columns(
            unless(pl.col(_INVALID), "kuiper"),
            unless(pl.col(_INVALID), "ks"),
            unless(pl.col(_INVALID), "delta"),
            unless(pl.col(_INVALID), "sigma"),
            unless(few | tied | left, "effect"),
            pl.when(undefined).then(None).otherwise(pl.col("kuiper") / sigma).alias("kuiper_z"),
            pl.when(undefined).then(None).otherwise(pl.col("ks") / sigma).alias("ks_z"),
            pl.lit(options.variance).alias("variance"),
        )
        .with_columns(pvalue_columns())
    )


def _standard(frame: pl.LazyFrame, group: pl.Expr | None) -> pl.LazyFrame:
    columns = [nm.SCORE, nm.RESPONSE, nm.WEIGHT]
    if group is None:
        return frame.select(columns)
    return frame.select(group.alias(_G), *columns)


# --------------------------------------------------------------------------
# One pair of selections
# --------------------------------------------------------------------------


def _pair(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: str,
    response: str,
    weight: str | None,
    options: _Options,
) -> tuple[_Pipeline, Prepared]:
    """Prepare, check and run the machinery for one pair; returns the pipeline and prepared."""
    lazy = as_lazy(frame)
    one = resolve_mask(lazy, first, "first")
    two = resolve_mask(lazy, second, "second")
    # Only the selected rows must hold usable values; rows where a mask is
    # null stay so that the null checks see them.
    selected = lazy.filter((one | two).fill_null(True))
    prepared = prepare(
        selected,
        score=score,
        response=response,
        weight=weight,
        carry=[one.alias(_FIRST), two.alias(_SECOND)],
    )
    label_one = f"first {first if isinstance(first, str) else str(first)!r}"
    label_two = f"second {second if isinstance(second, str) else str(second)!r}"
    s = pl.col(score).cast(pl.Float64)
    a = one.fill_null(False)
    b = two.fill_null(False)
    overlap = (a & b).sum()
    prepared.checks += mask_checks(one, label_one) + mask_checks(two, label_two)
    prepared.checks.append(
        Check(
            overlap,
            f"{label_one} and {label_two} overlap: {{count}} row(s) are selected by both; "
            "the two selections must be disjoint",
            OverlapError,
        )
    )
    for label, mask in ((label_one, a), (label_two, b)):
        prepared.checks.append(
            Check(
                (s.filter(mask).n_unique() == 1).cast(pl.Int64),
                f"{label} has only one distinct score: at least two are needed",
                EmptySubpopulationError,
            )
        )
    if options.ties == "error":
        shared = s.filter(a).n_unique() + s.filter(b).n_unique() - s.filter(a | b).n_unique()
        prepared.checks.append(
            Check(
                pl.when(overlap == 0).then(shared).otherwise(0),
                f"{{count}} distinct score(s) occur in both {label_one} and {label_two}; the "
                "method needs disjoint scores: pass ties='dither' to break them",
                TiedScoresError,
            )
        )
    if options.variance == "score":
        prepared.checks.append(
            Check(
                ((s < 0.0) | (s > 1.0)).filter(a | b).sum(),
                f"score column {score!r} has {{count}} value(s) outside [0, 1] among the "
                "selected rows; variance='score' reads the scores as probabilities",
                InvalidValuesError,
            )
        )
    rows, _ = rescale(prepared.gated())
    group = pl.lit(0, dtype=pl.Int64)
    pipeline = _pipeline(
        _standard(rows.filter(pl.col(_FIRST)), group),
        _standard(rows.filter(pl.col(_SECOND)), None),
        pl.LazyFrame({_G: [0]}, schema={_G: pl.Int64}),
        options,
        ("first", "second"),
    )
    return pipeline, prepared


def compare(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
) -> pl.LazyFrame:
    """Cumulative differences between two subpopulations with disjoint scores.

    Implements ``two-subpopulations.md`` (M. Tygert, J. Big Data 8 (2021) 158):
    ties inside each selection are merged (method.md 1.1), the weights are
    normalized by the total of both (step 1), the merged scores are cut into
    alternating blocks (step 2), a centred difference is formed on every
    interior block (step 3), the differences are accumulated (step 4) and
    summarized by the Kuiper and Kolmogorov-Smirnov statistics (step 5)
    divided by the scale sigma (step 6), with asymptotic p-values (method.md
    4). Differences read "first minus second".

    Parameters
    ----------
    frame
        The data (DataFrame or LazyFrame).
    first, second
        Boolean expressions, or names of boolean columns, selecting the two
        subpopulations (subpopulation 0 and 1 of the spec). They must not
        select a common row. Rows selected by neither are ignored (their
        values are not checked).
    score, response, weight
        Column names; ``weight=None`` weights rows equally.
    variance
        ``"empirical"`` (step 6, from the differences of neighbouring centred
        differences; any responses) or ``"score"`` (the Bernoulli form, the
        scores being the success probabilities: sigma = 2 sqrt(sum v_k^2 t_k
        (1 - t_k)) with t_k the weighted-average score of the block the k-th
        difference is centred on; the selected scores must lie in [0, 1]).
    ties
        ``"error"``: a score occurring in both selections (after merging ties
        inside each) raises :class:`~polars_cumdev.errors.TiedScoresError`.
        ``"dither"``: such scores of ``second`` are moved by about one part in
        1e8 (see :func:`dither_scores`); deterministic given ``seed`` and
        independent of the row order.
    seed
        Seed of the dither (only used with ``ties="dither"``).

    Returns
    -------
    pl.LazyFrame
        One row: ``n_first``, ``n_second`` (rows selected), ``kuiper``,
        ``ks``, ``delta`` (C at the end of the curve), ``sigma``,
        ``kuiper_z``, ``ks_z``, ``kuiper_p``, ``ks_p``, ``kuiper_log10p``,
        ``ks_log10p``, ``effect`` (the
        weighted average treatment effect, "first minus second"),
        ``variance`` and ``note``. When the scores of the two selections do
        not interleave (fewer than three blocks) the statistics are null and
        ``note`` says so (``effect`` is still given); when sigma is 0 the
        z-scores and p-values are null, likewise with a note.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, InvalidParameterError
        At once, for a missing or non-numeric column, a non-boolean
        selection, or an unknown ``variance`` / ``ties``.
    OverlapError, TiedScoresError, EmptySubpopulationError, InvalidValuesError
        When the result is collected: overlapping selections (with the number
        of rows in both), shared scores under ``ties="error"`` (with their
        number), a selection that is empty or has fewer than two distinct
        scores, or unusable values (nulls, NaN, infinities, non-positive
        weights, scores outside [0, 1] with ``variance="score"``).
    """
    options = _options(variance, ties, seed)
    pipeline, prepared = _pair(frame, first, second, score, response, weight, options)
    stats = pipeline.stats.select(COMPARE_COLUMNS)
    return prepared.guarded(stats.filter(verdict(_CHECKED, [], prepared.labels)))


def compare_curve(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
    fraction: float = 1.0,
) -> pl.LazyFrame:
    """The cumulative differences between two subpopulations, point by point.

    The curve of :func:`compare` (``two-subpopulations.md`` steps 1-4; M.
    Tygert, J. Big Data 8 (2021) 158), in the layout of
    :func:`polars_cumdev.subpopulation.curve`, for charts and drill-down.

    Parameters
    ----------
    frame, first, second, score, response, weight, variance, ties, seed
        As in :func:`compare`.
    fraction
        Zoom q in (0, 1]: keep the first floor(n q) centred differences and
        normalize their weights v_k to sum to 1 over them (step 4).

    Returns
    -------
    pl.LazyFrame
        An origin row (k = 0, A_0 = C_0 = 0) and one row per centred
        difference in score order: ``k``, ``a`` (A_k), ``k_over_n``,
        ``score`` (the weighted-average score of the block the difference is
        centred on; null at the origin), ``cumdiff`` (C_k), ``sigma`` (the
        same on every row), ``centre`` (``"first"`` or ``"second"``: which
        subpopulation owns that block), ``difference`` (d_k, "first minus
        second"), ``v`` (the normalized weight v_k) and ``variance_share``
        (the share of sigma^2 from the terms of points 1..k, step 6; see
        :func:`polars_cumdev.subpopulation.variance_share`). When the scores do not
        interleave, or the zoom keeps no difference, there is only the origin
        row, with a null sigma.

    Raises
    ------
    CumdevError
        As :func:`compare`; also :class:`InvalidParameterError` for a
        ``fraction`` outside (0, 1].
    """
    options = _options(variance, ties, seed, fraction)
    pipeline, prepared = _pair(frame, first, second, score, response, weight, options)
    sigma = pipeline.stats.select(pl.col("sigma"))
    body = pipeline.points.join(sigma, how="cross", maintain_order="left").select(
        pl.col(nm.K).alias("k"),
        pl.col(nm.A).alias("a"),
        (pl.col(nm.K) / pl.col(nm.N)).alias("k_over_n"),
        pl.col(_T).alias("score"),
        pl.col(nm.CUMDIFF).alias("cumdiff"),
        pl.col("sigma"),
        pl.when(pl.col(_SOURCE) == 0)
        .then(pl.lit("first"))
        .otherwise(pl.lit("second"))
        .alias("centre"),
        pl.col(_D).alias("difference"),
        pl.col(_V).alias("v"),
        variance_share(pl.col(_SIGMA2)),
    )
    origin = sigma.select(
        pl.lit(0, dtype=pl.Int64).alias("k"),
        pl.lit(0.0).alias("a"),
        pl.lit(0.0).alias("k_over_n"),
        pl.lit(None, dtype=pl.Float64).alias("score"),
        pl.lit(0.0).alias("cumdiff"),
        pl.col("sigma"),
        pl.lit(None, dtype=pl.String).alias("centre"),
        pl.lit(None, dtype=pl.Float64).alias("difference"),
        pl.lit(None, dtype=pl.Float64).alias("v"),
        pl.lit(0.0).alias("variance_share"),
    )
    curve = pl.concat([origin, body], how="vertical").sort("k")
    return prepared.guarded(curve)


# --------------------------------------------------------------------------
# Every group against a reference group
# --------------------------------------------------------------------------


def _check_reference(schema: pl.Schema, by: str, reference: object) -> None:
    if reference is None:
        raise InvalidParameterError("`reference` must be a value of the `by` column, got None")
    if by not in schema:
        return  # prepare() reports the missing column
    probe = pl.DataFrame(schema={by: schema[by]})
    try:
        probe.select(pl.col(by).eq_missing(reference))
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        raise ColumnTypeError(
            f"`reference` {reference!r} cannot be compared with the `by` column {by!r} "
            f"of dtype {schema[by]}: {exc}"
        ) from None


def compare_all(
    frame: FrameLike,
    by: str,
    reference: object,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
) -> pl.LazyFrame:
    """Compare every group of ``by`` with one reference group, all in one lazy query.

    Each group other than the reference is subpopulation 0 ("first") and the
    reference group subpopulation 1 ("second") of ``two-subpopulations.md``
    (M. Tygert, J. Big Data 8 (2021) 158), so the statistics read "group
    minus reference" and equal those of :func:`compare` run on the pair. The
    reference's merged points are crossed with every group id and all pairs
    are processed together; the p-values are then adjusted across the groups
    by Benjamini-Hochberg.

    A screen should not stop at one awkward group, so a group that cannot be
    compared keeps its row, with null statistics and a ``note`` saying why:
    fewer than two distinct scores, scores shared with the reference under
    ``ties="error"`` (with their number), or scores that do not interleave
    with the reference's. Rows whose ``by`` value is null form a group of
    their own.

    Parameters
    ----------
    frame
        The data (DataFrame or LazyFrame).
    by
        Name of the column defining the groups.
    reference
        The value of ``by`` naming the reference group.
    score, response, weight, variance, ties, seed
        As in :func:`compare`. With ``ties="dither"`` the reference's scores
        shared with a group are dithered; a score is moved by the same amount
        in every comparison (:func:`dither_scores`).

    Returns
    -------
    pl.LazyFrame
        One row per group other than the reference: the ``by`` column, then
        ``n_first`` (rows of the group), ``n_second`` (rows of the reference),
        ``kuiper``, ``ks``, ``delta``, ``sigma``, ``kuiper_z``, ``ks_z``,
        ``kuiper_p``, ``ks_p``, ``kuiper_log10p``, ``ks_log10p``, ``kuiper_q``,
        ``ks_q`` (Benjamini-Hochberg
        over the groups with a p-value), ``effect``, ``variance`` and
        ``note``; sorted by ``kuiper_z``, largest first, nulls last, then by
        ``by``. Empty when the reference is the only group.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, InvalidParameterError
        At once, for schema problems, a ``reference`` of the wrong type or
        None, or an unknown ``variance`` / ``ties``.
    EmptySubpopulationError, InvalidValuesError
        When collected: the reference value does not occur in ``by``, the
        reference group has fewer than two distinct scores, or the values
        are unusable (as in :func:`compare`; here every row is used).
    """
    options = _options(variance, ties, seed)
    if not isinstance(by, str) or not by:
        raise InvalidParameterError(f"`by` must be the name of one column, got {by!r}")
    lazy = as_lazy(frame)
    _check_reference(schema_of(lazy), by, reference)
    prepared = prepare(
        lazy,
        score=score,
        response=response,
        weight=weight,
        by=by,
        reserved=COMPARE_ALL_COLUMNS,
        score_range=(0.0, 1.0) if options.variance == "score" else None,
    )
    is_reference = pl.col(by).eq_missing(reference)
    s = pl.col(score).cast(pl.Float64)
    prepared.checks += [
        Check(
            (is_reference.sum() == 0).cast(pl.Int64),
            f"the reference value {reference!r} does not occur in the `by` column {by!r}",
            EmptySubpopulationError,
        ),
        Check(
            (s.filter(is_reference).n_unique() == 1).cast(pl.Int64),
            f"the reference group {by} == {reference!r} has only one distinct score: "
            "at least two are needed",
            EmptySubpopulationError,
        ),
    ]
    rows, _ = rescale(prepared.gated())
    others = _standard(rows.filter(~is_reference), pl.col(by))
    pipeline = _pipeline(
        others,
        _standard(rows.filter(is_reference), None),
        others.select(_G).unique(),
        options,
        ("the group", "the reference"),
    )
    stats = (
        pipeline.stats.with_columns(
            benjamini_hochberg(pl.col("kuiper_p")).alias("kuiper_q"),
            benjamini_hochberg(pl.col("ks_p")).alias("ks_q"),
        )
        .sort(["kuiper_z", _G], descending=[True, False], nulls_last=True)
        .select(pl.col(_G).alias(by), *COMPARE_ALL_COLUMNS)
    )
    return prepared.guarded(stats.filter(verdict(_CHECKED, [by], prepared.labels)))
