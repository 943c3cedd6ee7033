"""What every Spark job of the cluster engines is made of: Polars frames in, small results out.

The screen (:mod:`.spark_engine`), the calibration by score ranges
(:mod:`.spark_calibration`), the segments (:mod:`.segment_spark`) and drift
(:mod:`.drift_engines`) all run Python functions over a Spark DataFrame's
partitions with ``mapInArrow``. This module holds the pieces they share:

- the request rebuilt from the Spark DataFrame's schema, after its files are
  checked (:func:`spark_request`, :func:`polars_schema`);
- in a task, the partition's Arrow batches as one Polars frame (converted
  with :func:`polars.from_arrow`, no pandas), conformed to the request
  (:func:`partition_frame`);
- out of a task, each small result pickled into one row ``(range, payload)``
  (:func:`payload_batch`, :data:`PAYLOAD_SCHEMA`), unpickled on the driver
  (:func:`collect_payloads`), or gathered for a function of every partition
  (:func:`batches`);
- the one count the weight checks need (:func:`count_below`) and the one
  PySpark warning silenced around each entry point (:func:`without_pandas_warning`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import finite, require, steps
from polars_cumdev.engines.cluster.repeats import Repeat, RepeatedRange
from polars_cumdev.engines.cluster.request import Kind, Request, make_request
from polars_cumdev.engines.cluster.spark_files import check_spark_files

__all__ = [
    "MOST_LISTED",
    "PAYLOAD",
    "PAYLOAD_SCHEMA",
    "batches",
    "collect_payloads",
    "count_below",
    "of_groups",
    "partition_frame",
    "payload_batch",
    "polars_schema",
    "spark_request",
    "without_pandas_warning",
]

#: The column of a task's output row holding its pickled result.
PAYLOAD = "payload"
#: The Spark schema of a task's output rows (``mapInArrow``'s second argument).
PAYLOAD_SCHEMA = f"range long, {PAYLOAD} binary"


def polars_schema(sdf: Any) -> pl.Schema:
    """The Polars schema of a Spark DataFrame (through its Arrow schema)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # A TimestampType column reaches the Python workers in the session's time zone.
    zone = sdf.sparkSession.conf.get("spark.sql.session.timeZone")
    return pl.from_arrow(to_arrow_schema(sdf.schema, timezone=zone).empty_table()).schema


def spark_request(kind: Kind, sdf: Any, by, score, response, weight, variance) -> Request:
    """The request of an analysis of ``sdf`` (pyspark and pyarrow required, files checked)."""
    require("pyspark", "spark")
    require("pyarrow", "spark")
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    names = [c for c in [*keys, score, response, weight] if isinstance(c, str)]
    # The files behind the frame are checked against each other first, as the
    # in-process Parquet screen and the Dask engine check them (same message).
    check_spark_files(sdf, names)
    return make_request(kind, polars_schema(sdf), by, score, response, weight, variance)


def partition_frame(batches: Iterator[Any], request: Request) -> pl.DataFrame:
    """A partition's Arrow batches as one Polars frame (the request's schema when empty)."""
    import pyarrow as pa

    batches = list(batches)
    if not batches:
        return request.empty()
    return request.conform(pl.from_arrow(pa.Table.from_batches(batches)))


def payload_batch(rows: list[dict[str, Any]]) -> Any:
    """A task's output rows (``range`` and the pickled ``payload``) as one Arrow batch."""
    import pyarrow as pa

    return pa.RecordBatch.from_pylist(rows, schema=_payload_schema())


def _payload_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("range", pa.int64()), (PAYLOAD, pa.binary())])


def collect_payloads(frame: Any) -> list[tuple[int, object]]:
    """The ``(range, result)`` of every output row of ``frame``, unpickled on the driver."""
    return [(row["range"], steps.unpack(row[PAYLOAD])) for row in frame.collect()]


def count_below(data: Any, weight: str | None):
    """A function counting the rows of ``data`` whose weight is below a threshold (one job)."""
    from pyspark.sql import functions as sf

    def count(threshold: float) -> int:
        return data.where(sf.col(weight).cast("double") < sf.lit(threshold)).count()

    return count


def batches(data: Any, request: Request, repeat: Repeat | None = None) -> finite.MapBatches:
    """Map a function over the standardized rows of each partition of ``data`` and gather
    the small results (:mod:`polars_cumdev.engines.cluster.finite`).

    A function reading a few groups' rows (:class:`~polars_cumdev.engines.cluster.finite.OfGroups`)
    gets only the rows whose keys are among those groups' (:func:`of_groups`), filtered
    in the JVM: at 1e7 rows, a pass over the kept rows through Python costs about
    6.5 s, the filtered pass about 1-2 s. With ``repeat``, ``data`` holds the loaded
    rows, repeated in each task (:mod:`~polars_cumdev.engines.cluster.repeats`; the
    copies of the groups' segments only); its keys are made there, so no JVM filter applies.
    """

    def run(function: Callable[[pl.DataFrame], object]) -> list:
        groups = function.groups if isinstance(function, finite.OfGroups) else None
        rows = data if groups is None or repeat is not None else of_groups(data, request, groups)
        read = request if repeat is None else repeat.source

        def task(chunks: Iterator[Any]) -> Iterator[Any]:
            chunk = partition_frame(chunks, read)
            if chunk.height:
                if repeat is None:
                    found = function(request.standardize(chunk))
                else:
                    found = function(RepeatedRange(chunk, repeat, request).standard(groups))
                yield payload_batch([{"range": -1, PAYLOAD: steps.pack(found)}])

        return [found for _, found in collect_payloads(rows.mapInArrow(task, PAYLOAD_SCHEMA))]

    return run


#: Most distinct values of a key the JVM filter of :func:`of_groups` lists.
MOST_LISTED = 10_000


def of_groups(data: Any, request: Request, groups: pl.DataFrame) -> Any:
    """``data`` restricted in the JVM to rows whose every key is among ``groups``' values.

    A superset of the groups' rows (each key is filtered on its own), which the
    function then selects exactly. Only keys whose Spark values reach Polars
    unchanged are filtered (strings, integers, booleans: ``request.standardize``
    keeps the keys as they are); with any other key, or too many values, ``data``
    is returned whole.
    """
    from pyspark.sql import functions as sf
    from pyspark.sql import types as st

    exact = (st.StringType, st.ByteType, st.ShortType, st.IntegerType, st.LongType, st.BooleanType)
    types = {f.name: f.dataType for f in data.schema.fields}
    condition = None
    for key in request.keys:
        values = groups.get_column(key).unique().to_list() if key in groups.columns else None
        if values is None or not isinstance(types.get(key), exact) or len(values) > MOST_LISTED:
            return data
        listed = [v for v in values if v is not None]
        term = sf.col(key).isin(listed) if listed else sf.lit(False)
        if len(listed) < len(values):
            term = term | sf.col(key).isNull()
        condition = term if condition is None else condition & term
    return data if condition is None else data.where(condition)


#: The one warning PySpark 4 gives on every call with pandas 3 installed (the
#: ``[spark]`` extra pins ``pandas<3``; an environment may still hold pandas 3).
_PANDAS_WARNING = "PySpark does not yet fully support pandas"


def without_pandas_warning(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``function`` with exactly PySpark's pandas-3 FutureWarning silenced."""

    @functools.wraps(function)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            return function(*args, **kwargs)

    return quiet
