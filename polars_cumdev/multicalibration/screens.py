"""``screen(by=segments(...))``: every intersection against the full population.

The subpopulation screen of :func:`polars_cumdev.subpopulation.screen`
(method.md 1, equations (6)-(7), (12)-(13), (25)-(32) of M. Tygert, "Cumulative
deviation of a subpopulation from the full population") over a family of
segments: the rows are sorted by score once, the full population's prefix table
built once (:func:`polars_cumdev.kernel.prefix_table`), then each feature subset
(a partition of the rows) is one walk of
:func:`polars_cumdev.kernel.screen_groups` with the rows' segment numbers as the
groups. The empty conjunction (the full population itself, the reference) is
left out. Family-wise p-values by Holm on the Kuiper tails, the located stretch
only where ``p_family <= level``, parents as in
:mod:`~polars_cumdev.multicalibration.redundancy`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.method import compiled
from polars_cumdev.method.familywise import holm
from polars_cumdev.method.prepare import FrameLike, as_lazy, prepare, schema_of
from polars_cumdev.method.statistics import (
    FACTS_SCHEMA,
    STATISTIC_COLUMNS,
    SUMMARY_SCHEMA,
    check_variance,
    normalize,
)
from polars_cumdev.multicalibration.api import (
    CARRIED,
    check_options,
    family_columns,
    family_findings,
)
from polars_cumdev.multicalibration.family import Segments, coded_features, subset_ids
from polars_cumdev.multicalibration.redundancy import with_parents
from polars_cumdev.multicalibration.walk import EXTRA_SCHEMA, Walked, assemble

__all__ = ["SEGMENT_SCREEN_COLUMNS", "screen_segments"]

# The audit's carried columns but the bootstrap's p-value (a segment screen is Holm's).
_CARRIED = tuple(c for c in CARRIED if c != "_p_bootstrap")
#: Columns after the feature columns, in order.
SEGMENT_SCREEN_COLUMNS = family_columns(STATISTIC_COLUMNS)


def screen_segments(
    frame: FrameLike,
    segments: Segments,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "auto",
    level: float = 0.05,
) -> pl.LazyFrame:
    """Screen every segment of ``segments`` (depth >= 1) against the full population.

    Parameters
    ----------
    frame, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    segments
        The family, from :func:`polars_cumdev.segments`.
    level
        Family-wise level (Holm): the located stretch is stated only where
        ``p_family <= level``.

    Returns
    -------
    pl.LazyFrame
        One row per segment: a column per feature (level label, null =
        any), ``depth``, the screen's columns (``n`` ... ``kuiper_q``,
        ``ks_q``, ``variance``), ``response_mean``, ``p_family``, the located
        stretch, ``parent_z``, ``parent``, ``finding``, ``condition``,
        ``critical_z``, ``tests``, ``dropped``, ``note``; sorted by
        ``kuiper_z``, largest first.
    """
    options = check_options(level, "holm", 1, 0)
    lazy = as_lazy(frame)
    reserved = (*SEGMENT_SCREEN_COLUMNS, *STATISTIC_COLUMNS)
    segments.check(schema_of(lazy), reserved)
    features = list(segments.features)
    check_variance(variance)
    prepared = prepare(
        lazy,
        score=score,
        response=response,
        weight=weight,
        by=features or None,
        response_range=(0.0, 1.0) if variance == "bernoulli" else None,
        reserved=reserved,
    )
    schema = {
        **{f: pl.String() for f in features},
        **EXTRA_SCHEMA,
        **SUMMARY_SCHEMA,
        **FACTS_SCHEMA,
    }

    def run(rows: compiled.Rows) -> pl.DataFrame:
        k = compiled.kernel()
        constants = compiled.facts(rows, variance)
        binary = bool(constants[next(iter(FACTS_SCHEMA))])
        coded = coded_features(rows.frame(list(segments.features)), segments)
        subsets = [s for s in segments.subsets() if s]
        columns = (rows.s, rows.r, rows.w, rows.weighted, rows.scale)
        prefix = k.prefix_table(*columns, rows.centre)
        w = (
            rows.w.astype(np.float64) * rows.scale
            if rows.weighted
            else np.full(rows.height, rows.scale)
        )
        r = rows.r.astype(np.float64)
        walked = Walked([], [], [])
        for subset in subsets:
            ids, size = subset_ids(coded, subset, rows.height)
            out, first = k.screen_groups(ids, 0, *columns, size, rows.centre, *prefix)
            walked.out.append(out)
            walked.first.append(first)
            walked.response_sums.append(np.bincount(ids, weights=w * r, minlength=size))
        return assemble(
            rows, segments, options, coded, subsets, walked,
            binary=binary, prefix=prefix, constants=constants,
        )  # fmt: skip

    stats = compiled.node(prepared, run, schema)
    keys = [*features, *_CARRIED]
    out = normalize(stats, keys, None, labels=prepared.labels, decide=False, simulated=True)
    out = family_findings(out.with_columns(holm(pl.col("kuiper_p")).alias("p_family")), level)
    out = with_parents(out, features, options.level, z="kuiper_z")
    return out.sort(
        ["kuiper_z", "depth", "condition"], descending=[True, False, False], nulls_last=True
    ).select(*features, *SEGMENT_SCREEN_COLUMNS)
