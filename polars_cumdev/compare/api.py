"""The public comparisons of one pair: its statistics and its curve."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.compare.columns import (
    _CHECKED,
    _D,
    _FIRST,
    _G,
    _SECOND,
    _SIGMA2,
    _SOURCE,
    _T,
    _V,
    COMPARE_COLUMNS,
    _Options,
    _options,
)
from polars_cumdev.compare.permutation import with_permutation
from polars_cumdev.compare.steps import (
    _Pipeline,
    _pipeline,
    _standard,
)
from polars_cumdev.covariates.ordering import Score, resolve_score
from polars_cumdev.errors import (
    EmptySubpopulationError,
    InvalidValuesError,
    OverlapError,
    TiedScoresError,
)
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check
from polars_cumdev.method.curves import variance_share
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.findings import LEVEL, SIGNIFICANT, findings
from polars_cumdev.method.groups import selection_label
from polars_cumdev.method.location import flag_stretch
from polars_cumdev.method.masks import mask_checks, resolve_mask
from polars_cumdev.method.prepare import (
    FrameLike,
    Prepared,
    as_lazy,
    prepare,
)
from polars_cumdev.method.statistics import MIN_SCORES, verdict
from polars_cumdev.method.weights import rescale


def _pair(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: Score,
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
    label_one = selection_label(first, "first")
    label_two = selection_label(second, "second")
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
        prepared.labels,
    )
    return pipeline, prepared


_DECIDED = "__cd_decided"


@entry_point("score", "response", "weight")
def compare(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
    level: float = LEVEL,
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
        Column names; ``weight=None`` weights rows equally. A list of
        covariates as ``score`` orders the rows along a Hilbert curve through
        them (:mod:`polars_cumdev.covariates.ordering`): the result then has
        ``ordering`` and ``from_<covariate>`` / ``to_<covariate>``, and
        ``from_score`` / ``to_score`` are Hilbert ranks.
    variance
        ``"empirical"`` (step 6, from the differences of neighbouring centred
        differences; any responses; twice the page's sigma, which is half
        the null spread of C and rejects about 60% of null comparisons at
        the 5% level: see ``polars_cumdev.compare.sigma``) or ``"score"`` (the Bernoulli form, the
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
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): ``from_score``, ``to_score``,
        ``share`` and ``deviation`` are filled only when ``kuiper_p`` is at
        most ``level``; otherwise null, with ``note`` saying "not significant".

    Returns
    -------
    pl.LazyFrame
        One row: ``n_first``, ``n_second`` (rows selected), ``kuiper``,
        ``ks``, ``delta`` (C at the end of the curve), ``sigma``,
        ``kuiper_z``, ``ks_z``, ``kuiper_p``, ``ks_p``, ``kuiper_log10p``,
        ``ks_log10p``, ``p_method`` (``"permutation"`` where the scores both
        selections share carry at least half the weight under
        ``ties="dither"``, or, with ``variance="empirical"``, where the
        smaller selection has fewer than 200 effective rows and the
        asymptotic p-value is at most max(0.1, level): p-values from a
        stratified permutation null,
        :mod:`polars_cumdev.compare.permutation`; else ``"asymptotic"``),
        ``effect`` (the
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
    frame, score, ordering = resolve_score(frame, score, weight)
    pipeline, prepared = _pair(frame, first, second, score, response, weight, options)
    before = [c for c in COMPARE_COLUMNS if c != SIGNIFICANT]
    stats = with_permutation(pipeline.stats, pipeline.first, pipeline.second, options, level)
    stats = findings(stats.select(before), level, p="kuiper_p", symbol="p")
    stats = stats.select(COMPARE_COLUMNS)
    stats = prepared.guarded(stats.filter(verdict(_CHECKED, [], prepared.labels)))
    return stats if ordering is None else ordering.located(stats)


@entry_point("score", "response", "weight")
def compare_curve(
    frame: FrameLike,
    first: pl.Expr | str,
    second: pl.Expr | str,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    variance: str = "empirical",
    ties: str = "error",
    seed: int = 0,
    fraction: float = 1.0,
    level: float = LEVEL,
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
    level
        Significance level of the located stretch: ``located`` flags points
        only when the curve's Kuiper p-value is at most ``level``.

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
        :func:`polars_cumdev.method.curves.variance_share`) and ``located``
        (the point lies in the located stretch, :mod:`polars_cumdev.method.location`).
        When the scores do not interleave, or the zoom keeps no difference,
        there is only the origin row, with a null sigma.

    Raises
    ------
    CumdevError
        As :func:`compare`; also :class:`InvalidParameterError` for a
        ``fraction`` outside (0, 1].
    """
    options = _options(variance, ties, seed, fraction)
    frame, score, ordering = resolve_score(frame, score, weight)
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
    curve = flag_stretch(curve, min_scores=MIN_SCORES["compare"], level=level)
    if options.ties == "dither":  # the table's p-value may be permuted: follow its decision
        table = with_permutation(pipeline.stats, pipeline.first, pipeline.second, options, level)
        decided = table.select((pl.col("kuiper_p") <= level).fill_null(False).alias(_DECIDED))
        curve = (
            curve.join(decided, how="cross", maintain_order="left")
            .with_columns(pl.col("located") & pl.col(_DECIDED))
            .drop(_DECIDED)
        )
    curve = prepared.guarded(curve)
    return curve if ordering is None else ordering.pointwise(curve)
