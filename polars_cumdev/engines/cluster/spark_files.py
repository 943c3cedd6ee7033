"""The Parquet files behind a Spark DataFrame, checked as every other engine checks them.

Spark reads a directory of Parquet files with the schema of one of them: a
file whose score is Float32 among Float64 ones is upcast without a word, a
file missing the weight column gives nulls, and a file of another type or a
damaged footer fails the job in Spark's words. The in-process Parquet screen,
the Dask engine and the command line check the files' footers first
(:func:`polars_cumdev.engines.files.check_parquet_files`) and refuse such a
set naming the file. :func:`check_spark_files` runs the same check on the
files of a Spark DataFrame that reads one Parquet relation from local files,
before any Spark job, so that Spark takes the same decision with the same
message.

Only the footers are read, on the driver. Anything else is left to Spark: a
DataFrame built from several relations (a join, a union) or from no file, a
format other than Parquet, files on remote storage (``hdfs://``, ``s3a://``),
columns the files do not hold (partition columns, renamed or computed
columns), or a Spark without the JVM plan (Spark Connect).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from polars_cumdev.engines.files import check_parquet_files

__all__ = ["check_spark_files", "parquet_relation"]


def parquet_relation(sdf: Any) -> tuple[list[str], list[str]] | None:
    """(local files, columns of the files) of a DataFrame over one Parquet relation, else None.

    The files are sorted, as :func:`polars_cumdev.engines.files.parquet_files`
    lists a directory.
    """
    try:
        plan = sdf._jdf.queryExecution().analyzed()
        leaves = plan.collectLeaves()
        if leaves.size() != 1:
            return None
        leaf = leaves.apply(0)
        if leaf.getClass().getSimpleName() != "LogicalRelation":
            return None
        relation = leaf.relation()
        if relation.getClass().getSimpleName() != "HadoopFsRelation":
            return None
        if relation.fileFormat().toString() != "Parquet":
            return None
        columns = list(relation.dataSchema().fieldNames())
        uris = list(sdf.inputFiles())
    except Exception:  # no JVM plan to look at (e.g. Spark Connect): Spark decides
        return None
    files = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme not in ("", "file"):
            return None
        files.append(unquote(parsed.path))
    return (sorted(files), columns) if files else None


def check_spark_files(sdf: Any, names: Sequence[str]) -> None:
    """Refuse, as the in-process Parquet screen does, the files behind ``sdf`` that disagree.

    ``names`` are the columns the call uses; those the files hold must be in
    every file, with one dtype across the files. Raises the
    :class:`~polars_cumdev.errors.CumdevError` of
    :func:`~polars_cumdev.engines.files.check_parquet_files`, naming the file.
    """
    found = parquet_relation(sdf)
    if found is None:
        return
    files, columns = found
    used = [c for c in dict.fromkeys(names) if c in columns]
    check_parquet_files(files, used)
