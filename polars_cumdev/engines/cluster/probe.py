"""One cheap task before a cluster screen: can the workers import ``polars_cumdev``?

A Spark executor or Dask worker whose Python lacks the package fails in the
middle of the first real task, deep inside a Java or Dask traceback
(``ModuleNotFoundError: No module named 'polars_cumdev'``). The probe runs a
tiny function on the workers first; the function is defined inside the probe
so that it is shipped by value (cloudpickle), and needs nothing from the
package to run. When a worker cannot import the package, or runs another
version of it, the probe raises a :class:`WorkersCannotImportError` that says
what to do.

A Spark application or a Dask client that passed the probe is remembered, so
the probe costs one small job per session, not per call.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any

from polars_cumdev.errors import CumdevError

__all__ = ["WorkersCannotImportError", "probe_dask", "probe_spark"]

_SPARK_FIX = (
    "Point the executors to a Python that has polars-cumdev installed: set the "
    "environment variable PYSPARK_PYTHON=/path/to/that/python before the session "
    "starts, or the setting spark.pyspark.python; on a cluster, ship an environment "
    "with spark.archives (e.g. spark.archives=env.tar.gz#env made with venv-pack, and "
    "spark.pyspark.python=./env/bin/python). polars_cumdev.spark.local_session() uses "
    "this Python for you. See the docs' 'Screening on a cluster'."
)
_DASK_FIX = (
    "Install polars-cumdev (the same version) in the Python environment the Dask "
    "workers run, then restart them. See the docs' 'Screening on a cluster'."
)

_passed: set[Any] = set()


class WorkersCannotImportError(CumdevError):
    """The cluster's workers cannot import ``polars_cumdev`` (or run another version of it)."""


def _driver_version() -> str:
    # The package is imported already (this module is part of it); reading its
    # version through sys.modules keeps this engine module from importing the
    # package root, a face above it (tests/test_architecture.py).
    return str(sys.modules["polars_cumdev"].__version__)


def _make_check():
    """The function run on a worker, built here so that cloudpickle ships it by value."""

    def check(*_: Any) -> tuple[str, str, str]:
        import importlib
        import sys

        try:  # the import this probe is about, on the worker
            package = importlib.import_module("polars_cumdev")
            return ("ok", str(package.__version__), sys.executable)
        except Exception as exc:
            return ("error", f"{type(exc).__name__}: {exc}", sys.executable)

    return check


def _judge(engine: str, where: str, answers: list[tuple[str, str, str]], fix: str) -> None:
    version = _driver_version()
    for status, detail, python in answers:
        if status != "ok":
            raise WorkersCannotImportError(
                f"the {engine} {where} cannot import polars_cumdev: their Python "
                f"({python}) says {detail}. {fix}"
            )
        if detail != version:
            raise WorkersCannotImportError(
                f"the {engine} {where} run polars_cumdev {detail} ({python}), the driver "
                f"runs {version}: install the same version on both. {fix}"
            )


def _python_error(message: str) -> str:
    """The Python exception line of a Java error message, or its first line."""
    found = re.findall(r"^\s*(\w+(?:Error|Exception): .*)$", message, re.M)
    python = [f for f in found if not f.startswith(("org.", "java.", "py4j."))]
    if python:
        return python[-1].strip()
    return message.strip().splitlines()[0][:300] if message.strip() else repr(message)


def probe_spark(spark: Any) -> None:
    """Run one task on the executors of ``spark`` (a SparkSession) that imports the package.

    Raises
    ------
    WorkersCannotImportError
        When the executors' Python cannot import ``polars_cumdev``, runs
        another version, or cannot start; the message says how to fix it.
    """
    context = spark.sparkContext
    key = ("spark", context.applicationId)
    if key in _passed:
        return
    try:
        answers = context.parallelize([0], 1).map(_make_check()).collect()
    except Exception as exc:
        raise WorkersCannotImportError(
            "the Spark executors could not run a Python task: "
            f"{_python_error(str(exc))}. {_SPARK_FIX}"
        ) from None
    _judge("Spark", "executors", answers, _SPARK_FIX)
    _passed.add(key)


def probe_dask(client: Any) -> None:
    """Run the import check on every worker of ``client`` (a ``distributed.Client``).

    Raises
    ------
    WorkersCannotImportError
        When some worker's Python cannot import ``polars_cumdev`` or runs
        another version; the message names the worker's Python and the fix.
    """
    workers = tuple(sorted(client.scheduler_info().get("workers", {})))
    key = ("dask", id(client), workers)
    if key in _passed:
        return
    for attempt in range(_ATTEMPTS):
        try:
            answers = client.run(_make_check())
            break
        except Exception as exc:
            if not _lost(exc):
                raise WorkersCannotImportError(
                    f"the Dask workers could not run a Python task: {type(exc).__name__}: "
                    f"{exc}. {_DASK_FIX}"
                ) from None
            if attempt == _ATTEMPTS - 1:  # (not an import failure: say what happened)
                raise CumdevError(
                    "a Dask worker was lost while the workers were checked "
                    f"({type(exc).__name__}: {exc}), {_ATTEMPTS} times in a row: "
                    "see the scheduler's log for the workers that died, and retry"
                ) from None
            time.sleep(1.0)  # a worker died while answering: ask those alive then
    _judge("Dask", "workers", list(answers.values()), _DASK_FIX)
    _passed.add(key)


#: How many times the check is asked of the workers when one of them is lost meanwhile.
_ATTEMPTS = 3


def _lost(exc: BaseException) -> bool:
    """Whether ``exc`` says a worker went away (its connection closed), not that it failed."""
    names = {k.__name__ for k in type(exc).__mro__}
    return bool(names & {"CommClosedError", "StreamClosedError", "KilledWorker"}) or isinstance(
        exc, (ConnectionError, TimeoutError)
    )
