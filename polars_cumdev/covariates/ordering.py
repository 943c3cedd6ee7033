"""Several covariates as one score: the Hilbert ordering behind ``score=[...]``.

Every entry point (:func:`~polars_cumdev.subpopulation.screen`,
:func:`~polars_cumdev.subpopulation.curve`,
:func:`~polars_cumdev.compare.compare`, :func:`~polars_cumdev.compare.compare_all`
and :func:`~polars_cumdev.compare.compare_curve`) accepts a list of column
names as ``score``. :func:`resolve_score` turns the list into one internal
score column, the dense rank over the whole frame of the covariates' Hilbert
index (:func:`polars_cumdev.covariates.hilbert.hilbert_index`, rank coordinates, default
bits): the same order as the index, rows in one Hilbert cell tied (so they
merge as ties do), and values below 2^53, which float64 holds exactly. The
rest of the pipeline is the one-dimensional method, unchanged (Tygert 2021;
``paired-and-covariates.md`` section 2). A list of one covariate is that
covariate itself (the one-dimensional curve is the line), so it reproduces
the ordinary result exactly: the midpoint bins of the subpopulation methods
use the score's values, not only their order.

The output then says which ordering was used and where the points lie in
covariate space (:class:`Ordering`): a column ``ordering`` (e.g.
``hilbert(age, log10_income)``), and the covariate values of a Hilbert rank,
taken as the weighted mean of each covariate over the rows of the frame in
that Hilbert cell (with rank coordinates and default bits a cell holds one
covariate vector, so this is that vector).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.covariates.hilbert import hilbert_index
from polars_cumdev.covariates.ranking import dense_ranks, use_compiled
from polars_cumdev.errors import ColumnNotFoundError, ColumnTypeError, InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.prepare import FrameLike, as_lazy, schema_of

__all__ = ["ORDERING", "Ordering", "Score", "covariate_names", "resolve_score"]

#: A score argument: one column name, or a list of covariates (Hilbert order).
Score = str | Sequence[str]

#: Name of the column saying which ordering a result used.
ORDERING = "ordering"

_RANK = nm.HILBERT_RANK
_PREFIX = "hilbert("


def covariate_names(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The covariates of a result computed on Hilbert order (empty for an ordinary score).

    Read from the ``ordering`` column written by :class:`Ordering`.
    """
    columns = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    if ORDERING not in columns:
        return []
    head = frame.select(pl.col(ORDERING).drop_nulls().first())
    value = (head.collect() if isinstance(head, pl.LazyFrame) else head).item()
    if not isinstance(value, str) or not value.startswith(_PREFIX):
        return []
    return [name.strip() for name in value[len(_PREFIX) : -1].split(",")]


@dataclass(frozen=True)
class Ordering:
    """How a list of covariates became the score, and how to describe results in its terms.

    Attributes
    ----------
    covariates
        The covariate columns, in the order given (the order shapes the curve).
    source
        The user's frame with the internal score column added.
    weight
        The weight column (None: rows weigh 1), for the covariate means.
    column
        The score column: the internal Hilbert rank, or the covariate itself
        when there is only one.
    """

    covariates: tuple[str, ...]
    source: pl.LazyFrame
    weight: str | None
    column: str = _RANK

    @property
    def label(self) -> str:
        """``hilbert(a, b, ...)``: the value of the ``ordering`` column."""
        return f"{_PREFIX}{', '.join(self.covariates)})"

    def cells(self) -> pl.LazyFrame:
        """One row per Hilbert rank (Float64 ``_cd_hilbert_rank``) with each covariate's mean.

        The mean is weighted by the weight column when there is one; a
        covariate constant in the cell gives its value exactly.
        """
        key = pl.col(self.column).cast(pl.Float64).alias(_RANK)
        means = []
        for c in self.covariates:
            x = pl.col(c).cast(pl.Float64)
            if self.weight is None:
                mean = x.mean()
            else:
                w = pl.col(self.weight).cast(pl.Float64)
                mean = (x * w).sum() / w.sum()
            # A cell holding one value gives that value exactly.
            means.append(pl.when(x.min() == x.max()).then(x.first()).otherwise(mean).alias(c))
        return self.source.group_by(key).agg(means)

    def _check_clash(self, result: pl.LazyFrame, new: Sequence[str]) -> None:
        taken = set(schema_of(result).names()) & set(new)
        if taken:
            raise InvalidParameterError(
                f"the covariate column(s) {sorted(taken)} would clash with output columns of "
                "the same name; rename them first"
            )

    def _attach(self, result: pl.LazyFrame, key: str, names: dict[str, str]) -> pl.LazyFrame:
        """Join to each row of ``result`` the covariates of the rank nearest its ``key``.

        ``names`` renames the covariates; a null ``key`` gives null covariates.
        The row order of ``result`` is kept.
        """
        row, probe = f"{nm.PREFIX}row", f"{nm.PREFIX}probe"
        cells = self.cells().rename(names).sort(_RANK)
        keyed = result.with_row_index(row).with_columns(
            pl.col(key).cast(pl.Float64).fill_null(float("-inf")).alias(probe)
        )
        joined = keyed.sort(probe).join_asof(
            cells, left_on=probe, right_on=_RANK, strategy="nearest"
        )
        blank = pl.col(key).is_null()
        return (
            joined.with_columns(
                [pl.when(blank).then(None).otherwise(pl.col(c)).alias(c) for c in names.values()]
            )
            .sort(row)
            .drop(row, probe, _RANK, strict=False)
        )

    def located(self, result: pl.LazyFrame) -> pl.LazyFrame:
        """A screen-like result with ``ordering`` and the covariates at both ends of its stretch.

        ``from_score`` / ``to_score`` stay Hilbert ranks; ``from_<covariate>``
        and ``to_<covariate>`` give the covariate values (cell means) of the
        nearest rank (the comparisons' ends are averages of ranks).
        """
        ends = [f"{side}_{c}" for side in ("from", "to") for c in self.covariates]
        self._check_clash(result, [ORDERING, *ends])
        out = result.with_columns(pl.lit(self.label).alias(ORDERING))
        for side in ("from", "to"):
            out = self._attach(out, f"{side}_score", {c: f"{side}_{c}" for c in self.covariates})
        return out

    def pointwise(self, curve: pl.LazyFrame) -> pl.LazyFrame:
        """A curve with ``ordering`` and the covariate values (cell means) of every point.

        The origin row (null ``score``) has null covariates. Where ``score``
        is an average of ranks (:func:`~polars_cumdev.compare.compare_curve`)
        the cell of the nearest rank is taken.
        """
        self._check_clash(curve, [ORDERING, *self.covariates])
        out = curve.with_columns(pl.lit(self.label).alias(ORDERING))
        return self._attach(out, "score", {c: c for c in self.covariates})


def _dense_rank(index: pl.Expr) -> pl.Expr:
    """1-based dense rank of the Hilbert index: the internal score of ``score=[...]``.

    ``Expr.rank("dense")`` costs about a sort; from
    :data:`polars_cumdev.covariates.ranking.COMPILED_ROWS` rows the kernel's radix rank
    gives the same integers in about half the time (``benchmarks/hilbert.py``).
    """

    def rank(index: pl.Series) -> pl.Series:
        if use_compiled(index.len()):
            ranks = dense_ranks(index).astype(np.int64) + 1
            return pl.Series(index.name, ranks, dtype=pl.Int64)
        return index.rank("dense").cast(pl.Int64)

    return index.map_batches(rank, return_dtype=pl.Int64)


def resolve_score(
    frame: FrameLike, score: Score, weight: str | None = None
) -> tuple[FrameLike, str, Ordering | None]:
    """Resolve a ``score`` argument: a column name passes through, a list means Hilbert order.

    Parameters
    ----------
    frame
        The user's frame.
    score
        A column name, or a list (or tuple) of one or more covariate columns.
    weight
        The weight column, used for the covariate means of :class:`Ordering`.

    Returns
    -------
    frame, score, ordering
        For a name: the inputs unchanged and None. For a list: the frame
        (lazy) with the internal score column, that column's name, and the
        :class:`Ordering`.

    Raises
    ------
    InvalidParameterError, ColumnNotFoundError, ColumnTypeError
        At once: an empty list, a name given twice, a missing or
        non-numeric covariate (the message names it). Nulls, NaN and
        infinities in a covariate raise
        :class:`~polars_cumdev.errors.InvalidValuesError` naming it when the
        result is collected.
    """
    if isinstance(score, str):
        return frame, score, None
    if not isinstance(score, Sequence) or isinstance(score, bytes):
        raise InvalidParameterError(
            f"`score` must be a column name or a list of covariate names, got {score!r}"
        )
    covariates = tuple(score)
    if not covariates or not all(isinstance(c, str) and c for c in covariates):
        raise InvalidParameterError(
            f"`score` as a list must hold one or more column names, got {score!r}"
        )
    if len(set(covariates)) != len(covariates):
        raise InvalidParameterError(f"`score` names a covariate twice: {list(covariates)}")
    lazy = as_lazy(frame)
    schema = schema_of(lazy)
    for c in covariates:
        if c not in schema:
            raise ColumnNotFoundError(
                f"covariate column {c!r} not found; the frame has columns {list(schema)}"
            )
        dtype = schema[c]
        if not (dtype.is_numeric() or dtype == pl.Boolean):
            raise ColumnTypeError(
                f"covariate column {c!r} has dtype {dtype}; Hilbert ordering needs numeric "
                "covariates"
            )
    if len(covariates) == 1:
        # A one-dimensional Hilbert curve is the line itself: the covariate is
        # the score, so that its values (not only their order) set the bins.
        return frame, covariates[0], Ordering(covariates, lazy, weight, covariates[0])
    rank = _dense_rank(hilbert_index(*covariates)).alias(_RANK)
    # Cached: the data, the checks and the covariate lookup all read it, and
    # each would otherwise rank the covariates and walk the curve again.
    source = lazy.with_columns(rank).cache()
    return source, _RANK, Ordering(covariates, source, weight)
