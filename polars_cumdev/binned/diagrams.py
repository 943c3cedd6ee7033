"""Reliability diagrams: per bin, the averages (34)-(37) of both populations, with bootstrap.

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population".
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.binned.binnings import _assign, _bin_sums, _means, _sorted
from polars_cumdev.binned.options import (
    _BIN,
    _FULL,
    _POP,
    _RESAMPLE,
    _SUBPOPULATION,
    _SUM_WR,
    _SUM_WS,
    BINNINGS,
    _check_bins,
    _check_choice,
    _check_int,
    _unit_checks,
)
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.groups import selection_label
from polars_cumdev.method.masks import mask_checks, resolve_mask
from polars_cumdev.method.prepare import (
    FrameLike,
    as_lazy,
    prepare,
)
from polars_cumdev.method.statistics import verdict
from polars_cumdev.method.weights import SCALE, rescale

# --------------------------------------------------------------------------
# Reliability diagrams
# --------------------------------------------------------------------------


def _bootstrap(binned: pl.LazyFrame, resamples: int, seed: int) -> pl.LazyFrame:
    """Bin sums of ``resamples`` bootstrap resamples of each population.

    A resample draws n row positions uniformly with replacement,
    ``rng.integers(0, n, size=n)``, with one ``rng = numpy.random.default_rng(seed)``
    for the whole call: all resamples of the full population first, then
    those of the subpopulation, so the full population's resamples do not
    depend on ``subpop``. Positions index the rows in sorted order, and each
    drawn row keeps the bin of the observed row it copies: the observed bins
    are reused. The random draws are NumPy's, so the sums are taken there
    too, with ``numpy.bincount`` (sequential, hence reproducible), on the
    sorted and binned rows.
    """
    schema = {
        _POP: pl.Int64,
        _RESAMPLE: pl.Int64,
        _BIN: pl.Int64,
        nm.WEIGHT: pl.Float64,
        _SUM_WS: pl.Float64,
        _SUM_WR: pl.Float64,
        nm.ROWS: pl.Int64,
    }

    def draw(rows: pl.DataFrame) -> pl.DataFrame:
        rng = np.random.default_rng(seed)
        parts = [pl.DataFrame(schema=schema)]
        populations = rows.get_column(_POP).to_numpy()
        # A null bin (from a null score, which the checks reject) must not fail first.
        bins = rows.get_column(_BIN).fill_null(-1).to_numpy()
        values = [rows.get_column(c).to_numpy() for c in (nm.WEIGHT, nm.SCORE, nm.RESPONSE)]
        for population in (_FULL, _SUBPOPULATION):
            chosen = populations == population
            n = int(chosen.sum())
            if n == 0:
                continue
            labels, where = np.unique(bins[chosen], return_inverse=True)
            w, s, r = (column[chosen] for column in values)

            def total(
                x: np.ndarray, where: np.ndarray = where, size: int = labels.size
            ) -> np.ndarray:
                return np.bincount(where, weights=x, minlength=size)  # sums per observed bin

            for resample in range(resamples):
                taken = np.bincount(rng.integers(0, n, size=n), minlength=n)
                with np.errstate(all="ignore"):  # bad values fail the checks
                    wt = w * taken
                    sums = [total(wt), total(wt * s), total(wt * r)]
                count = total(taken.astype(np.float64))
                keep = count > 0
                frame = {
                    _POP: np.full(keep.sum(), population),
                    _RESAMPLE: np.full(keep.sum(), resample),
                    _BIN: labels[keep],
                    nm.WEIGHT: sums[0][keep],
                    _SUM_WS: sums[1][keep],
                    _SUM_WR: sums[2][keep],
                    nm.ROWS: count[keep].round().astype(np.int64),
                }
                parts.append(pl.DataFrame(frame, schema=schema))
        return pl.concat(parts)

    columns = binned.select(_POP, _BIN, nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    return columns.map_batches(draw, schema=schema)


@entry_point("score", "response", "weight")
def reliability(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    subpop: pl.Expr | str | None = None,
    bins: int = 10,
    binning: str = "equispaced",
    seed: int = 0,
    resamples: int = 0,
    calibration: bool = False,
) -> pl.LazyFrame:
    """Points of a reliability diagram: binned weighted averages, equations (34)-(37).

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    The subpopulation (if any) and the full population are binned separately,
    each with its own bins, as in Remark 4 of the subpopulation paper. In bin
    k the abscissa is the weighted average score, X_k of (36) (subpopulation)
    or Xt_k of (37) (full population), and the ordinate the weighted average
    response, Y_k of (34) or Yt_k of (35). Drawn in black (subpopulation) and
    gray (full population), the two curves give the classical picture of how
    the subpopulation deviates; with ``calibration=True`` and no ``subpop``
    the points against the diagonal are the classical calibration plot.

    Parameters
    ----------
    frame
        The full population, DataFrame or LazyFrame.
    score, response, weight
        Column names of S, R and W; ``weight=None`` weights rows equally.
    subpop
        Boolean expression, or name of a boolean column, selecting the
        subpopulation. ``None``: only the full population is binned.
    bins
        The number l of bins (a positive int); for ``"equal_error"`` the
        desired number, l-bar of (40).
    binning
        ``"equispaced"`` (equal widths), ``"equal_count"`` (equal numbers of
        rows) or ``"equal_error"`` (Remark 5: ||W||_2 / ||W||_1, (38)-(39),
        about the same in every bin, with the target U of (40)). See the
        module docstring for the exact rules.
    seed
        Seed of the permutation in (40) (``"equal_error"``) and of the
        bootstrap.
    resamples
        Number of bootstrap resamples (appendix A of the subpopulation paper):
        each draws as many rows as the population has, uniformly with
        replacement, and recomputes the binned averages with the bins of the
        observed data. The paper draws 20.
    calibration
        Scores are probabilities: equispaced bins partition [0, 1] (rather
        than [min, max] of the scores binned), and scores and responses must
        lie in [0, 1].

    Returns
    -------
    pl.LazyFrame
        One row per non-empty bin, population and resample: ``population``
        (``"subpopulation"`` or ``"full"``), ``bin`` (Int64: the 0-based index
        of the bin among the l bins of the binning, kept after empty bins are
        dropped, so the numbers may have gaps; equal-error bins are numbered
        0, 1, ... in order), ``score_mean``, ``response_mean``, ``weight``
        (sum of W in the bin), ``count`` (rows in the bin, counted with
        multiplicity in a resample) and ``resample`` (null for the observed
        data, 0 .. ``resamples`` - 1 for the bootstrap). Sorted by population
        (subpopulation first), resample (observed first) and bin.

    Raises
    ------
    InvalidParameterError
        At once, for a bad ``bins``, ``binning``, ``seed`` or ``resamples``.
    ColumnNotFoundError, ColumnTypeError
        At once, for missing or non-numeric columns or a non-boolean ``subpop``.
    InvalidValuesError, EmptySubpopulationError
        On collection, for nulls, NaN, infinities, non-positive weights,
        values outside [0, 1] with ``calibration=True``, or an empty
        (sub)population.
    """
    bins = _check_bins(bins)
    binning = _check_choice(binning, "binning", BINNINGS)
    seed = _check_int(seed, "seed", 0)
    resamples = _check_int(resamples, "resamples", 0)
    if not isinstance(calibration, bool):
        raise InvalidParameterError(f"`calibration` must be True or False, got {calibration!r}")
    lazy = as_lazy(frame)
    carry: list[pl.Expr] = []
    if subpop is not None:
        mask = resolve_mask(lazy, subpop)
        carry.append(mask.alias(nm.MEMBER))
    prepared = prepare(lazy, score=score, response=response, weight=weight, carry=carry)
    if subpop is not None:
        prepared.checks += mask_checks(mask, selection_label(subpop))
    if calibration:
        prepared.checks += _unit_checks(
            score, response, "calibration=True needs probabilities (scores and responses in [0, 1])"
        )

    rows, scale = rescale(prepared.gated())
    full = rows.with_columns(pl.lit(_FULL, dtype=pl.Int64).alias(_POP))
    if subpop is None:
        stacked = full
    else:
        part = full.filter(pl.col(nm.MEMBER)).with_columns(
            pl.lit(_SUBPOPULATION, dtype=pl.Int64).alias(_POP)
        )
        stacked = pl.concat([part, full]).drop(nm.MEMBER)
    keys = [_POP]
    binned = _assign(_sorted(stacked, keys), keys, bins, binning, unit=calibration, seed=seed)

    observed = _bin_sums(binned, keys).with_columns(pl.lit(None, dtype=pl.Int64).alias(_RESAMPLE))
    pieces = [observed]
    if resamples > 0:
        pieces.append(_bootstrap(binned, resamples, seed))
    columns = [
        pl.col(_POP),
        pl.col(_RESAMPLE),
        pl.col(_BIN),
        pl.col(nm.WEIGHT),
        pl.col(_SUM_WS),
        pl.col(_SUM_WR),
        pl.col(nm.ROWS),
    ]
    stacked_sums = pl.concat([piece.select(columns) for piece in pieces])
    result = (
        stacked_sums.sort([_POP, _RESAMPLE, _BIN], nulls_last=False)
        .join(scale, how="cross", maintain_order="left")
        .select(
            pl.when(pl.col(_POP) == _SUBPOPULATION)
            .then(pl.lit("subpopulation"))
            .otherwise(pl.lit("full"))
            .alias("population"),
            pl.col(_BIN).alias("bin"),
            *_means(),
            (pl.col(nm.WEIGHT) / pl.col(SCALE)).alias("weight"),
            pl.col(nm.ROWS).alias("count"),
            pl.col(_RESAMPLE).alias("resample"),
        )
    )
    checked = ("score_mean", "response_mean", "weight")
    return prepared.guarded(result.filter(verdict(checked, [], prepared.labels)))
