"""Screen and calibrate data that lives in Spark (``pip install "polars-cumdev[spark]"``).

The score-range decomposition of :mod:`polars_cumdev.engines.partitioned` run on
Spark executors over Arrow batches (:mod:`polars_cumdev.engines.cluster.spark_engine`);
see the workflow page "Screening on a cluster". Importing this module imports
no PySpark; the functions do, and raise
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
    "local_session",
    "multicalibration",
    "screen",
]


def screen(
    sdf: Any,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "auto",
    ranges: int | Sequence[float] | None = None,
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """:func:`polars_cumdev.subpopulation.screen` of a Spark DataFrame.

    The rows never come to the driver: the cut points from a sample of the
    distinct scores (at most 100,000, the same however the data are
    partitioned), each partition's check counts and
    per-(range, group) cell summaries from one ``mapInArrow`` pass, and each
    score range's step (:func:`polars_cumdev.engines.partitioned.range_step`) from
    one task after a shuffle by range (method.md 1.2-1.6). The driver
    combines the small results.

    Parameters
    ----------
    sdf
        A ``pyspark.sql.DataFrame``. It is read three times (the score
        column through Python for the row count and the sample of the cut
        points, then two passes through Python): cache it first
        when its lineage is expensive.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number of score ranges or the cut points; by default one range per
        100,000 rows up to 32 ranges, and at least one per
        :data:`polars_cumdev.engines.partitioned.ROWS_PER_RANGE` rows: a
        function of the row count alone, so that the same data give the same
        bits on any cluster
        (:func:`polars_cumdev.engines.cluster.steps.default_ranges`). One task
        holds one range's rows.
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
    from polars_cumdev.engines.cluster import spark_engine

    with reporting(progress) as say:
        return spark_engine.screen(
            sdf, by, score, response, weight, variance=variance, ranges=ranges, level=level, log=say
        )


def calibration(
    sdf: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    level: float = LEVEL,
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.calibration.calibration` per group of a Spark DataFrame.

    The rows are shuffled by score range and each range is walked by one
    task (:mod:`polars_cumdev.engines.cluster.spark_calibration`): a group's
    curve is the concatenation of its ranges' partial walks (method.md 2),
    so no group, and without ``by`` not the whole frame, has to fit in one
    task's memory. Only per-(range, group) summaries reach the driver (and
    the rows of the few groups whose p-values are simulated); with the same
    cuts, the bits are those of
    :func:`polars_cumdev.partitioned.calibration_partitioned`.

    Parameters
    ----------
    sdf
        A ``pyspark.sql.DataFrame``.
    score, response, weight, by, level
        As in :func:`polars_cumdev.calibration.calibration`.
    ranges
        As in :func:`screen`.

    Returns
    -------
    pl.DataFrame
        The in-process calibration's columns, rows and order.
    """
    from polars_cumdev.engines.cluster.spark_calibration import calibration_by_ranges

    return calibration_by_ranges(sdf, score, response, weight, by=by, level=level, ranges=ranges)


def local_session(master: str = "local[2]") -> Any:
    """A ``SparkSession`` for ``master``, set up for these tasks (see the cluster workflow)."""
    from polars_cumdev.engines.cluster import spark_engine

    return spark_engine.local_session(master)


def calibration_drift(
    sdf: Any,
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
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.drift.calibration_drift` of data that lives in Spark.

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
    sdf
        A ``pyspark.sql.DataFrame``.
    score, response, weight, time, every, period, by, alpha, adjustment
        As in :func:`polars_cumdev.drift.calibration_drift` (column names
        only, no expressions).
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
    from polars_cumdev.engines.cluster.drift_engines import spark_drift

    return spark_drift(
        sdf, score, response, weight, time=time, every=every, period=period, by=by,
        alpha=alpha, adjustment=adjustment, ranges=ranges,
    )  # fmt: skip


def apply(sdf: Any, fix: Any, name: str = "recalibrated") -> Any:
    """A Spark DataFrame with the recalibrated score of ``fix`` added to every row, where it lives.

    Each Arrow batch's columns that the fix reads go through the fix's
    Polars expression on the executors (``mapInArrow``;
    :mod:`polars_cumdev.engines.cluster.scoring`): the new column holds the
    same bits as :meth:`polars_cumdev.recalibration.Recalibration.apply` in
    process; the other columns pass through untouched. Lazy, like any Spark
    transformation: nothing runs until the result is written or collected,
    except one small job checking that the executors import the package.

    Parameters
    ----------
    sdf
        A ``pyspark.sql.DataFrame`` holding the fix's score and feature columns.
    fix
        A :class:`polars_cumdev.recalibration.Recalibration` (from
        :func:`polars_cumdev.recalibrate` or ``Recalibration.from_json``).
    name
        The new column (a double); one of that name is replaced in place.

    Returns
    -------
    pyspark.sql.DataFrame
        ``sdf`` with column ``name``.

    Raises
    ------
    CumdevError
        A column the fix reads is missing (the in-process message) or has a
        type the fix cannot read; the executors cannot import polars_cumdev.
    """
    from polars_cumdev.engines.cluster.scoring import spark_apply

    return spark_apply(sdf, fix, name)


def multicalibration(
    sdf: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    segments: Any,
    level: float = 0.05,
    method: str = "holm",
    locate: bool = True,
) -> pl.DataFrame:
    """:func:`polars_cumdev.multicalibration.multicalibration` of a Spark DataFrame.

    As :func:`polars_cumdev.dask.multicalibration`: the levels from value
    tables added up over the partitions, each row repeated once per feature
    subset with its segment's number (``mapInArrow``), the segments
    repartitioned and calibrated whole as the groups of :func:`calibration`
    (one segment, the whole population among them, must fit in a task's
    memory), Holm and the echoes on the driver
    (:mod:`polars_cumdev.engines.cluster.segments`).

    Parameters
    ----------
    sdf
        A ``pyspark.sql.DataFrame``.
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
    from polars_cumdev.engines.cluster.segment_spark import spark_multicalibration

    return spark_multicalibration(
        sdf, score, response, weight, segments=segments, level=level, method=method,
        locate=locate,
    )  # fmt: skip
