"""CORP reliability diagrams and the decomposition of the Brier score.

CORP (consistent, optimally binned, reproducible, PAV-based; T. Dimitriadis,
T. Gneiting and A. I. Jordan, "Stable reliability diagrams for probabilistic
classifiers", PNAS 118 (2021) e2016191118, the R package ``reliabilitydiag``)
replaces the bins of a classical reliability diagram by the isotonic
regression of the outcomes on the predicted probabilities: the nondecreasing
function of the score closest to the outcomes in weighted least squares. It
needs no choice of bins, and it recalibrates the forecast in the best way
that keeps its ranking. The mean Brier score S of the forecasts x_i then
splits into three parts:

* MCB = S - S_C, miscalibration: how much recalibration would gain, S_C the
  mean score of the recalibrated forecasts x-hat_i;
* DSC = S_R - S_C, discrimination: how much better than the base rate the
  recalibrated forecasts are, S_R the mean score of the constant forecast
  r-bar (the weighted mean outcome);
* UNC = S_R, uncertainty: the score of that constant forecast, a property
  of the outcomes alone;

and S = MCB - DSC + UNC. All means are weighted with the rows' weights. MCB
and DSC are never negative: the original forecast and the constant one are
both nondecreasing functions of the score, and the recalibration is the best
of those.

Ties. Rows of a group sharing a score must get the same recalibrated value,
so they are merged first into one point (method.md 1.1): summed weight W',
weighted-average outcome R'. Isotonic regression of the points with weights
W' is the fit of the rows with the ties forced into one block. The
decomposition is computed from these points wherever the within-tie spread
cancels: with x-hat_k the fit and r-bar the base rate, summing over points,

* MCB = sum_k W'_k (x_k - x-hat_k)(x_k + x-hat_k - 2 R'_k) / W,
* DSC = sum_k W'_k (x-hat_k - r-bar)^2 / W (every block's mean is its
  outcomes' mean, so the cross term vanishes),

while S and UNC are sums over rows. Each of the four columns is computed on
its own, so the identity S = MCB - DSC + UNC is a check, not a definition.

Groups in one query. The isotonic fit uses :func:`scipy.optimize.isotonic_regression`
once for all groups (:func:`polars_cumdev.corp.isotonic.fit_segments`: groups laid
end to end with offsets that keep any block from crossing a group boundary,
each block's value then recomputed from the unshifted outcomes), inside one
:meth:`polars.LazyFrame.map_batches` over the merged points of every group.
That node sees the whole frame, so the streaming engine runs it in memory.
The consistency bands of :func:`corp_curve` (responses redrawn as
Bernoulli(score), every group refitted, pointwise quantiles) use one such
call per resample; see :func:`polars_cumdev.corp.isotonic.consistency_band`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.corp.isotonic import consistency_band, fit_segments, segment_starts
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.prepare import FrameLike, Prepared, prepare
from polars_cumdev.method.sums import boundary, run_total, with_running_sums
from polars_cumdev.method.ties import group_rows, merge_ties, sort_by_score
from polars_cumdev.method.weights import SCALE, rescale

__all__ = ["CORP_COLUMNS", "CORP_CURVE_COLUMNS", "corp", "corp_curve"]

CORP_COLUMNS = ("n", "n_scores", "weight", "base_rate", "brier", "mcb", "dsc", "unc", "blocks")
"""Columns of :func:`corp` after the ``by`` columns, in order."""

CORP_CURVE_COLUMNS = (
    "score",
    "fitted",
    "response_mean",
    "weight",
    "rows",
    "block",
    "lower",
    "upper",
    "level",
    "resamples",
)
"""Columns of :func:`corp_curve` after the ``by`` columns, in order."""

_UNIT = (0.0, 1.0)
_SEGMENT = f"{nm.PREFIX}segment"
_FIT = f"{nm.PREFIX}fit"
_BLOCK = f"{nm.PREFIX}block"
_POINT = f"{nm.PREFIX}point"
_COUNT = f"{nm.PREFIX}count"
_LOWER = f"{nm.PREFIX}lower"
_UPPER = f"{nm.PREFIX}upper"
_NO_PUSHDOWN = {"predicate_pushdown": False, "projection_pushdown": False, "slice_pushdown": False}


# --------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------


def _check_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise InvalidParameterError(f"`{name}` must be an int >= {low}, got {value!r}")
    return int(value)


def _check_level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be a number in (0, 1), got {level!r}")
    return float(level)


def _prepare(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None,
    by: str | Sequence[str] | None,
) -> Prepared:
    return prepare(
        frame,
        score=score,
        response=response,
        weight=weight,
        by=by,
        score_range=_UNIT,
        response_range=_UNIT,
        reserved=(*CORP_COLUMNS, *CORP_CURVE_COLUMNS),
    )


# --------------------------------------------------------------------------
# The fit
# --------------------------------------------------------------------------


def _usable(values: np.ndarray, weights: np.ndarray) -> bool:
    """Whether the values lie in [0, 1] and the weights are positive and finite.

    Bad data fail the checks of :func:`polars_cumdev.method.prepare.prepare` when the
    query is collected; the NumPy steps must not fail first with SciPy's own
    message, so they are skipped on such data.
    """
    with np.errstate(invalid="ignore"):
        return bool(
            np.all((values >= 0.0) & (values <= 1.0))
            and np.all(np.isfinite(weights) & (weights > 0.0))
        )


def _fitted(keys: list[str], ordered: pl.LazyFrame) -> pl.LazyFrame:
    """Merged points of every group with their isotonic fit ``_FIT`` and block number ``_BLOCK``.

    ``ordered`` holds the checked rows, weights rescaled, sorted by score
    (:func:`polars_cumdev.method.ties.sort_by_score`). Blocks are numbered 1, 2,
    ... within each group: a block is a maximal run of points sharing one
    fitted value (one step of the fitted function).
    """
    points = merge_ties(ordered, keys)
    points = points.with_columns((boundary(keys, 1).cum_sum() - 1).cast(pl.Int64).alias(_SEGMENT))
    schema = {**points.collect_schema(), _FIT: pl.Float64, _BLOCK: pl.Int64}

    def fit(batch: pl.DataFrame) -> pl.DataFrame:
        y = batch.get_column(nm.RESPONSE).to_numpy()
        w = batch.get_column(nm.WEIGHT).to_numpy()
        segment = batch.get_column(_SEGMENT).to_numpy()
        if _usable(y, w):
            fitted = fit_segments(y, w, segment)
        else:
            fitted = np.full(y.shape, np.nan)
        fresh = np.ones(y.size, dtype=bool)  # the first point of a block
        fresh[1:] = (fitted[1:] != fitted[:-1]) | (segment[1:] != segment[:-1])
        run = np.cumsum(fresh)
        starts = segment_starts(segment)
        block = run - np.repeat(run[starts], np.diff(np.append(starts, y.size))) + 1
        return batch.with_columns(
            pl.Series(_FIT, fitted, dtype=pl.Float64),
            pl.Series(_BLOCK, block, dtype=pl.Int64),
        )

    # Cached: the decomposition reads the fitted points in several branches.
    return points.map_batches(fit, schema=schema, **_NO_PUSHDOWN).cache()


def _totals(frame: pl.LazyFrame, keys: list[str], terms: dict[str, pl.Expr]) -> pl.LazyFrame:
    """Per group, the sum of every term, as a column of that name; one row per group.

    The rows of each group must be contiguous. The sums are differences of
    compensated running sums at the group ends (:mod:`polars_cumdev.method.sums`),
    taken in row order: accurate, and the same bits on every run and engine.
    """
    running = {f"{nm.PREFIX}sum_{name}": term for name, term in terms.items()}
    ends = with_running_sums(frame, running).filter(boundary(keys, -1))
    return ends.select(
        *keys, *(run_total(column).alias(name) for column, name in zip(running, terms, strict=True))
    )


def _attach(frame: pl.LazyFrame, table: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``frame`` with the columns of the per-group ``table``, rows kept in order."""
    if keys:
        return frame.join(table, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return frame.join(table, how="cross", maintain_order="left")


@entry_point("score", "response", "weight", "by")
def corp(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    by: Column | Sequence[Column] | None = None,
) -> pl.LazyFrame:
    """Mean Brier score and its CORP decomposition, overall or per group.

    The isotonic (PAV) recalibration of the forecasts is fitted to every
    group (ties merged into one point first, method.md 1.1), all groups in
    one call; the mean Brier score S then splits into miscalibration,
    discrimination and uncertainty, S = MCB - DSC + UNC (Dimitriadis,
    Gneiting and Jordan, PNAS 2021, the CORP score decomposition; see the
    module docstring for the formulas used).

    Parameters
    ----------
    frame
        DataFrame or LazyFrame of predictions.
    score
        Predicted probabilities in [0, 1].
    response
        Observed outcomes in [0, 1] (0/1 labels, or soft labels).
    weight
        Optional positive weights; every mean below is weighted.
    by
        Optional grouping column(s): one row per group, computed in one
        query.

    Returns
    -------
    pl.LazyFrame
        One row per group, the most miscalibrated first (largest ``mcb``,
        then the ``by`` columns; CORP gives no p-value, so MCB takes the
        place of the z or p that ranks the other per-group results): ``n`` (rows),
        ``n_scores`` (distinct scores), ``weight`` (total), ``base_rate``
        (the weighted mean outcome r-bar), ``brier`` (S, the weighted mean of
        (score - outcome)^2), ``mcb`` (S - S_C, with S_C the score of the
        recalibrated forecasts), ``dsc`` (S_R - S_C, with S_R the score of
        the constant forecast r-bar), ``unc`` (S_R) and ``blocks`` (steps of
        the fitted function).

    Raises
    ------
    CumdevError
        At once for a bad column or argument; when collected for unusable
        values (nulls, NaN, scores or outcomes outside [0, 1], weights <= 0).
    """
    prepared = _prepare(frame, score, response, weight, by)
    keys = prepared.keys
    checked, scale = rescale(prepared.gated())  # weights scaled by a power of two (ratios kept)
    ordered = sort_by_score(checked)  # one sort, for the points and the rows
    points = _fitted(keys, ordered)
    x, fit = pl.col(nm.SCORE), pl.col(_FIT)
    w, r = pl.col(nm.WEIGHT), pl.col(nm.RESPONSE)
    base = pl.col("base_rate")
    counts = [
        pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
        pl.len().cast(pl.Int64).alias("n_scores"),
        pl.col(_BLOCK).max().cast(pl.Int64).alias("blocks"),
    ]
    counted = points.group_by(keys).agg(counts) if keys else points.select(counts)
    first = _totals(
        points, keys, {"weight": w, "wr": w * r, "mcb": w * (x - fit) * (x + fit - 2.0 * r)}
    ).with_columns((pl.col("wr") / pl.col("weight")).alias("base_rate"))
    rates = first.select(*keys, base)
    spread = _totals(_attach(points, rates, keys), keys, {"dsc": w * (fit - base) ** 2})
    rows = _attach(group_rows(ordered, keys), rates, keys)
    scores = _totals(
        rows, keys, {"row_weight": w, "brier": w * (x - r) ** 2, "unc": w * (r - base) ** 2}
    )
    out = first
    for table in (counted, spread, scores):
        out = _attach(out, table, keys)
    out = out.join(scale, how="cross").with_columns(
        pl.col("weight") / pl.col(SCALE),
        pl.col("mcb", "dsc") / pl.col("weight"),
        pl.col("brier", "unc") / pl.col("row_weight"),
    )
    if keys:  # the most miscalibrated group first, as every per-group result ranks
        out = out.sort(["mcb", *keys], descending=[True] + [False] * len(keys), nulls_last=True)
    return prepared.guarded(out.select(*keys, *CORP_COLUMNS))


# --------------------------------------------------------------------------
# The curve and its consistency band
# --------------------------------------------------------------------------


def _band(
    checked: pl.LazyFrame, keys: list[str], resamples: int, level: float, seed: int
) -> pl.LazyFrame:
    """Per point (``_POINT`` = 0, 1, ... in the order of the merged points): lower and upper.

    The rows of each group are sorted by score and weight, and each run of
    equal (group, score, weight) becomes one class with its row count; the
    classes, in that order, feed :func:`polars_cumdev.corp.isotonic.consistency_band`.
    Sorting by value makes the draws independent of the order of the rows.
    """
    rows = checked.select(*keys, nm.SCORE, nm.WEIGHT).sort(
        [*keys, nm.SCORE, nm.WEIGHT], nulls_last=True
    )
    classes = (
        rows.with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias(_COUNT),
            (boundary([*keys, nm.SCORE], 1).cum_sum() - 1).cast(pl.Int64).alias(_POINT),
            (boundary(keys, 1).cum_sum() - 1).cast(pl.Int64).alias(_SEGMENT),
        )
        .filter(boundary([*keys, nm.SCORE, nm.WEIGHT], -1))
        .with_columns(pl.col(_COUNT) - pl.col(_COUNT).shift(1, fill_value=0))
        .select(nm.SCORE, nm.WEIGHT, _COUNT, _POINT, _SEGMENT)
    )
    schema = {_POINT: pl.Int64, _LOWER: pl.Float64, _UPPER: pl.Float64}

    def draw(batch: pl.DataFrame) -> pl.DataFrame:
        x = batch.get_column(nm.SCORE).to_numpy()
        v = batch.get_column(nm.WEIGHT).to_numpy()
        point = batch.get_column(_POINT).to_numpy()
        points = int(point[-1]) + 1 if point.size else 0
        if _usable(x, v):
            lower, upper = consistency_band(
                x,
                v,
                batch.get_column(_COUNT).to_numpy(),
                point,
                batch.get_column(_SEGMENT).to_numpy(),
                resamples=resamples,
                level=level,
                seed=seed,
            )
        else:
            lower = upper = np.full(points, np.nan)
        return pl.DataFrame(
            {_POINT: np.arange(points, dtype=np.int64), _LOWER: lower, _UPPER: upper},
            schema=schema,
        )

    return classes.map_batches(draw, schema=schema, **_NO_PUSHDOWN)


@entry_point("score", "response", "weight", "by")
def corp_curve(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    by: Column | Sequence[Column] | None = None,
    resamples: int = 100,
    level: float = 0.9,
    seed: int = 0,
) -> pl.LazyFrame:
    """The CORP reliability diagram as a tidy frame: the isotonic fit and its consistency band.

    One row per distinct score (ties merged, method.md 1.1) of each group:
    the isotonic (PAV) recalibration of the forecasts at that score, and the
    band within which that recalibration would fall, with probability
    ``level`` at that score, if the forecasts were calibrated. The band comes
    from ``resamples`` resamples: the outcomes are redrawn as Bernoulli(score)
    with the scores and weights as observed, every group is refitted, and the
    pointwise quantiles at (1 - level) / 2 and (1 + level) / 2 are taken
    (Dimitriadis, Gneiting and Jordan, PNAS 2021, consistency bands; unlike
    the R package ``reliabilitydiag``, the scores are kept as observed rather
    than resampled with replacement, so the band is conditional on them).
    :func:`polars_cumdev.charts.corp` draws the frame; :func:`corp` gives the
    matching decomposition of the Brier score.

    Parameters
    ----------
    frame, score, response, weight, by
        As in :func:`corp`; with ``by`` the frame holds every group's curve,
        fitted in one query.
    resamples
        Number of resamples for the band (0: no band, ``lower`` and
        ``upper`` null).
    level
        Pointwise coverage of the band, in (0, 1).
    seed
        Seed of the random draws (``numpy.random.default_rng``). The draws
        are taken group after group in the order of the ``by`` columns, so
        a group's band depends on the seed and on the groups before it; the
        fit does not.

    Returns
    -------
    pl.LazyFrame
        The ``by`` columns, then ``score`` (a distinct score), ``fitted``
        (the recalibrated probability there), ``response_mean`` (weighted
        mean outcome of the rows with that score), ``weight`` (their total
        weight), ``rows``, ``block`` (1, 2, ...: which step of the fitted
        function the score is on), ``lower`` and ``upper`` (the band),
        ``level`` and ``resamples`` (the same on every row). Sorted by the
        ``by`` columns and ``score``.

    Raises
    ------
    InvalidParameterError
        At once, for a bad ``resamples``, ``level`` or ``seed``.
    CumdevError
        As :func:`corp`.
    """
    resamples = _check_int(resamples, "resamples", 0)
    level = _check_level(level)
    seed = _check_int(seed, "seed", 0)
    prepared = _prepare(frame, score, response, weight, by)
    keys = prepared.keys
    checked, scale = rescale(prepared.gated())
    points = _fitted(keys, sort_by_score(checked))
    points = points.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias(_POINT))
    if resamples > 0:
        band = _band(checked, keys, resamples, level, seed)
        points = points.join(band, on=_POINT, how="left", maintain_order="left")
    else:
        points = points.with_columns(
            pl.lit(None, dtype=pl.Float64).alias(c) for c in (_LOWER, _UPPER)
        )
    out = points.join(scale, how="cross", maintain_order="left").select(
        *keys,
        pl.col(nm.SCORE).alias("score"),
        pl.col(_FIT).alias("fitted"),
        pl.col(nm.RESPONSE).alias("response_mean"),
        (pl.col(nm.WEIGHT) / pl.col(SCALE)).alias("weight"),
        pl.col(nm.ROWS).cast(pl.Int64).alias("rows"),
        pl.col(_BLOCK).alias("block"),
        pl.col(_LOWER).alias("lower"),
        pl.col(_UPPER).alias("upper"),
        pl.lit(level if resamples > 0 else None, dtype=pl.Float64).alias("level"),
        pl.lit(resamples, dtype=pl.Int64).alias("resamples"),
    )
    return prepared.guarded(out)
