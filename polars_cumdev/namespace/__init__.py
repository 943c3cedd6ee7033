"""The ``cumdev`` namespace on :class:`polars.DataFrame` and :class:`polars.LazyFrame`.

The classes are thin: each method forwards to the module that implements it.
On a LazyFrame every method returns a LazyFrame; on a DataFrame it returns the
collected DataFrame, as the functions themselves do. Typed code reaches the
same methods through :func:`polars_cumdev.cumdev`.
"""

from __future__ import annotations

from typing import overload

import polars as pl

from polars_cumdev.engines.scans import check_scans
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.namespace.base import F, column_names
from polars_cumdev.namespace.calibration import CalibrationMethods
from polars_cumdev.namespace.subpopulations import SubpopulationMethods

__all__ = ["CumdevFrame", "CumdevLazyFrame", "CumdevNamespace", "cumdev"]


class CumdevNamespace(SubpopulationMethods[F], CalibrationMethods[F]):
    """The methods of ``frame.cumdev``, shared by both frame kinds.

    Reached as ``df.cumdev`` (:class:`CumdevFrame`, eager results) or
    ``lf.cumdev`` (:class:`CumdevLazyFrame`, lazy results); each method
    forwards to the function of the module that implements it.
    """


@pl.api.register_dataframe_namespace("cumdev")
class CumdevFrame(CumdevNamespace[pl.DataFrame]):
    """``df.cumdev``: eager results."""

    def _out(self, result: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
        # The functions return a DataFrame for a DataFrame (collected with
        # Polars' in-memory engine, polars_cumdev.method.expressions); a
        # LazyFrame (from a method that always builds one) is collected here
        # the same way.
        if isinstance(result, pl.DataFrame):
            return result
        return result.collect(engine="in-memory")


@pl.api.register_lazyframe_namespace("cumdev")
class CumdevLazyFrame(CumdevNamespace[pl.LazyFrame]):
    """``lf.cumdev``: lazy results that chain into further queries."""

    def _data(self, *columns: object) -> pl.LazyFrame:
        # The Parquet files the user's query reads are checked against each
        # other for the used columns now, from their footers: a file that does
        # not agree would fail inside Polars, raw, when the result is collected.
        check_scans(self._frame, column_names(columns))
        return self._frame

    def _out(self, result: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
        return result.lazy()


@overload
def cumdev(frame: pl.DataFrame) -> CumdevFrame: ...


@overload
def cumdev(frame: pl.LazyFrame) -> CumdevLazyFrame: ...


def cumdev(frame: pl.DataFrame | pl.LazyFrame) -> CumdevFrame | CumdevLazyFrame:
    """``frame.cumdev``, typed: the namespace of a DataFrame or a LazyFrame.

    Type checkers do not see namespaces registered at run time (mypy says
    ``"DataFrame" has no attribute "cumdev"``); ``cumdev(df).screen(...)`` is
    the same call as ``df.cumdev.screen(...)`` with its types known: a
    :class:`CumdevFrame` (results are DataFrames) for a DataFrame, a
    :class:`CumdevLazyFrame` (results are LazyFrames) for a LazyFrame.

    Parameters
    ----------
    frame
        A polars DataFrame or LazyFrame.

    Returns
    -------
    CumdevFrame or CumdevLazyFrame
        The namespace, as ``frame.cumdev`` returns it.

    Examples
    --------
    >>> import polars_cumdev as pc
    >>> from polars_cumdev.datasets import census
    >>> ranked = pc.cumdev(census()).screen(
    ...     by="county", score="log10_income", response="has_internet", weight="WGTP"
    ... )
    >>> ranked.height
    41
    """
    if isinstance(frame, pl.DataFrame):
        return CumdevFrame(frame)
    if isinstance(frame, pl.LazyFrame):
        return CumdevLazyFrame(frame)
    raise InvalidParameterError(
        f"cumdev() takes a polars DataFrame or LazyFrame, got {type(frame).__name__}"
    )
