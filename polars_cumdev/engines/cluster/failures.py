"""Spark's own failures, told in one line as a :class:`~polars_cumdev.errors.CumdevError`.

A Spark DataFrame the user built reads its files only when a job runs; a
file Spark cannot read (a column of another type, a damaged data page) then
fails the job with a ``Py4JJavaError`` of a hundred lines of Java stack, or a
PySpark ``CapturedException``. :func:`spark_errors` wraps the public Spark
functions so that such a failure becomes one :class:`CumdevError` that says
it came from reading the input on Spark, with Spark's own summary line (which
names the file), and a :class:`CumdevError` raised inside a Python task
comes back with its own message.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from polars_cumdev.errors import CumdevError

__all__ = ["spark_errors", "spark_failure"]

T = TypeVar("T")

_CUMDEV = re.compile(r"polars_cumdev\.errors\.(\w+): (.*)")
_CLASS = re.compile(r"\[[A-Z_.]+\] ")
_SUMMARY = re.compile(r"(?:org\.apache\.spark\.\w+|java\.[\w.]+): (.+)")


def _from_spark(exc: BaseException) -> bool:
    return any(k.__module__.split(".")[0] in ("py4j", "pyspark") for k in type(exc).__mro__[:-1])


def spark_failure(exc: BaseException) -> CumdevError:
    """The one-line :class:`CumdevError` for a failure Spark raised."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):  # a CumdevError raised in a Python task
        found = _CUMDEV.search(line)
        if found:
            return CumdevError(found.group(2))
    summaries = [m.group(1) for line in lines if (m := _SUMMARY.search(line))]
    # Spark's own error classes ("[FAILED_READ_FILE.NO_HINT] ... reading file ...")
    # say what failed; wrappers such as "Exception thrown in awaitResult:" do not.
    classed = [s for s in summaries if _CLASS.match(s)]
    if classed or summaries:
        summary = (classed or summaries)[0]
    else:
        summary = next((line for line in lines if not line.startswith("at ")), type(exc).__name__)
    return CumdevError(f"Spark could not read or process the input: {summary[:500]}")


def spark_errors(function: Callable[..., T]) -> Callable[..., T]:
    """Run ``function``, turning a failure Spark raised into :func:`spark_failure`'s error."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> T:
        try:
            return function(*args, **kwargs)
        except CumdevError:
            raise
        except Exception as exc:
            if not _from_spark(exc):
                raise
            raise spark_failure(exc) from None

    return run
