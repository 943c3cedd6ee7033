"""A fitted recalibration applied where the rows live: Arrow batches (Spark), partitions (Dask).

The fix travels as its JSON (:meth:`~polars_cumdev.recalibration.Recalibration.to_json`,
whose numbers read back to the same doubles) and each worker rebuilds it and
evaluates its Polars expression (:meth:`~polars_cumdev.recalibration.Recalibration.expr`)
on the columns the fix reads, converted to Polars; every other column stays
as the engine holds it, and the new column is appended. The arithmetic is
the in-process expression's, so the recalibrated scores are the same bits.

Before anything runs, :func:`check_fix` evaluates the fix on a frame of no
row with the input's schema: a missing column, or a column of a type the
fix's conditions cannot read, is a :class:`~polars_cumdev.errors.CumdevError`
on the driver, with the in-process message, not a failed task.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.recalibration import Recalibration

__all__ = ["check_fix", "dask_apply", "score_frame", "spark_apply"]


def check_fix(fix: object, schema: pl.Schema | dict[str, pl.DataType], name: object) -> str:
    """Raise as :meth:`Recalibration.apply` would on a frame of this schema; the fix's JSON."""
    if not isinstance(fix, Recalibration):
        raise InvalidParameterError(
            f"`fix` must be a Recalibration (polars_cumdev.recalibrate), got {type(fix).__name__}"
        )
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(f"`name` must be a non-empty column name, got {name!r}")
    known = dict(schema)
    empty = pl.DataFrame(schema={c: known[c] for c in fix.columns if c in known} or None)
    if all(c in known for c in fix.columns):
        try:
            fix.apply(empty, name)
        except pl.exceptions.PolarsError as exc:
            raise InvalidParameterError(
                f"the recalibration cannot read the frame's columns {list(fix.columns)} "
                f"(types {[str(known[c]) for c in fix.columns]}): {exc}"
            ) from None
    else:
        fix.apply(pl.DataFrame(schema=known), name)  # the in-process ColumnNotFoundError
    return fix.to_json()


def score_frame(frame: pl.DataFrame, document: str, name: str) -> pl.Series:
    """The recalibrated score of ``frame``'s rows (the fix's columns only are read)."""
    fix = Recalibration.from_json(document)
    return frame.select(fix.expr().alias(name)).to_series()


def spark_apply(sdf: Any, fix: Recalibration, name: str) -> Any:
    """See :func:`polars_cumdev.spark.apply`."""
    from polars_cumdev.engines.cluster import require, spark_jobs
    from polars_cumdev.engines.cluster.probe import probe_spark

    require("pyspark", "spark")
    require("pyarrow", "spark")
    from pyspark.sql.types import DoubleType, StructField, StructType

    present = [c for c in fix.columns if c in sdf.columns] if isinstance(fix, Recalibration) else []
    schema = spark_jobs.polars_schema(sdf.select(*present)) if present else {}
    if isinstance(fix, Recalibration) and len(present) < len(fix.columns):
        schema = {**{c: pl.Null for c in sdf.columns}, **dict(schema)}
    document = check_fix(fix, schema, name)
    probe_spark(sdf.sparkSession)
    # A column named `name` is replaced in place (as by with_columns), else it ends the row.
    new = StructField(name, DoubleType(), True)
    fields = [new if f.name == name else f for f in sdf.schema.fields]
    if name not in sdf.columns:
        fields.append(new)
    names = [f.name for f in fields]
    columns = list(fix.columns)

    def run(batches: Any) -> Any:
        import pyarrow as pa

        for batch in batches:
            frame = pl.from_arrow(pa.Table.from_batches([batch]).select(columns))
            scores = score_frame(frame, document, name).to_arrow()
            kept = [scores if n == name else batch.column(n) for n in names]
            yield pa.RecordBatch.from_arrays(kept, names=names)

    return sdf.mapInArrow(run, StructType(fields))


def _score_partition(part: Any, document: str, name: str, columns: list[str]) -> Any:
    frame = pl.from_pandas(part[columns], nan_to_null=False)
    scores = score_frame(frame, document, name).to_numpy()
    return part.assign(**{name: scores})  # a column of that name is replaced in place


def dask_apply(ddf: Any, fix: Recalibration, name: str, scheduler: Any) -> Any:
    """See :func:`polars_cumdev.dask.apply`."""
    from polars_cumdev.engines.cluster import require
    from polars_cumdev.engines.cluster.probe import probe_dask

    distributed = require("distributed", "dask")
    require("dask.dataframe", "dask")
    if not (hasattr(ddf, "map_partitions") and hasattr(ddf, "_meta")):
        raise InvalidParameterError(
            f"expected a dask.dataframe.DataFrame, got {type(ddf).__name__}"
        )
    meta = ddf._meta
    document = check_fix(fix, pl.from_pandas(meta, nan_to_null=False).schema, name)
    client = scheduler
    if scheduler is None:
        try:
            client = distributed.get_client()
        except ValueError:
            client = None  # Dask's local scheduler: the workers are this process
    elif not isinstance(scheduler, distributed.Client):
        raise InvalidParameterError(
            f"`scheduler` must be a distributed.Client or None, got {scheduler!r}"
        )
    if client is not None:
        probe_dask(client)
    columns = list(fix.columns)
    shape = _score_partition(meta, document, name, columns)
    return ddf.map_partitions(_score_partition, document, name, columns, meta=shape)
