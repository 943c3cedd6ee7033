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

from polars_cumdev.corp.isotonic import fit_segments, segment_starts
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.prepare import FrameLike, Prepared, prepare
from polars_cumdev.method.sums import boundary, run_total, with_running_sums
from polars_cumdev.method.ties import group_rows, merge_ties, sort_by_score
from polars_cumdev.method.weights import SCALE, rescale

__all__ = ["CORP_COLUMNS", "CORP_CURVE_COLUMNS", "corp"]

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
"""Columns of :func:`polars_cumdev.corp.diagram.corp_curve` after the ``by`` columns, in order."""

_UNIT = (0.0, 1.0)
_SEGMENT = f"{nm.PREFIX}segment"
_FIT = f"{nm.PREFIX}fit"
_BLOCK = f"{nm.PREFIX}block"
_NO_PUSHDOWN = {"predicate_pushdown": False, "projection_pushdown": False, "slice_pushdown": False}


# --------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------


def _check_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise InvalidParameterError(f"`{name}` must be an int >= {low}, got {value!r}")
    if value > _MAX_COUNT:
        raise InvalidParameterError(f"`{name}` must be at most {_MAX_COUNT}, got {value!r}")
    return int(value)


_MAX_COUNT = 2**31 - 1  # beyond it Polars' integers overflow


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
