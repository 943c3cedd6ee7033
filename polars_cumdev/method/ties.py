"""Stage 2a: merge rows of a subpopulation that share exactly the same score (method.md 1.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.sums import boundary

__all__ = ["CANONICAL", "group_rows", "merge_ties", "sort_by_score", "tie_points"]

#: The sort order of the rows: by score, ties by weight, then response (see
#: :func:`sort_by_score`).
CANONICAL = [nm.SCORE, nm.WEIGHT, nm.RESPONSE]

_FIRST = f"{nm.PREFIX}first"


def sort_by_score(frame: pl.LazyFrame, extra: Sequence[str] = ()) -> pl.LazyFrame:
    """The one sort of the method: rows in increasing order of score, ties in a canonical order.

    Both :func:`merge_ties` and :func:`polars_cumdev.method.bins.full_population_prefix`
    read rows in this order; sorting once and passing the result to both is
    what keeps a screen near the cost of one sort. The sorted frame is cached,
    so that the query computes it once for both, and so that the optimizer
    does not fold the stable sort by group of :func:`group_rows` into this one
    (a sort by several keys is far slower than the two).

    Rows of equal score are ordered by weight, then response (then the
    ``extra`` responses): every float sum over a tie or a bin then adds the
    same values in the same order whatever the order of the input rows, so
    the results are the same bits (rows equal in all these columns are
    interchangeable in every sum).

    The rows are sorted by the score alone first, and by all the columns of
    the canonical order only when some score repeats: with every score
    distinct (continuous scores) the two orders are the same, and a sort by
    one float column costs Polars about two thirds of a sort by three
    (which, on a frame sorted by score already, costs less than on the
    input).
    """
    order = [*CANONICAL, *extra]

    def ordered(batch: pl.DataFrame) -> pl.DataFrame:
        batch = batch.sort(nm.SCORE)
        scores = batch.get_column(nm.SCORE).to_numpy()
        return batch.sort(order) if bool(np.any(scores[1:] == scores[:-1])) else batch

    # (The schema is kept: no look-up of it.)
    return frame.map_batches(ordered, streamable=False).cache()


def group_rows(
    ordered: pl.LazyFrame, keys: Sequence[str], schema: pl.Schema | None = None
) -> pl.LazyFrame:
    """Rows sorted by score, regrouped so that every group's rows are contiguous.

    A stable sort by the keys alone: each group keeps its rows in increasing
    order of score, and every run of one (keys, score) becomes contiguous.
    Sorting by a few integer-like keys is much cheaper than by the score.

    With ``schema`` (``ordered``'s), a string key is sorted by its
    categorical code instead of its text (a third of the time on the census
    screen's 41 counties): the groups then come in another order, each one's
    rows as they were. For callers whose results do not depend on the order
    of the groups (:func:`merge_ties`); without it the groups are in the
    order of their keys (the CORP bands draw their resamples group after
    group).
    """
    if not keys:
        return ordered
    columns = [
        pl.col(k).cast(pl.Categorical).to_physical()
        if schema is not None and schema[k] in (pl.String, pl.Categorical)
        else pl.col(k)
        for k in keys
    ]
    return ordered.sort(columns, maintain_order=True, nulls_last=True)


def merge_ties(
    frame: pl.LazyFrame,
    keys: Sequence[str] = (),
    *,
    extra: Sequence[str] = (),
    any_group_order: bool = False,
    types: Mapping[str, pl.DataType] | None = None,
    spread: str | None = None,
) -> pl.LazyFrame:
    """Collapse each (group, score) to one point, in increasing order of score per group.

    For the rows of one group sharing a score, the merged point has weight
    W' = sum W, response R' = sum(W R) / sum W and tie factor
    f = sum(W^2) / (sum W)^2 (1 for a score that occurs once). This is the
    deterministic, order-independent treatment of ties of method.md 1.1, in
    place of the random perturbation the papers use.

    The rows are regrouped by :func:`group_rows`, so each tie is a run of
    consecutive rows; its sums are taken directly over the run (NumPy's
    ``add.reduceat`` on the regrouped rows, seen whole), so they are accurate
    relative to the tie itself however large and uneven the weights before
    it are. The rows of a tie come in the canonical order of
    :func:`sort_by_score` and are added in that order by one thread, so the
    sums are the same bits whatever the input's row order, the number of
    Polars threads and the chunks the rows arrive in. (Polars' window sums
    per run, used before, changed their last bit with the number of threads
    for a tie straddling two of the sort's chunks.)
    A score that occurs once keeps its row's own W and R, and a tie whose
    responses are all equal keeps that response, exactly.

    Parameters
    ----------
    frame
        Standardized rows (see :func:`polars_cumdev.method.prepare.prepare`, weights
        rescaled by :func:`polars_cumdev.method.weights.rescale`) sorted by score
        (:func:`sort_by_score`): columns ``keys`` plus ``_names.SCORE``,
        ``_names.RESPONSE``, ``_names.WEIGHT``.
    keys
        Grouping columns; each group is merged separately.
    extra
        Further float64 columns averaged with the weights like ``RESPONSE``
        (the second response of paired samples, :mod:`polars_cumdev.paired`).
    any_group_order
        Whether the groups may come in any order (string keys are then
        regrouped by their categorical codes, :func:`group_rows`); by
        default they come in the order of their keys.
    types
        The dtypes of ``keys`` in ``frame``, when the caller knows them (no
        look-up of ``frame``'s schema, which resolves the whole plan).
    spread
        When given, the name of a further float64 column: each tie's weighted
        mean squared deviation of the response from its average,
        sum W (R - R')^2 / sum W, summed in the tie's row order after R'
        (0 for a single row or a tie of equal responses, exactly); the
        calibration of predicted means reads the noise within ties from it
        (:mod:`polars_cumdev.calibration.targets`).

    Returns
    -------
    pl.LazyFrame
        One row per distinct (keys, score): the keys, ``SCORE``, ``WEIGHT``
        (W'), ``RESPONSE`` (R'), the ``extra`` averages, ``TIE`` (f) and
        ``ROWS`` (rows merged). Each
        group's rows are contiguous and in increasing order of score.
    """
    keys = list(keys)
    tie = [*keys, nm.SCORE]
    averaged = [nm.RESPONSE, *extra]
    if types is None:
        schema = frame.collect_schema()  # (one look-up: each resolves the whole plan)
    else:  # (the other columns are standardized float64s)
        schema = pl.Schema({**{c: pl.Float64() for c in (nm.SCORE, *averaged)}, **types})
    rows = group_rows(frame, keys, schema if any_group_order else None).select(
        *tie, nm.WEIGHT, *averaged, boundary(tie, 1).alias(_FIRST)
    )
    out = {name: schema[name] for name in tie}
    out |= {nm.WEIGHT: pl.Float64(), **{c: pl.Float64() for c in averaged}}
    out |= {nm.TIE: pl.Float64(), nm.ROWS: pl.Int64()}
    if spread is not None:
        out |= {spread: pl.Float64()}

    def merged(batch: pl.DataFrame) -> pl.DataFrame:
        return _merged(batch, tie, averaged, out, spread)

    return rows.map_batches(merged, schema=pl.Schema(out), streamable=False)


def _merged(
    batch: pl.DataFrame,
    tie: Sequence[str],
    averaged: Sequence[str],
    schema: dict,
    spread: str | None = None,
) -> pl.DataFrame:
    """:func:`merge_ties` on the regrouped rows, whole: NumPy sums over each tie, in row order."""
    if batch.height == 0:
        return pl.DataFrame(schema=schema)
    first = batch.get_column(_FIRST).to_numpy()
    w = batch.get_column(nm.WEIGHT).to_numpy()
    values = {name: batch.get_column(name).to_numpy() for name in averaged}
    starts, counts, columns = tie_points(first, w, values)
    if spread is not None:
        columns[spread] = _spread(batch, starts, counts, w, columns)
    # (The keys gathered, not passed through: a key column keeping the sorted flag of the
    # regrouping made a later join lose a group keyed NaN.)
    keys = batch.select(tie)[pl.Series(starts)]
    body = pl.DataFrame({**columns, nm.ROWS: counts.astype(np.int64)})
    return pl.concat([keys, body], how="horizontal").select(list(schema))


def tie_points(
    first: np.ndarray, w: np.ndarray, values: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The arithmetic of :func:`merge_ties` on arrays: rows in order, ``first`` marking each tie.

    ``values`` are the averaged columns (``RESPONSE`` and any other) by name.
    Returns the ties' first rows, their row counts, and the columns ``WEIGHT``
    (W'), the averages and ``TIE`` (f) of the merged points. The one copy of
    the sums, used by the plan (:func:`merge_ties`) and by the calibration of
    a frame in memory (:mod:`polars_cumdev.calibration.in_memory`).
    """
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, w.shape[0]))
    if starts.size == w.shape[0]:  # no tie (continuous scores): every row is its own point
        columns = {nm.WEIGHT: w, **values}
        factor = np.ones(w.shape[0])
    else:
        columns, factor = _tie_sums(first, starts, w, values)
    columns[nm.TIE] = np.where(counts == 1, 1.0, factor)
    return starts, counts, columns


def _tie_sums(
    first: np.ndarray,
    starts: np.ndarray,
    w: np.ndarray,
    averaged: Mapping[str, np.ndarray],
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """W', the averages R' (and ``averaged``'s others) and the tie factors, summed over each tie."""
    sw = np.add.reduceat(w, starts)
    columns = {nm.WEIGHT: sw}
    for name, values in averaged.items():
        # No change of response inside a tie (after its first row): the tie keeps
        # its first row's response exactly.
        changed = np.zeros(w.shape[0], dtype=bool)
        np.not_equal(values[1:], values[:-1], out=changed[1:])
        changed[first] = False
        same = ~np.logical_or.reduceat(changed, starts)
        with np.errstate(invalid="ignore", over="ignore"):
            mean = np.add.reduceat(w * values, starts) / sw
        columns[name] = np.where(same, values[starts], mean)
    with np.errstate(invalid="ignore", over="ignore"):
        factor = np.add.reduceat(w * w, starts) / (sw * sw)
    return columns, factor


def _spread(
    batch: pl.DataFrame,
    starts: np.ndarray,
    counts: np.ndarray,
    w: np.ndarray,
    columns: dict[str, np.ndarray],
) -> np.ndarray:
    """Per tie, sum W (R - R')^2 / sum W: the deviations from the merged average, in row order."""
    if starts.size == w.size:
        return np.zeros(w.size)
    values = batch.get_column(nm.RESPONSE).to_numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        deviation = values - np.repeat(columns[nm.RESPONSE], counts)
        out = np.add.reduceat(w * deviation * deviation, starts) / columns[nm.WEIGHT]
    return np.where(counts == 1, 0.0, out)
