"""The ``cumdev`` namespace on :class:`polars.DataFrame` and :class:`polars.LazyFrame`.

The classes are thin: each method forwards to the module that implements it.
On a LazyFrame every method returns a LazyFrame; on a DataFrame it returns the
collected DataFrame.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.namespace.base import F
from polars_cumdev.namespace.calibration import CalibrationMethods
from polars_cumdev.namespace.subpopulations import SubpopulationMethods

__all__ = ["CumdevFrame", "CumdevLazyFrame", "CumdevNamespace"]


class CumdevNamespace(SubpopulationMethods[F], CalibrationMethods[F]):
    """The methods of ``frame.cumdev``, shared by both frame kinds.

    Reached as ``df.cumdev`` (:class:`CumdevFrame`, eager results) or
    ``lf.cumdev`` (:class:`CumdevLazyFrame`, lazy results); each method
    forwards to the function of the module that implements it.
    """


@pl.api.register_dataframe_namespace("cumdev")
class CumdevFrame(CumdevNamespace[pl.DataFrame]):
    """``df.cumdev``: eager results."""

    def _out(self, result: pl.LazyFrame) -> pl.DataFrame:
        # The data are in memory already; Polars' in-memory engine runs these
        # plans faster than the streaming default up to millions of rows, and
        # about as fast at ten million (benchmarks/README.md).
        return result.collect(engine="in-memory")


@pl.api.register_lazyframe_namespace("cumdev")
class CumdevLazyFrame(CumdevNamespace[pl.LazyFrame]):
    """``lf.cumdev``: lazy results that chain into further queries."""

    def _out(self, result: pl.LazyFrame) -> pl.LazyFrame:
        return result
