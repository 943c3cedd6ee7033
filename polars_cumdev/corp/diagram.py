"""The CORP reliability diagram: each group's isotonic fit and its consistency band, tidy.

The fit is the one of :func:`polars_cumdev.corp.decomposition.corp` (T. Dimitriadis,
T. Gneiting and A. I. Jordan, PNAS 118 (2021) e2016191118, section 2); the band
redraws the responses as Bernoulli(score), refits every group and takes
pointwise quantiles (their section 3.2;
:func:`polars_cumdev.corp.isotonic.consistency_band`). :func:`polars_cumdev.charts.corp`
draws the frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.corp.decomposition import (
    _BLOCK,
    _FIT,
    _NO_PUSHDOWN,
    _SEGMENT,
    CORP_CURVE_COLUMNS,
    _check_int,
    _check_level,
    _fitted,
    _prepare,
    _usable,
)
from polars_cumdev.corp.isotonic import consistency_band
from polars_cumdev.method import _names as nm
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.prepare import FrameLike
from polars_cumdev.method.sums import boundary
from polars_cumdev.method.ties import sort_by_score
from polars_cumdev.method.weights import SCALE, rescale

__all__ = ["CORP_CURVE_COLUMNS", "corp_curve"]

_POINT = f"{nm.PREFIX}point"
_COUNT = f"{nm.PREFIX}count"
_LOWER = f"{nm.PREFIX}lower"
_UPPER = f"{nm.PREFIX}upper"

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
