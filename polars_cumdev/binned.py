"""Binned summaries: reliability diagrams and expected calibration errors (method.md 3).

These are the classical, *binned* counterparts of the cumulative statistics
elsewhere in the package. They are here so that the two can be put side by
side; the papers' point is that the binned summaries depend on a choice of
bins (see :func:`ece_sweep`) while the cumulative ones do not.

Reliability diagrams follow Remark 4 of the subpopulation paper: per bin, the
weighted average of the scores, X_k of (36) and Xt_k of (37), against the
weighted average of the responses, Y_k of (34) and Yt_k of (35), for the
subpopulation and for the full population, each binned on its own. The
expected calibration errors are the Riemann sums (3) (ECE2) and (4) (ECE1) of
``ece-versus-ecce.md``.

Three binnings are offered, all applied to the rows of one population (or
group) in increasing order of score:

``"equispaced"``
    l intervals of equal width; bin j is (e_j, e_{j+1}] with
    e_j = lo + (hi - lo) j / l, except that the first bin is closed below and,
    as in the papers' convention B_0 = -inf and B_l = +inf, unbounded on the
    outer sides. [lo, hi] is [0, 1] for probabilities, else the range of the
    scores being binned.
``"equal_count"``
    l bins of q = max(floor(n / l), 1) consecutive rows each, the last bin
    taking the remainder.
``"equal_error"``
    Remark 5: bins over which ||W||_2 / ||W||_1, equation (38) or (39), is
    about the target U of equation (40).

Empty bins are dropped, never returned as NaN.

Ordering and ties. Within a population the rows are put in increasing order
of (score, response, weight). Rows equal in all three are interchangeable, so
every result is independent of the order of the input rows. Equal-count and
equal-error bins are made of *rows* (method.md 3), so rows sharing a score may
straddle the boundary between two bins; they are then split by response and
weight, deterministically.

Reproducibility. Floating-point sums are accumulated in that sorted order
(never in an engine-dependent order), and the only randomness, the
permutation of (40) and the bootstrap draws, comes from
``numpy.random.default_rng(seed)``: the same call gives the same bits.

Where the work is done. Equispaced and equal-count bins are Polars
expressions over the lazy frame. Equal-error bins need a sequential scan
(each bin starts where the previous one stopped), done in NumPy inside
:meth:`polars.LazyFrame.map_batches`, as are the bootstrap resamples, whose
random draws are NumPy's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.errors import InvalidParameterError
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
from polars_cumdev.statistics import verdict
from polars_cumdev.weights import SCALE, rescale

__all__ = [
    "BINNINGS",
    "DEFAULT_SWEEP",
    "ECE_COLUMNS",
    "RELIABILITY_COLUMNS",
    "WEIGHTINGS",
    "ece",
    "ece_sweep",
    "equal_error_labels",
    "reliability",
]

#: Accepted values of ``binning``.
BINNINGS = ("equispaced", "equal_count", "equal_error")
#: Accepted values of ``weighting`` in :func:`ece`.
WEIGHTINGS = ("width", "count")
#: Columns of :func:`reliability`, in order.
RELIABILITY_COLUMNS = (
    "population",
    "bin",
    "score_mean",
    "response_mean",
    "weight",
    "count",
    "resample",
)
#: Columns of :func:`ece` after the ``by`` columns, in order.
ECE_COLUMNS = ("n", "bins", "ece1", "ece2", "binning", "weighting")
#: Default numbers of bins of :func:`ece_sweep`: 2, 4, ..., 100.
DEFAULT_SWEEP = tuple(range(2, 101, 2))

_BIN = f"{nm.PREFIX}bin"
_ROW = f"{nm.PREFIX}row"  # position of the row in its population's sorted order
_POP = f"{nm.PREFIX}population"  # 0: the subpopulation, 1: the full population
_RESAMPLE = f"{nm.PREFIX}resample"
_FIRST = f"{nm.PREFIX}first"
_SUM_WS = f"{nm.PREFIX}sum_ws"
_SUM_WR = f"{nm.PREFIX}sum_wr"
_WIDTH = f"{nm.PREFIX}width"
_GAP = f"{nm.PREFIX}gap"
_LO = f"{nm.PREFIX}lo"
_SPAN = f"{nm.PREFIX}span"
_SUBPOPULATION, _FULL = 0, 1


# --------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------


def _check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidParameterError(f"`{name}` must be an int >= {minimum}, got {value!r}")
    if value < minimum:
        raise InvalidParameterError(f"`{name}` must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_bins(bins: object) -> int:
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise InvalidParameterError(f"`bins` must be a positive int, got {bins!r}")
    return int(bins)


def _check_choice(value: object, name: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        choices = ", ".join(repr(option) for option in options)
        raise InvalidParameterError(f"`{name}` must be one of {choices}; got {value!r}")
    return value


def _unit_checks(score: str, response: str, reason: str) -> list[Check]:
    """Checks that scores and responses are probabilities, i.e. lie in [0, 1]."""
    checks = []
    for column, what in ((score, "score"), (response, "response")):
        values = pl.col(column).cast(pl.Float64)
        checks.append(
            Check(
                ((values < 0.0) | (values > 1.0)).sum(),
                f"{what} column {column!r} has {{count}} value(s) outside [0, 1] among "
                f"{{rows}} rows; {reason}",
            )
        )
    return checks


# --------------------------------------------------------------------------
# Bins
# --------------------------------------------------------------------------


def _sorted(frame: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Rows in increasing order of (keys, score, response, weight), with their rank in the group."""
    return frame.sort([*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT]).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).over(keys).alias(_ROW)
    )


def _equispaced(frame: pl.LazyFrame, keys: Sequence[str], bins: int, unit: bool) -> pl.LazyFrame:
    """Add the index j of the equispaced bin (e_j, e_{j+1}] holding each row's score.

    The estimate ceil((s - lo) / (hi - lo) l) - 1 can be one off when s is
    (nearly) on an edge; one step down and one step up against the edges
    e_k = lo + (hi - lo) k / l, computed exactly as documented, settle it.
    When every score is the same (hi = lo) there is a single bin, 0. Done in
    a few steps so that no sub-expression is repeated in the plan.
    """
    s = pl.col(nm.SCORE)
    lo, span = pl.col(_LO), pl.col(_SPAN)
    if unit:
        bounds = [pl.lit(0.0).alias(_LO), pl.lit(1.0).alias(_SPAN)]
    else:
        low = s.min().over(keys)
        bounds = [low.alias(_LO), (s.max().over(keys) - low).alias(_SPAN)]

    def edge(k: pl.Expr) -> pl.Expr:
        # Polars divides by a scalar as a product with its reciprocal, which
        # can land one unit in the last place away from span * k / l; a
        # divisor that is a column keeps the true division of the spec.
        k = k.cast(pl.Float64)
        return lo + span * k / (k * 0.0 + bins)

    scaled = pl.when(span > 0).then((s - lo) / span * bins).otherwise(0.0)
    # Non-strict cast: a NaN score (rejected by the checks) must not fail first.
    whole = scaled.clip(0.0, float(bins)).ceil().cast(pl.Int64, strict=False).fill_null(1)
    guess = (whole - 1).clip(0, bins - 1)
    down = pl.col(_BIN) - ((pl.col(_BIN) >= 1) & (s <= edge(pl.col(_BIN)))).cast(pl.Int64)
    up = pl.col(_BIN) + ((pl.col(_BIN) <= bins - 2) & (s > edge(pl.col(_BIN) + 1))).cast(pl.Int64)
    return (
        frame.with_columns(bounds)
        .with_columns(guess.alias(_BIN))
        .with_columns(down.alias(_BIN))
        .with_columns(up.alias(_BIN))
        .drop(_LO, _SPAN)
    )


def _equal_count(keys: Sequence[str], bins: int) -> pl.Expr:
    """Index of the equal-count bin: row r of n goes to min(r // q, l - 1), q = max(n // l, 1)."""
    size = (pl.len().over(keys).cast(pl.Int64) // bins).clip(lower_bound=1)
    return (pl.col(_ROW) // size).clip(upper_bound=bins - 1)


def _first_fit(weights: np.ndarray, start: int, target: float, hint: int) -> int:
    """End (exclusive) of the shortest run of rows from ``start`` with ||W||_2/||W||_1 <= target.

    The running sums restart at ``start`` and are accumulated left to right
    (``np.cumsum``), exactly as a row-by-row loop would; the window searched
    doubles until a fit is found or the rows run out (then ``len(weights)``).
    """
    n = weights.size
    window = max(2 * hint, 2)
    while True:
        end = min(n, start + window)
        chunk = weights[start:end]
        with np.errstate(divide="ignore", invalid="ignore"):  # bad weights fail the checks
            ratio = np.sqrt(np.cumsum(chunk * chunk)) / np.cumsum(chunk)
        fits = np.flatnonzero(ratio <= target)
        if fits.size:
            return start + int(fits[0]) + 1
        if end == n:
            return n
        window *= 2


def equal_error_labels(weights: np.ndarray, bins: int, seed: int = 0) -> np.ndarray:
    """Equal-error bins of Remark 5 for weights in increasing order of score.

    The target is equation (40), U = sqrt(sum W_p^2) / sum W_p over the first
    q = max(floor(n / l), 1) weights of the permutation
    ``numpy.random.default_rng(seed).permutation(n)`` (the sums accumulated in
    that order). Bins 0, 1, ..., l - 2 each grow row by row from their first
    row until their ratio (38) is <= U; bin l - 1 takes every row left (the
    paper's B_l = +inf). If the last bin then holds fewer than half as many
    rows as the bin before it, the two are merged. With equal weights the
    ratio of k rows is 1 / sqrt(k), every bin but the last gets exactly q rows
    and the result is the equal-count binning.

    This is a sequential scan: where a bin ends depends on where the previous
    one ended, and the ratio of a run is not monotone in its length, so the
    boundaries are no closed-form function of prefix sums. It runs in NumPy,
    in time linear in n plus a Python step per bin.

    Parameters
    ----------
    weights
        Positive weights, in the order of the rows to be binned.
    bins
        The desired number of bins, l-bar in (40).
    seed
        Seed of the permutation.

    Returns
    -------
    numpy.ndarray
        Int64 bin index of every row, 0, 1, ... without gaps.
    """
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.size
    labels = np.zeros(n, dtype=np.int64)
    if n == 0:
        return labels
    size = max(n // bins, 1)
    sample = weights[np.random.default_rng(seed).permutation(n)[:size]]
    with np.errstate(divide="ignore", invalid="ignore"):  # bad weights fail the checks
        target = np.sqrt(np.cumsum(sample * sample)[-1]) / np.cumsum(sample)[-1]
    starts = []
    start = 0
    while start < n:
        starts.append(start)
        stop = n if len(starts) == bins else _first_fit(weights, start, target, size)
        labels[start:stop] = len(starts) - 1
        start = stop
    if len(starts) >= 2:
        last = n - starts[-1]
        before = starts[-1] - starts[-2]
        if 2 * last < before:
            labels[starts[-1] :] = len(starts) - 2
    return labels


def _equal_error(frame: pl.LazyFrame, keys: Sequence[str], bins: int, seed: int) -> pl.LazyFrame:
    """Attach equal-error bins; each group (contiguous, sorted) is scanned on its own."""
    schema = dict(schema_of(frame))
    schema[_BIN] = pl.Int64

    def label(batch: pl.DataFrame) -> pl.DataFrame:
        weights = batch.get_column(nm.WEIGHT).to_numpy()
        starts = np.flatnonzero(batch.get_column(_ROW).to_numpy() == 0).tolist()
        labels = np.zeros(batch.height, dtype=np.int64)
        for begin, end in zip(starts, [*starts[1:], batch.height][: len(starts)], strict=True):
            labels[begin:end] = equal_error_labels(weights[begin:end], bins, seed)
        return batch.with_columns(pl.Series(_BIN, labels, dtype=pl.Int64))

    return frame.map_batches(label, schema=schema)


def _assign(
    ordered: pl.LazyFrame,
    keys: Sequence[str],
    bins: int,
    binning: str,
    *,
    unit: bool,
    seed: int,
) -> pl.LazyFrame:
    """Add the bin index ``_BIN`` to rows sorted by :func:`_sorted`."""
    if binning == "equispaced":
        return _equispaced(ordered, keys, bins, unit)
    if binning == "equal_count":
        return ordered.with_columns(_equal_count(keys, bins).alias(_BIN))
    return _equal_error(ordered, keys, bins, seed)


def _fsum(values: pl.Expr) -> pl.Expr:
    """Sum of floats, bit for bit reproducible.

    A plain ``sum`` in a group-by may add partial sums in an order that
    changes from run to run (the streaming engine works on morsels in
    parallel). A running sum adds the values one by one in the order of the
    rows, which Polars keeps within each group; the rows come sorted by
    (score, response, weight), so a call gives the same bits every time,
    whatever the order of the input rows.
    """
    return values.cum_sum().last()


def _bin_sums(binned: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Per (keys, bin): sum W, sum W S, sum W R, rows and first score; sorted by keys and bin.

    Only bins holding rows appear, so empty bins are dropped here.
    """
    w = pl.col(nm.WEIGHT)
    return (
        binned.group_by([*keys, _BIN])
        .agg(
            _fsum(w).alias(nm.WEIGHT),
            _fsum(w * pl.col(nm.SCORE)).alias(_SUM_WS),
            _fsum(w * pl.col(nm.RESPONSE)).alias(_SUM_WR),
            pl.len().cast(pl.Int64).alias(nm.ROWS),
            pl.col(nm.SCORE).min().alias(_FIRST),
        )
        .sort([*keys, _BIN])
    )


def _means() -> list[pl.Expr]:
    """Weighted averages of score, (36)-(37), and response, (34)-(35), from :func:`_bin_sums`."""
    return [
        (pl.col(_SUM_WS) / pl.col(nm.WEIGHT)).alias("score_mean"),
        (pl.col(_SUM_WR) / pl.col(nm.WEIGHT)).alias("response_mean"),
    ]


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


def reliability(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    subpop: pl.Expr | str | None = None,
    bins: int = 10,
    binning: str = "equispaced",
    seed: int = 0,
    resamples: int = 0,
    calibration: bool = False,
) -> pl.LazyFrame:
    """Points of a reliability diagram: binned weighted averages, equations (34)-(37).

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
        prepared.checks += mask_checks(mask, f"subpop {subpop}")
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


# --------------------------------------------------------------------------
# Expected calibration errors
# --------------------------------------------------------------------------


def _prepare_probabilities(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None,
    by: str | Sequence[str] | None,
    reserved: Sequence[str],
) -> tuple[Prepared, pl.LazyFrame, list[str]]:
    """Prepare for the ECEs: values in [0, 1]; a constant key when there is no ``by``."""
    prepared = prepare(
        frame, score=score, response=response, weight=weight, by=by, reserved=reserved
    )
    prepared.checks += _unit_checks(
        score, response, "the ECEs need probabilities (scores and responses in [0, 1])"
    )
    rows, _ = rescale(prepared.gated())
    if prepared.keys:
        return prepared, rows, list(prepared.keys)
    return prepared, rows.with_columns(pl.lit(0).alias(nm.GROUP)), [nm.GROUP]


def _ece(
    ordered: pl.LazyFrame,
    keys: list[str],
    bins: int,
    binning: str,
    weighting: str,
    seed: int,
) -> pl.LazyFrame:
    """ECE1 and ECE2 of every group, (3)-(4), for one number of bins."""
    sums = _bin_sums(_assign(ordered, keys, bins, binning, unit=True, seed=seed), keys)
    gap = (pl.col(_SUM_WR) - pl.col(_SUM_WS)) / pl.col(nm.WEIGHT)  # Rbar_j - Sbar_j
    if weighting == "count":
        width = pl.col(nm.WEIGHT) / _fsum(pl.col(nm.WEIGHT)).over(keys)
    elif binning == "equispaced":
        width = pl.lit(1.0 / bins)
    else:
        # S^1_{j+1} - S^1_j, with S^1_{m+1} = 1 after the last non-empty bin.
        width = pl.col(_FIRST).shift(-1).over(keys).fill_null(1.0) - pl.col(_FIRST)
    return (
        sums.with_columns(width.alias(_WIDTH), gap.alias(_GAP))
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
            pl.len().cast(pl.Int64).alias("bins"),
            _fsum(pl.col(_WIDTH) * pl.col(_GAP).abs()).alias("ece1"),
            _fsum(pl.col(_WIDTH) * pl.col(_GAP) ** 2).alias("ece2"),
        )
        .with_columns(pl.lit(binning).alias("binning"), pl.lit(weighting).alias("weighting"))
    )


def ece(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    bins: int = 10,
    binning: str = "equispaced",
    weighting: str = "width",
    by: str | Sequence[str] | None = None,
    seed: int = 0,
) -> pl.LazyFrame:
    """Expected calibration errors ECE1 and ECE2, equations (4) and (3) of ``ece-versus-ecce.md``.

    With Rbar_j and Sbar_j the weighted averages of the responses and scores
    in bin j (as in (34) and (36) of the subpopulation paper),

        ECE1 = sum_j width_j |Rbar_j - Sbar_j|,
        ECE2 = sum_j width_j (Rbar_j - Sbar_j)^2,

    summed over the non-empty bins. ``weighting="width"`` is the papers'
    Riemann sum: width_j = 1/l for equispaced bins (which partition [0, 1]);
    for equal-count and equal-error bins width_j = S^1_{j+1} - S^1_j, the
    first (smallest) score of the next non-empty bin minus that of bin j,
    with S^1 = 1 after the last bin. ``weighting="count"`` is the convention
    most used in machine learning: width_j is bin j's share of the total
    weight (its share of the rows when unweighted). Either way the value
    depends on the number of bins (see :func:`ece_sweep`), unlike the ECCEs.

    Parameters
    ----------
    frame
        The data, DataFrame or LazyFrame.
    score, response, weight
        Column names; scores are predicted probabilities and responses lie in
        [0, 1] (checked). ``weight=None`` weights rows equally.
    bins
        The number l of bins, a positive int.
    binning
        ``"equispaced"``, ``"equal_count"`` or ``"equal_error"``, as in
        :func:`reliability` with ``calibration=True``.
    weighting
        ``"width"`` (bin widths, the papers' (3)-(4)) or ``"count"`` (bin
        weight shares).
    by
        Optional grouping column(s): one row per group, all groups computed
        in the same query, each binned on its own.
    seed
        Seed of the permutation of (40) for ``"equal_error"``.

    Returns
    -------
    pl.LazyFrame
        One row (per group, sorted by the ``by`` columns): the ``by`` columns,
        ``n`` (rows), ``bins`` (non-empty bins used), ``ece1``, ``ece2``,
        ``binning`` and ``weighting``.

    Raises
    ------
    InvalidParameterError
        At once, for a bad ``bins``, ``binning``, ``weighting`` or ``seed``.
    InvalidValuesError
        On collection, for scores or responses outside [0, 1] and the other
        value problems of :func:`polars_cumdev.prepare.prepare`.
    """
    bins = _check_bins(bins)
    binning = _check_choice(binning, "binning", BINNINGS)
    weighting = _check_choice(weighting, "weighting", WEIGHTINGS)
    seed = _check_int(seed, "seed", 0)
    prepared, data, keys = _prepare_probabilities(frame, score, response, weight, by, ECE_COLUMNS)
    result = _ece(_sorted(data, keys), keys, bins, binning, weighting, seed)
    if prepared.keys:
        result = result.sort(prepared.keys, nulls_last=False, maintain_order=True)
    return prepared.guarded(_finish(result, prepared.keys, ECE_COLUMNS))


def _finish(result: pl.LazyFrame, keys: Sequence[str], columns: Sequence[str]) -> pl.LazyFrame:
    """The public columns, ``by`` columns first (the constant key is dropped)."""
    return result.select(*keys, *columns)


def ece_sweep(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    bins: Sequence[int] = DEFAULT_SWEEP,
    binning: str = "equispaced",
    weighting: str = "width",
    by: str | Sequence[str] | None = None,
    seed: int = 0,
) -> pl.LazyFrame:
    """ECE1 and ECE2 for each of several numbers of bins.

    The point the papers make: the ECEs of (3)-(4) move with the number of
    bins, sometimes a lot, so a single ECE says little without its binning,
    whereas the cumulative ECCEs have no such parameter. One lazy query per
    number of bins, concatenated; the data are prepared and sorted once.

    Parameters
    ----------
    frame, score, response, weight, binning, weighting, by, seed
        As in :func:`ece`.
    bins
        The numbers of bins, positive ints (default 2, 4, ..., 100).

    Returns
    -------
    pl.LazyFrame
        One row per number of bins (per group with ``by``), in the order
        given: the ``by`` columns, ``requested`` (l), then the columns of
        :func:`ece` (``bins`` being the non-empty bins actually used).
    """
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool):
        bins = [int(bins)]
    if isinstance(bins, str) or not isinstance(bins, Sequence | np.ndarray) or len(bins) == 0:
        raise InvalidParameterError(
            f"`bins` must be a non-empty sequence of positive ints, got {bins!r}"
        )
    counts = [_check_bins(value) for value in bins]
    binning = _check_choice(binning, "binning", BINNINGS)
    weighting = _check_choice(weighting, "weighting", WEIGHTINGS)
    seed = _check_int(seed, "seed", 0)
    reserved = ("requested", *ECE_COLUMNS)
    prepared, data, keys = _prepare_probabilities(frame, score, response, weight, by, reserved)
    ordered = _sorted(data, keys)
    parts = [
        _ece(ordered, keys, count, binning, weighting, seed).with_columns(
            pl.lit(count, dtype=pl.Int64).alias("requested")
        )
        for count in counts
    ]
    return prepared.guarded(_finish(pl.concat(parts), prepared.keys, reserved))
