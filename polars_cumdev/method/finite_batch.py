"""The finite-sample p-values of the candidate groups of one batch of rows, in memory.

:mod:`~polars_cumdev.method.finite_groups` picks, in the plan, the groups whose
asymptotic p-value is not trusted and hands their rows over in one batch; the
engines (:mod:`polars_cumdev.engines.partitioned.finite`,
:mod:`polars_cumdev.engines.cluster.finite`) hand over the same rows from their
ranges. This module turns such a batch into p-values: it lays the rows out by
group and score, keeps the groups with few effective events (or rows), and
gets their p-values from redraws under the null
(:func:`~polars_cumdev.method.finite_sample.simulate`), from the exact list of
outcomes of a small group, from sign flips of a predicted mean's residuals,
from redraws within the full population's bins for real responses
(:mod:`~polars_cumdev.method.finite_resampled`), or from the conservative
bound for soft labels (:mod:`~polars_cumdev.method.finite_bound`). The result
has one row per such group: its keys and the columns
:data:`~polars_cumdev.method.finite_sample.SIM_KUIPER` and
:data:`~polars_cumdev.method.finite_sample.SIM_KS` (negated where
:func:`~polars_cumdev.method.finite_sample.method_column` reads another method).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_bound, finite_resampled
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_bins import midpoints
from polars_cumdev.method.pvalues import pvalue_pairs

__all__ = [
    "ALPHA",
    "KS_Z",
    "KUIPER_Z",
    "SIM_SCHEMA",
    "TESTS",
    "Null",
    "resample_groups",
    "simulate_groups",
]

#: The batch's column holding the number of tests (the same in every row).
TESTS = "__cd_tests"
#: The batch's column holding a quantile's level alpha (``null="level"``).
ALPHA = "__cd_alpha"
#: The batch's columns holding a predicted mean's z of Kuiper and KS (``null="flip"``).
KUIPER_Z, KS_Z = "__cd_kuiper_z", "__cd_ks_z"
#: How a calibrated group's responses are redrawn
#: (:func:`~polars_cumdev.method.finite_groups.with_simulated`).
Null = Literal["score", "level", "flip"]
#: The dtypes of the p-value columns of the result.
SIM_SCHEMA = {fs.SIM_KUIPER: pl.Float64(), fs.SIM_KS: pl.Float64()}


def simulate_groups(
    batch: pl.DataFrame,
    keys: Sequence[str],
    level: float,
    means: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
    null: Null = "score",
) -> pl.DataFrame:
    """Per group of ``batch`` (the candidates' rows: keys, score, response, weight and the
    number of tests in ``TESTS``), the simulated p-values of those meeting the criterion.

    ``means(s, group, starts)`` gives the null probabilities of the rows sorted by
    group (the screen's bin means); ``None``: the scores (calibration). ``null``:
    see :func:`~polars_cumdev.method.finite_groups.with_simulated` (``"flip"`` and
    ``"level"`` read the columns it carries).
    """
    keys = list(keys)
    schema = {**{k: batch.schema[k] for k in keys}, **SIM_SCHEMA}
    if batch.height == 0:
        return pl.DataFrame(schema=schema)
    carried = [pl.col(c).first() for c in (KUIPER_Z, KS_Z)] if null == "flip" else []
    grouped, sizes, group, starts, s, r, w = _layout(batch, keys, carried)
    tests = int(batch[TESTS][0])
    if null == "flip":  # a mean's residuals, before the scores give way to their ranks
        r = r - s
    if null != "score":  # a mean's or quantile's statistic ignores a shift: so do the draws
        s = _ranks(s, starts)
    if null == "flip":
        z = (grouped[KUIPER_Z].to_numpy(), grouped[KS_Z].to_numpy())
        return _flipped(grouped.select(keys), group, starts, s, r, w, tests, level, z)
    if null == "level":  # a quantile's hits 1{y <= q}: Bernoulli(alpha) whatever the score
        p = np.full(s.shape[0], float(batch[ALPHA][0]))
    else:
        p = s if means is None else means(s, group, starts)
    other = np.bincount(group, weights=((r != 0.0) & (r != 1.0)), minlength=grouped.height)
    terms = fs.event_terms(p, w)
    sums = np.stack([np.bincount(group, weights=t, minlength=grouped.height) for t in terms])
    events = fs.effective_events(sums)
    if null == "level":  # few rows at alpha near 1/2: E is infinite, the walk still coarse
        events = np.minimum(events, fs.effective_rows(group, w, grouped.height))
    chosen = (other == 0) & (events < fs.MIN_EVENTS)
    soft = (other > 0) & (events < fs.MIN_EVENTS) & (null == "score") & (means is None)
    keep = chosen[group]
    bounds = np.concatenate([[0], np.cumsum(sizes[chosen])]).astype(np.int64)
    if null == "level":
        p_k, p_ks = _listed_or_drawn(bounds, s[keep], w[keep], p[keep], r[keep], tests, level)
    else:
        p_k, p_ks, _ = fs.simulate(bounds, s[keep], w[keep], p[keep], r[keep], tests, level)
    out = grouped.select(keys).filter(pl.Series(chosen))
    out = out.with_columns(
        pl.Series(fs.SIM_KUIPER, p_k, dtype=pl.Float64),
        pl.Series(fs.SIM_KS, p_ks, dtype=pl.Float64),
    ).select(list(schema))
    if not soft.any():
        return out
    return pl.concat([out, _bounded(grouped.select(keys), soft, group, starts, s, w, r, schema)])


def _bounded(
    names: pl.DataFrame,
    soft: np.ndarray,
    group: np.ndarray,
    starts: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    r: np.ndarray,
    schema: Mapping[str, pl.DataType],
) -> pl.DataFrame:
    """Calibration's candidates with soft labels (``soft``) and few effective events: the
    conservative bound of :mod:`~polars_cumdev.method.finite_bound`, encoded for
    :func:`~polars_cumdev.method.finite_sample.method_column` (KS negated: "bound")."""
    keep = soft[group]
    bounds = np.concatenate([[0], np.cumsum(np.diff(starts)[soft])]).astype(np.int64)
    p_k, p_ks = finite_bound.bound_pvalues(bounds, s[keep], w[keep], r[keep])
    return (
        names.filter(pl.Series(soft))
        .with_columns(
            pl.Series(fs.SIM_KUIPER, p_k, dtype=pl.Float64),
            pl.Series(fs.SIM_KS, -p_ks, dtype=pl.Float64),
        )
        .select(list(schema))
    )


def _layout(batch: pl.DataFrame, keys: list[str], carried: Sequence[pl.Expr] = ()) -> tuple:
    """The candidates' rows by group, then score, weight, response: (the groups' keys and
    ``carried`` columns, sizes, each row's group number, starts, scores, responses, weights)."""
    grouped = batch.with_row_index("__cd_row").group_by(keys).agg(pl.col("__cd_row"), *carried)
    sizes = grouped["__cd_row"].list.len().to_numpy()
    rows = grouped["__cd_row"].explode().to_numpy().astype(np.int64)
    group = np.repeat(np.arange(grouped.height), sizes)
    s, r, w = (batch[c].to_numpy()[rows] for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT))
    order, starts = fs.grouped(group, s, w, r)
    return grouped, sizes, group[order], starts, s[order], r[order], w[order]


def resample_groups(
    batch: pl.DataFrame, keys: Sequence[str], level: float, full: pl.DataFrame
) -> pl.DataFrame:
    """:func:`simulate_groups` for a screen whose responses are not all 0 or 1: the groups
    of ``batch`` meeting :func:`~polars_cumdev.method.finite_resampled.criterion`, with
    p-values from redraws within the full population's (``full``) bins, negated."""
    keys = list(keys)
    schema = {**{k: batch.schema[k] for k in keys}, **SIM_SCHEMA}
    if batch.height == 0:
        return pl.DataFrame(schema=schema)
    grouped, _, group, starts, s, r, w = _layout(batch, keys)
    point, lower, upper = midpoints(s, group, starts)
    population = tuple(full[c].to_numpy() for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT))
    tests = int(batch[TESTS][0])
    chosen, p_k, p_ks = finite_resampled.resampled(
        starts, s, w, r, point, lower, upper, population, tests, level
    )
    return (
        grouped.select(keys)
        .filter(pl.Series(chosen))
        .with_columns(
            pl.Series(fs.SIM_KUIPER, -p_k, dtype=pl.Float64),
            pl.Series(fs.SIM_KS, -p_ks, dtype=pl.Float64),
        )
        .select(list(schema))
    )


def _listed_or_drawn(
    bounds: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    p: np.ndarray | None,
    r: np.ndarray,
    tests: int,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A mean's (``p`` None: ``r`` are residuals) or quantile's groups' p-values: exact for
    groups of at most EXACT_ROWS rows (every outcome listed), from redraws for the others."""
    sizes = np.diff(bounds)
    small = sizes <= fs.EXACT_ROWS
    out = np.empty((2, sizes.shape[0]))
    flip = p is None
    p = np.zeros_like(r) if p is None else p
    for chosen, rows in ((small, np.repeat(small, sizes)), (~small, np.repeat(~small, sizes))):
        starts = np.concatenate([[0], np.cumsum(sizes[chosen])]).astype(np.int64)
        parts = s[rows], w[rows], p[rows], r[rows]
        if chosen is small:
            found = fs.exact(starts, *parts, flip)
        elif flip:
            found = fs.flip(starts, parts[0], parts[1], parts[3], tests, level)
        else:
            found = fs.simulate(starts, *parts, tests, level)
        out[0, chosen], out[1, chosen] = found[0], found[1]
    return out[0], out[1]


def _ranks(s: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each row's distinct score's rank within its group (0, 1, ...; sorted rows), as float64.

    The redraws read the scores only to find the ties and to seed the draws:
    the ranks keep the ties, and seed a mean's or a quantile's group the same
    way when its predictions and responses move together (the statistics do
    not change then either)."""
    new = np.ones(s.shape[0], dtype=bool)
    new[1:] = s[1:] != s[:-1]
    new[starts[:-1]] = True  # (every group has rows)
    count = np.cumsum(new)
    return (count - np.repeat(count[starts[:-1]], np.diff(starts))).astype(np.float64)


def _flipped(
    names: pl.DataFrame,
    group: np.ndarray,
    starts: np.ndarray,
    s: np.ndarray,
    e: np.ndarray,
    w: np.ndarray,
    tests: int,
    level: float,
    z: tuple[np.ndarray, np.ndarray],
) -> pl.DataFrame:
    """A predicted mean's candidates with fewer than MIN_ROWS effective rows: the larger of
    the sign-flip p-value of the residuals and the asymptotic one (docs/method.md)."""
    chosen = fs.effective_rows(group, w, names.height) < fs.MIN_ROWS
    keep = chosen[group]
    bounds = np.concatenate([[0], np.cumsum(np.diff(starts)[chosen])]).astype(np.int64)
    p_k, p_ks = _listed_or_drawn(bounds, s[keep], w[keep], None, e[keep], tests, level)
    asymptotic = pvalue_pairs(*z)
    p_k = np.maximum(p_k, asymptotic[0][chosen])
    p_ks = np.maximum(p_ks, asymptotic[1][chosen])
    return names.filter(pl.Series(chosen)).with_columns(
        pl.Series(fs.SIM_KUIPER, p_k, dtype=pl.Float64),
        pl.Series(fs.SIM_KS, p_ks, dtype=pl.Float64),
    )
