"""The figures a modeller reports about a multicalibration audit, in one row.

From the table of :func:`~polars_cumdev.multicalibration.multicalibration`:
the largest z and its family-wise p-value, the critical z at the chosen level
and the minimum detectable ECCE (critical z times the full population's
sigma), the number of segments significant family-wise and of new findings;
and MCGrad's aggregates as ``multicalibration-mcgrad.md`` section (c) defines
them, to cross-check numbers: with sigma_0 the full population's sigma and
pi* = min(pi, 1 - pi) for its mean response pi,
``mce_sigma`` = max_g z_g, ``mce`` = mce_sigma sigma_0,
``mce_relative`` = 100 mce / pi*, ``mce_pvalue`` = p(mce_sigma) (unadjusted),
``mde`` = 5 sigma_0, ``mde_relative`` = 100 mde / pi*, ``global_ecce`` and
``global_ecce_sigma`` (the full population's ECCE-R and z).
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.expressions import entry_point
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.method.pvalues import kuiper_pvalue
from polars_cumdev.method.significance import pvalue

__all__ = ["summary"]


@entry_point()
def summary(table: FrameLike, level: float = 0.05) -> pl.LazyFrame:
    """One row summarizing a multicalibration table (see the module docstring).

    Parameters
    ----------
    table
        Output of :func:`~polars_cumdev.multicalibration.multicalibration`.
    level
        The family-wise level the table was computed at (checked; the count
        of significant segments is that of the table's ``significant``
        column, the decision made at that level).

    Returns
    -------
    pl.LazyFrame
        ``segments``, ``tests``, ``dropped``, ``pooled`` (what the level
        rule pooled into ``(other)``, values and rows per feature; null when
        nothing), ``significant`` (segments whose ``significant`` is true),
        ``new_findings``, ``max_z``, ``p_family``, ``critical_z``,
        ``min_detectable_ecce``, ``mce``, ``mce_sigma``, ``mce_relative``,
        ``mce_pvalue``, ``mde``, ``mde_relative``, ``global_ecce``,
        ``global_ecce_sigma``.
    """
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be a number in (0, 1), got {level!r}")
    lazy = as_lazy(table)
    full = pl.col("depth") == 0
    sigma0 = pl.col("sigma").filter(full).first()
    pi = pl.col("response_mean").filter(full).first()
    pi_star = pl.min_horizontal(pi, 1.0 - pi)
    mce_sigma = pl.col("ecce_r_z").max()
    return lazy.select(
        pl.len().cast(pl.Int64).alias("segments"),
        pl.col("tests").first(),
        pl.col("dropped").first(),
        pl.col("pooled").first(),
        pl.col("significant").fill_null(False).sum().cast(pl.Int64).alias("significant"),
        (pl.col("finding") == "new").sum().cast(pl.Int64).alias("new_findings"),
        mce_sigma.alias("max_z"),
        pl.col("p_family").min().alias("p_family"),
        pl.col("critical_z").first(),
        (pl.col("critical_z").first() * sigma0).alias("min_detectable_ecce"),
        (mce_sigma * sigma0).alias("mce"),
        mce_sigma.alias("mce_sigma"),
        (100.0 * mce_sigma * sigma0 / pi_star).alias("mce_relative"),
        pvalue(mce_sigma, kuiper_pvalue).alias("mce_pvalue"),
        (5.0 * sigma0).alias("mde"),
        (500.0 * sigma0 / pi_star).alias("mde_relative"),
        pl.col("ecce_r").filter(full).first().alias("global_ecce"),
        pl.col("ecce_r_z").filter(full).first().alias("global_ecce_sigma"),
    )
