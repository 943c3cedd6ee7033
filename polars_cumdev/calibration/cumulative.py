"""Cumulative calibration of one prediction per row: ECCE-R and ECCE-MAD (method.md 2).

Here the scores are predicted probabilities and each merged score is compared
with the responses at that score directly: C_k = sum_{j<=k} a_j (R'_j - S'_j)
(equations (44)-(47) of appendix A of M. Tygert, "Cumulative deviation of a
subpopulation from the full population"; the plots themselves follow M. Tygert,
"Plots of the cumulative differences between observed and expected values of
ordered Bernoulli variates").
The Kuiper range of C is the ECCE-R, its largest absolute value the ECCE-MAD,
and sigma = sqrt(sum_k a_k^2 S'_k (1 - S'_k) f_k) is the scale of random
fluctuations under perfect calibration, (50). The same accumulation and
statistics stages as the subpopulation screen are used, with the score as the
reference instead of the full-population average. Predicted means and
quantiles of real responses go through the same stages with their own
reference and sigma (:mod:`polars_cumdev.calibration.targets`). The door and
the table's names, which the other engines share, are in
:mod:`polars_cumdev.calibration.table`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from polars_cumdev.calibration import in_memory
from polars_cumdev.calibration.table import (
    BERNOULLI,
    CALIBRATION_COLUMNS,
    PROBABILITY,
    normalized_table,
    prepare_calibration,
)
from polars_cumdev.calibration.targets import GAP, SPREAD, TERM, Target
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled, kernel_frames
from polars_cumdev.method.accumulate import accumulate, check_fraction, zoom_check
from polars_cumdev.method.curves import summed_sigma_curve
from polars_cumdev.method.expressions import Column
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.finite_groups import SIMULATED, any_candidate, with_simulated
from polars_cumdev.method.frames import polars_frame
from polars_cumdev.method.masks import mask_checks, resolve_mask, selection_label
from polars_cumdev.method.prepare import FrameLike, Prepared, as_lazy, schema_of
from polars_cumdev.method.statistics import (
    MIN_SCORES,
    RMAX,
    SUMMARY_SCHEMA,
    UNOPTIMIZED,
    summarize,
    with_location,
)
from polars_cumdev.method.summary_columns import EVENTS
from polars_cumdev.method.ties import merge_ties, sort_by_score
from polars_cumdev.method.weights import rescale

# CALIBRATION_COLUMNS lives in calibration.table (named here too).
__all__ = ["CALIBRATION_COLUMNS", "calibration", "calibration_curve"]


def _rows(prepared: Prepared, target: Target) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The checked, rescaled rows sorted by score, and the weights' scale."""
    rows, scale = rescale(target.standardize(prepared.gated()))
    return sort_by_score(rows), scale


def _accumulated(
    ordered: pl.LazyFrame, keys: Sequence[str], target: Target, fraction: float = 1.0
) -> pl.LazyFrame:
    """Merged, accumulated points with each one's term of sigma^2 (``TERM``)."""
    gap = [] if target.errors is None else [GAP]
    if gap:  # mean |R - S| of a tie: 0 when its responses equal the prediction (kept exactly)
        ordered = ordered.with_columns((pl.col(nm.RESPONSE) - pl.col(nm.SCORE)).abs().alias(GAP))
    spread = SPREAD if target.name == "mean" else None
    points = target.with_reference(merge_ties(ordered, keys, extra=gap, spread=spread))
    accumulated = accumulate(points, keys, reference=nm.REFERENCE, fraction=fraction)
    if target.errors is not None:
        largest = _facts(ordered, target).select(RMAX)
        accumulated = accumulated.join(largest, how="cross", maintain_order="left")
    return target.with_term(accumulated, list(keys))


def _facts(ordered: pl.LazyFrame, target: Target) -> pl.LazyFrame:
    """The one-row frame :func:`normalize` takes: Bernoulli's sigma, and the scale of C.

    Probabilities and quantile hits lie in [0, 1]; a predicted mean's
    responses are measured by their largest |R|, as in the screen.
    """
    if target.errors is None:
        return pl.LazyFrame([BERNOULLI])
    largest = pl.col(nm.RESPONSE).abs().max().alias(RMAX)
    return ordered.select(pl.lit(True).alias(nm.BINARY), largest)


def _polars_summary(
    ordered: pl.LazyFrame, keys: Sequence[str], target: Target = PROBABILITY
) -> pl.LazyFrame:
    """Per-group statistics by the Polars stages (rows sorted by score), with the location."""
    accumulated = _accumulated(ordered, keys, target).cache()
    summary = summarize(
        accumulated,
        keys,
        reference=nm.REFERENCE,
        empirical=False,
        bernoulli_term=pl.col(TERM),
        errors=target.errors,
    )
    return with_location(summary, accumulated, keys, _facts(ordered, target))


def _summary_node(
    prepared: Prepared, choice: compiled.Choice, level: float | None = None
) -> pl.LazyFrame:
    """Per-group statistics (:func:`summarize`'s layout) from the compiled node.

    With ``level``, stretches are located only in groups significant at
    ``level`` by their own p-value
    (:func:`polars_cumdev.method.kernel_frames.location`).
    """
    run, schema = _kernel_summary(prepared, choice, level)
    return compiled.node(prepared, run, schema, grouped=True)


def _kernel_summary(
    prepared: Prepared, choice: compiled.Choice, level: float | None
) -> tuple[Callable[[compiled.Rows], pl.DataFrame], dict[str, pl.DataType]]:
    """:func:`_summary_node`'s function of the node's rows, and the schema of its frame."""
    keys = prepared.keys
    source = schema_of(prepared.source)
    schema = {**{k: source[k] for k in keys}, **SUMMARY_SCHEMA, EVENTS: pl.Float64()}

    def run(rows: compiled.Rows) -> pl.DataFrame:
        if choice == "at run time" and rows.small:
            summary = _polars_summary(compiled.standardized(rows, prepared), keys)
            summary = summary.with_columns(
                pl.col("weight") / rows.scale,
                pl.lit(None, dtype=pl.Float64).alias(EVENTS),  # (not summed by these stages)
            )
            return summary.select(list(schema)).collect(engine="in-memory")
        ids, offset, count = rows.groups
        k = compiled.kernel()
        starts = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(k.tie_counts(ids, offset, rows.s, count), out=starts[1:])
        threads = 2 if rows.s.shape[0] >= k.TWO_THREADS else 1
        out, first, curves = k.calibration_walk(
            ids, offset, rows.s, rows.r, rows.w, rows.weighted, rows.scale, count, starts, threads,
            divided=True,
        )  # fmt: skip
        recorded = (starts, curves[:, 0], curves[:, 1], curves[:, 2])
        found = kernel_frames.location(
            rows, ids, offset, out, first, True, recorded=recorded, level=level
        )
        # (E of the scores as the null probabilities, whatever the responses: soft labels
        # take the same criterion, method/finite_batch.py)
        found[EVENTS] = kernel_frames.walk_events(out, True)
        return kernel_frames.summary_frame(rows, keys, out, first, found).select(list(schema))

    return run, schema


def _in_memory(frame: FrameLike, engine: str, keys: Sequence[str], target: Target) -> bool:
    """Whether :mod:`polars_cumdev.calibration.in_memory` computes the summary: one
    calibration of probabilities in a DataFrame, the engine left to ``"auto"``."""
    return isinstance(frame, pl.DataFrame) and engine == "auto" and not keys and target.compiled


def calibration(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    by: Column | Sequence[Column] | None = None,
    engine: str = "auto",
    target: Target = PROBABILITY,
    reserved: Sequence[str] = (),
    level: float = LEVEL,
    _finite_sample: bool = True,
) -> pl.LazyFrame | pl.DataFrame:
    """ECCE-R and ECCE-MAD with sigma and p-values, overall or per group.

    Parameters
    ----------
    frame
        Predictions: a Polars DataFrame or LazyFrame, or a pandas DataFrame
        or PyArrow Table (converted once; the result is then an eager Polars
        DataFrame, see :mod:`polars_cumdev.method.frames`).
    score
        Predicted probabilities S in [0, 1].
    response
        Observed outcomes R in [0, 1] (0/1 labels, or soft labels).
    weight
        Optional positive weights.
    by
        Optional grouping column(s): one row per group, computed in one query.
        Names or expressions: ``by=pl.col("ts").dt.truncate("1w")`` gives one
        row per week, keyed by the week's start in column ``ts``
        (:mod:`polars_cumdev.method.keys`).
    engine
        ``"polars"``, ``"kernel"`` or ``"auto"``, as in
        :func:`polars_cumdev.subpopulation.screen`. The kernel computes
        predicted probabilities only; other targets run on the Polars stages.
        With ``"auto"``, one calibration of probabilities (no ``by``) of a
        DataFrame below the kernel's threshold is computed from NumPy arrays
        (:mod:`polars_cumdev.calibration.in_memory`, the plan's numbers bit
        for bit).
    target
        What the score predicts (:mod:`polars_cumdev.calibration.targets`).
    reserved
        Further output column names that ``by`` must not use.
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): filled only where ``ecce_r_q``
        (with ``by``) or ``ecce_r_p`` (overall; the same number) is at most
        ``level``; elsewhere null, with ``note`` saying "not significant".

    Returns
    -------
    pl.LazyFrame or pl.DataFrame
        A DataFrame where :mod:`polars_cumdev.calibration.in_memory` computed
        it (already collected), else a LazyFrame.
        One row (per group): ``n``, ``n_scores``, ``weight``, ``ecce_r``
        (Kuiper range of C, (49) of M. Tygert, "Cumulative deviation of a
        subpopulation from the full population"), ``ecce_mad`` (max |C_k|,
        (48)), ``delta`` (C_n), ``sigma`` ((50), method.md 2), ``ecce_r_z``,
        ``ecce_mad_z``, ``ecce_r_p``, ``ecce_mad_p`` (method.md 4), their
        base-10 logarithms ``ecce_r_log10p``, ``ecce_mad_log10p``, ``ecce_r_q``,
        ``ecce_mad_q`` (Benjamini-Hochberg across groups), the located stretch
        ``from_score``, ``to_score``, ``share``, ``deviation``
        (:mod:`polars_cumdev.method.location`) and ``note``; sorted by
        ``ecce_r_z``, largest first.
    """
    prepared = prepare_calibration(frame, score, response, weight, by, target, reserved)
    keys = prepared.keys
    choice = compiled.choose(engine, frame)
    held = None  # the kernel's statistics, computed at once for a frame in memory
    if not target.compiled:
        if engine == "kernel":
            raise InvalidParameterError(
                f"engine='kernel' computes the calibration of probabilities only; "
                f"target={target.name!r} runs with engine='polars' (or 'auto')"
            )
        choice = "polars"
    if choice == "polars" and _in_memory(frame, engine, keys, target):
        # One small calibration in memory: its summary from arrays, then normalized in
        # memory (the steps that run Python functions call them without a query), and the
        # table collected at once, without the optimizer (a plan of one row in memory).
        stats = in_memory.overall_summary(frame, prepared, level, _finite_sample)
        out = normalized_table(stats, keys, None, None, prepared, target, level)
        return out.collect(engine="in-memory", optimizations=UNOPTIMIZED)
    bernoulli = pl.LazyFrame([BERNOULLI])
    if choice == "polars":
        ordered, scale = _rows(prepared, target)
        stats = _polars_summary(ordered, keys, target)
        bernoulli = _facts(ordered, target)
    elif isinstance(frame, pl.DataFrame):  # in memory: the kernel now, no plan around it
        run, _ = _kernel_summary(prepared, choice, level)
        held, scale = compiled.eager(prepared, run, grouped=True), None
        stats = held.lazy()
    else:
        stats, scale = _summary_node(prepared, choice, level), None
    if held is not None and _finite_sample and not any_candidate(held, level):
        _finite_sample = False  # no group to simulate: with_simulated would add nulls
    if _finite_sample:  # finite-sample p-values where the asymptotic tail fails
        rows, null = prepared.frame, target.null
        if target.name == "quantile":  # the hits 1{y <= q}, Bernoulli(alpha) under the null
            rows = target.standardize(rows)
        stats = with_simulated(
            stats, rows, keys, prepared.key_types, level, null=null, alpha=target.alpha
        )
    else:
        stats = stats.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in SIMULATED)
    out = normalized_table(stats, keys, bernoulli, scale, prepared, target, level)
    return prepared.guarded(out) if choice == "polars" else out


def calibration_curve(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    subpop: pl.Expr | str | None = None,
    fraction: float = 1.0,
    target: Target = PROBABILITY,
    level: float = LEVEL,
) -> pl.LazyFrame:
    """Drill-down frame of the cumulative differences between responses and predictions.

    Same columns as :func:`polars_cumdev.subpopulation.curve`, so
    :func:`polars_cumdev.charts.cumulative` draws it; ``full_mean`` is
    replaced by the reference the response is compared with, the score
    itself (C_k of method.md 2, equations (44)-(47) of M. Tygert, "Cumulative
    deviation of a subpopulation from the full population").

    Parameters
    ----------
    frame, score, response, weight
        As in :func:`calibration`.
    subpop
        The rows of one group (a boolean expression or the name of a boolean
        column), e.g. the group of a row of ``calibration(..., by=...)``, as
        in :func:`polars_cumdev.subpopulation.curve`; None for all rows. The
        group is calibrated against its own predictions; the values of every
        row are checked, as ``calibration(by=...)`` checks them.
    fraction
        Remark 3's zoom q in (0, 1] (method.md 1.7), of the group's scores.
    target
        What the score predicts (:mod:`polars_cumdev.calibration.targets`);
        ``full_mean`` holds alpha for a quantile.
    level
        Significance level of the located stretch: ``located`` flags points
        only when the curve's Kuiper p-value is at most ``level``.

    Returns
    -------
    pl.LazyFrame
        Origin row then one row per merged score: ``k``, ``a``, ``k_over_n``,
        ``score``, ``cumdiff``, ``full_mean`` (= ``score``),
        ``response_mean``, ``weight``, ``sigma``, ``variance_share`` and
        ``located`` (the point lies in the located stretch,
        :mod:`polars_cumdev.method.location`).
    """
    fraction = check_fraction(fraction)
    label, scores, carry = "the data", pl.col(score), []
    if subpop is not None:
        mask = resolve_mask(as_lazy(polars_frame(frame)), subpop)
        label, scores, carry = selection_label(subpop), scores.filter(mask), [mask.alias(nm.MEMBER)]
    prepared = prepare_calibration(frame, score, response, weight, None, target, carry=carry)
    if subpop is not None:
        prepared.checks.extend(mask_checks(mask, label))
        selected = prepared.frame.filter(pl.col(nm.MEMBER)).drop(nm.MEMBER)
        prepared = replace(prepared, frame=selected)
    if fraction < 1.0:
        prepared.checks.append(zoom_check(scores, fraction, label))
    ordered, scale = _rows(prepared, target)
    accumulated = _accumulated(ordered, [], target, fraction)
    points = summed_sigma_curve(
        accumulated,
        scale,
        pl.col(TERM),
        prepared.labels,
        MIN_SCORES["calibration"],
        level=level,
    )
    return prepared.guarded(points)
