"""Every group of a column compared with one reference group, in one lazy query."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.compare.columns import _CHECKED, _G, COMPARE_ALL_COLUMNS, _options
from polars_cumdev.compare.permutation import with_permutation
from polars_cumdev.compare.steps import _pipeline, _standard
from polars_cumdev.covariates.ordering import resolve_score
from polars_cumdev.errors import ColumnTypeError, EmptySubpopulationError, InvalidParameterError
from polars_cumdev.method.checks import Check
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.findings import LEVEL, findings
from polars_cumdev.method.prepare import FrameLike, as_lazy, prepare, schema_of
from polars_cumdev.method.statistics import benjamini_hochberg, verdict
from polars_cumdev.method.weights import rescale

__all__ = ["compare_all"]


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


@entry_point("by", "score", "response", "weight")
def compare_all(
    frame: FrameLike,
    by: Column,
    reference: object,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
    level: float = LEVEL,
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
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): filled only for groups whose
        ``kuiper_q`` is at most ``level``; elsewhere null, with ``note``
        saying "not significant: q = ...".

    Returns
    -------
    pl.LazyFrame
        One row per group other than the reference: the ``by`` column, then
        ``n_first`` (rows of the group), ``n_second`` (rows of the reference),
        ``kuiper``, ``ks``, ``delta``, ``sigma``, ``kuiper_z``, ``ks_z``,
        ``kuiper_p``, ``ks_p``, ``kuiper_log10p``, ``ks_log10p``, ``kuiper_q``,
        ``ks_q`` (Benjamini-Hochberg over the groups with a p-value),
        ``p_method`` (as in :func:`compare`), the
        located stretch ``from_score``, ``to_score``, ``share``,
        ``deviation`` (:mod:`polars_cumdev.method.location`), ``effect``,
        ``variance`` and
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
    frame, score, ordering = resolve_score(frame, score, weight)
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
        prepared.labels,
    )
    permuted = with_permutation(pipeline.stats, pipeline.first, pipeline.second, options, level)
    stats = (
        permuted.with_columns(
            benjamini_hochberg(pl.col("kuiper_p")).alias("kuiper_q"),
            benjamini_hochberg(pl.col("ks_p")).alias("ks_q"),
        )
        .pipe(findings, level)
        .sort(["kuiper_z", _G], descending=[True, False], nulls_last=True)
        .select(pl.col(_G).alias(by), *COMPARE_ALL_COLUMNS)
    )
    stats = prepared.guarded(stats.filter(verdict(_CHECKED, [by], prepared.labels)))
    return stats if ordering is None else ordering.located(stats)
