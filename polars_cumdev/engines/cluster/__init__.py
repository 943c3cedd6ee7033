"""Screening data that lives in a Spark or Dask cluster (the public entry points are
:mod:`polars_cumdev.spark` and :mod:`polars_cumdev.dask`).

The range-partitioned screen of :mod:`polars_cumdev.engines.partitioned` splits the
screen into per-batch summaries, a per-score-range step that is a pure
function of the range's rows and a small plan, and a combination on the
driver. This package runs those pieces on an engine:

- :mod:`.request`: the arguments and the schema, rebuilt identically on every worker;
- :mod:`.checks`: the in-process row checks counted per batch and raised on the driver;
- :mod:`.steps`: what each task and the driver compute, engine-neutral;
- :mod:`.spark_engine`, :mod:`.dask_engine`: moving Polars frames with each engine
  (on Spark with :mod:`.spark_jobs`, the tasks' frames and results, and
  :mod:`.spark_ranges`, the score ranges' cuts and routing).

Importing this package imports no engine; the engine modules import theirs
when called, and say which extra to install when it is missing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from polars_cumdev.errors import CumdevError

__all__ = ["EngineMissingError", "require"]


class EngineMissingError(CumdevError):
    """A cluster engine (pyspark, dask) is not installed."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise :class:`EngineMissingError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EngineMissingError(
            f"the {extra} engine needs {module!r} ({exc}); install it with "
            f'pip install "polars-cumdev[{extra}]"'
        ) from None
