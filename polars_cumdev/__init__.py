"""polars-cumdev: cumulative deviation of subpopulations and calibration, as lazy Polars queries.

Importing the package registers the ``cumdev`` namespace on
:class:`polars.DataFrame` and :class:`polars.LazyFrame`; :func:`cumdev` returns
it with its types known (``cumdev(df).screen(...)``). The functions
(:func:`screen`, :func:`curve`, and those of the analysis modules) follow
their input as the namespace does: a DataFrame in, a DataFrame out; a
LazyFrame in, a LazyFrame out. Column arguments take names or expressions.
"""

from __future__ import annotations

from polars_cumdev import namespace as _namespace  # noqa: F401  (registers `cumdev`)
from polars_cumdev.covariates.hilbert import hilbert_index
from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CumdevError,
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
    OverlapError,
    TiedScoresError,
)
from polars_cumdev.method.pvalues import ks_pvalue, kuiper_pvalue
from polars_cumdev.namespace import cumdev
from polars_cumdev.subpopulation import curve, screen

__version__ = "0.1.0"

__all__ = [
    "ColumnNotFoundError",
    "ColumnTypeError",
    "CumdevError",
    "EmptySubpopulationError",
    "InvalidParameterError",
    "InvalidValuesError",
    "OverlapError",
    "TiedScoresError",
    "__version__",
    "cumdev",
    "curve",
    "hilbert_index",
    "ks_pvalue",
    "kuiper_pvalue",
    "screen",
    "segments",
]


def __getattr__(name: str) -> object:
    """``segments`` is imported on first use: the multicalibration family stays out of import."""
    if name == "segments":
        from polars_cumdev.multicalibration.family import segments

        return segments
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
