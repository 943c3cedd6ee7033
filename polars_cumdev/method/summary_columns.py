"""The columns of the per-group statistics: the public ones and the summary's internal ones.

:func:`polars_cumdev.method.statistics.summarize` (and the compiled kernel,
:mod:`polars_cumdev.method.kernel_frames`) produce :data:`SUMMARY_SCHEMA`;
:func:`polars_cumdev.method.statistics.normalize` turns it into
:data:`STATISTIC_COLUMNS`, what every screen returns after the keys.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.location import LOCATION_COLUMNS, LOCATION_SCHEMA

__all__ = [
    "C_ERROR",
    "EVENTS",
    "FACTS_SCHEMA",
    "OVERFLOWS",
    "RMAX",
    "SIGMA_B",
    "SIGMA_B_ERROR",
    "SIGMA_E",
    "SIGMA_E_ERROR",
    "STATISTIC_COLUMNS",
    "SUMMARY_SCHEMA",
]

#: What every screen returns after the keys, in this order.
STATISTIC_COLUMNS = (
    "n",
    "n_scores",
    "weight",
    "kuiper",
    "ks",
    "delta",
    "sigma",
    "kuiper_z",
    "ks_z",
    "kuiper_p",
    "ks_p",
    "kuiper_log10p",
    "ks_log10p",
    "kuiper_q",
    "ks_q",
    *LOCATION_COLUMNS,
    "variance",
    "significant",
    "note",
)

# Per group, sigma^2 under (31) and under (32); normalize picks one.
SIGMA_B = f"{nm.PREFIX}sigma_bernoulli"
SIGMA_E = f"{nm.PREFIX}sigma_empirical"
# Per group, bounds of the rounding errors: of every C_k (sum of a_k times the
# error of Rt_k), and of the two sigma^2 sums (polars_cumdev.method.bins.BinMoments).
C_ERROR = f"{nm.PREFIX}c_error"
SIGMA_B_ERROR = f"{nm.PREFIX}sigma_bernoulli_error"
SIGMA_E_ERROR = f"{nm.PREFIX}sigma_empirical_error"
# Per group, the number of points whose bin sums overflowed (BinMoments.overflow).
OVERFLOWS = f"{nm.PREFIX}overflows"
RMAX = f"{nm.PREFIX}rmax"
# Per group, its effective number of events (method/finite_sample.py) as the compiled
# screen's walk sums it (null where that walk did not, or the responses are not 0/1).
EVENTS = f"{nm.PREFIX}events"
#: The columns of :func:`is_binary`, with their types.
FACTS_SCHEMA: dict[str, pl.DataType] = {nm.BINARY: pl.Boolean(), RMAX: pl.Float64()}
#: Columns of :func:`summarize` after the keys, with their types.
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "n": pl.Int64(),
    "n_scores": pl.Int64(),
    **{
        name: pl.Float64()
        for name in ("weight", "kuiper", "ks", "delta", SIGMA_B, SIGMA_E, C_ERROR)
    },
    SIGMA_B_ERROR: pl.Float64(),
    SIGMA_E_ERROR: pl.Float64(),
    OVERFLOWS: pl.Int64(),
    **LOCATION_SCHEMA,
}
