"""Screen and calibrate data that lives in a Dask cluster (``pip install "polars-cumdev[dask]"``).

The score-range decomposition of :mod:`polars_cumdev.engines.partitioned` run as
Dask tasks on Polars frames (:mod:`polars_cumdev.engines.cluster.dask_engine`); see
the workflow page "Screening on a cluster". Importing this module imports no
Dask; the functions do, and raise
:class:`~polars_cumdev.engines.cluster.EngineMissingError` when it is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_cumdev.method.findings import LEVEL
from polars_cumdev.progress import Progress, reporting

__all__ = [
    "apply",
    "calibration",
    "calibration_drift",
    "local_cluster",
    "multicalibration",
    "screen",
]


def screen(
    source: Any,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "auto",
    ranges: int | Sequence[float] | None = None,
    scheduler: Any = None,
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """:func:`polars_cumdev.subpopulation.screen` of data in a Dask cluster.

    The rows stay on the workers: they are checked and summarized per part,
    split into score ranges and each range reduced by one task
    (:func:`polars_cumdev.engines.partitioned.range_step`); only per-(range, group)
    summaries reach the driver, which combines them (method.md 1.2-1.6).

    Parameters
    ----------
    source
        A ``dask.dataframe.DataFrame``, or Parquet input: a file, a
        directory of ``*.parquet`` files, a glob or a list of files (read
        by the workers with PyArrow, about a million rows per task).
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number of score ranges or the cut points; by default one range per
        100,000 rows up to 32 ranges, and at least one per
        :data:`polars_cumdev.engines.partitioned.ROWS_PER_RANGE` rows: a
        function of the row count alone, so that the same data give the same
        bits on any cluster
        (:func:`polars_cumdev.engines.cluster.steps.default_ranges`).
    scheduler
        A ``distributed.Client``, a scheduler address such as
        ``"tcp://10.0.0.5:8786"``, or None: the current client if there is
        one, else a ``LocalCluster`` started (and closed) for this call.
    level
        Significance level of the located stretch, as in
        :func:`polars_cumdev.subpopulation.screen`.
    progress
        ``True``: a line of progress (elapsed seconds and step) on stderr
        after each step; a callable (e.g. ``print``) receives the lines
        instead (:mod:`polars_cumdev.progress`). Off by default.

    Returns
    -------
    pl.DataFrame
        The in-process screen's columns, rows and order (equal to rounding),
        the located stretch included (stated for the significant groups only,
        :mod:`polars_cumdev.method.findings`): when some such group has D > 2 sigma, the
        ranges holding them are stepped a second time, for them only
        (:mod:`polars_cumdev.engines.partitioned.locating`).

    Raises
    ------
    CumdevError
        The in-process screen's errors for bad input (same class and
        message), or :class:`~polars_cumdev.engines.cluster.EngineMissingError`.
    """
    from polars_cumdev.engines.cluster import dask_engine

    with reporting(progress) as say:
        return dask_engine.screen(
            source,
            by,
            score,
            response,
            weight,
            variance=variance,
            ranges=ranges,
            scheduler=scheduler,
            level=level,
            log=say,
        )


def calibration(
    source: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    scheduler: Any = None,
    level: float = LEVEL,
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.calibration.calibration` per group of data in a Dask cluster.

    The rows are split by score range and each range is walked by one task
    (:mod:`polars_cumdev.engines.cluster.dask_calibration`): a group's curve
    is the concatenation of its ranges' partial walks (method.md 2), so no
    group, and without ``by`` not the whole frame, has to fit in one task's
    memory. Only per-(range, group) summaries reach the driver (and the rows
    of the few groups whose p-values are simulated); with the same cuts, the
    bits are those of :func:`polars_cumdev.partitioned.calibration_partitioned`.

    Parameters
    ----------
    source, scheduler
        As in :func:`screen`.
    score, response, weight, by, level
        As in :func:`polars_cumdev.calibration.calibration`.
    ranges
        As in :func:`screen`.

    Returns
    -------
    pl.DataFrame
        The in-process calibration's columns, rows and order.
    """
    from polars_cumdev.engines.cluster import dask_calibration

    return dask_calibration.calibration(
        source, score, response, weight, by=by, scheduler=scheduler, level=level, ranges=ranges
    )


def local_cluster(workers: int | None = None) -> Any:
    """A ``distributed.Client`` on a new ``LocalCluster`` (one single-threaded process per core)."""
    from polars_cumdev.engines.cluster import dask_engine

    return dask_engine.local_cluster(workers)


def calibration_drift(
    source: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    time: str,
    every: str = "1w",
    period: str | None = None,
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    adjustment: str = "holm",
    scheduler: Any = None,
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.drift.calibration_drift` of data that lives in Dask.

    The windows are made on the workers: one pass counts each part's null
    times and finds its first and last window (the driver raises the
    in-process error for a null time), a second replaces each row's time by
    its window start (repeating a row once per window when ``period`` makes
    them overlap); then the windowed rows are calibrated as :func:`calibration`
    calibrates them, by score ranges with the window start as one more key
    beside ``by`` (no (group, window) has to fit in one task), and only the
    one row per (group, window) reaches the driver, which adjusts across the
    windows (Holm or Bonferroni, :func:`polars_cumdev.drift.family_wise`).

    Parameters
    ----------
    source
        A ``dask.dataframe.DataFrame`` or Parquet input (as in :func:`screen`).
    score, response, weight, time, every, period, by, alpha, adjustment
        As in :func:`polars_cumdev.drift.calibration_drift` (column names
        only, no expressions).
    scheduler
        As in :func:`screen`.
    ranges
        As in :func:`calibration`; the default counts the windowed rows (a
        row repeated per window it falls in counts once per window).

    Returns
    -------
    pl.DataFrame
        The in-process table: its columns, rows and order, its statistics to
        1e-12 relative and the same ``significant``/``flagged`` decision per
        window (the engines' p-values are :func:`calibration`'s); with the
        same cuts, the bits of :func:`polars_cumdev.partitioned.calibration_partitioned`
        of the windowed rows keyed by (group, window), adjusted as in process.

    Raises
    ------
    CumdevError
        The in-process errors for bad arguments and bad rows (same class and
        message).
    """
    from polars_cumdev.engines.cluster.drift_engines import dask_drift

    return dask_drift(
        source, score, response, weight, time=time, every=every, period=period, by=by,
        alpha=alpha, adjustment=adjustment, scheduler=scheduler, ranges=ranges,
    )  # fmt: skip


def apply(ddf: Any, fix: Any, name: str = "recalibrated", *, scheduler: Any = None) -> Any:
    """A Dask DataFrame with the recalibrated score of ``fix`` added to every row, where it lives.

    Each partition's columns that the fix reads go through the fix's Polars
    expression on the worker holding it (``map_partitions``;
    :mod:`polars_cumdev.engines.cluster.scoring`): the new column holds the
    same bits as :meth:`polars_cumdev.recalibration.Recalibration.apply` in
    process; the other columns pass through untouched. Lazy, like any Dask
    DataFrame; only the check that the workers import the package runs now.

    Parameters
    ----------
    ddf
        A ``dask.dataframe.DataFrame`` holding the fix's score and feature columns.
    fix
        A :class:`polars_cumdev.recalibration.Recalibration`.
    name
        The new column (float64); one of that name is replaced in place.
    scheduler
        The ``distributed.Client`` whose workers are checked, or None: the
        current client if there is one (else Dask's local scheduler runs the
        partitions in this process, and nothing needs checking).

    Returns
    -------
    dask.dataframe.DataFrame
        ``ddf`` with column ``name``.

    Raises
    ------
    CumdevError
        A column the fix reads is missing (the in-process message) or has a
        type the fix cannot read; the workers cannot import polars_cumdev.
    """
    from polars_cumdev.engines.cluster.scoring import dask_apply

    return dask_apply(ddf, fix, name, scheduler)


def multicalibration(
    source: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    segments: Any,
    level: float = 0.05,
    method: str = "holm",
    locate: bool = True,
    scheduler: Any = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.multicalibration.multicalibration` of data in a Dask cluster.

    The segment levels are found from value tables added up over the parts
    (the same levels whatever the partitioning); each row is then repeated
    once per feature subset with its segment's number (one pass serves every
    subset) and the segments are calibrated as the groups of
    :func:`calibration` (each whole in one task, so one segment, the whole
    population among them, must fit in a task's memory); the driver adjusts
    over the family (Holm, as in process) and judges the echoes, for which
    only the few significant segments it examines send their rows
    (:mod:`polars_cumdev.engines.cluster.segments`).

    Parameters
    ----------
    source, scheduler
        As in :func:`screen`.
    score, response, weight, segments, level, locate
        As in :func:`polars_cumdev.multicalibration.multicalibration`
        (column names only); ``segments`` with ``rules="cumdev"``.
    method
        ``"holm"`` only: the bootstrap redraws every row per resample and
        runs in process.

    Returns
    -------
    pl.DataFrame
        The in-process table: its columns, rows and order, its statistics
        within 1e-12 relative and the same family-wise decision, finding and
        echoes.

    Raises
    ------
    CumdevError
        The in-process errors for bad arguments and rows (same class and
        message); :class:`~polars_cumdev.errors.InvalidParameterError` for
        ``method`` other than ``"holm"``, ``rules="mcgrad"`` or an integer
        numerical feature beyond +-2^53.
    """
    from polars_cumdev.engines.cluster.segment_engines import dask_multicalibration

    return dask_multicalibration(
        source, score, response, weight, segments=segments, level=level, method=method,
        locate=locate, scheduler=scheduler,
    )  # fmt: skip
