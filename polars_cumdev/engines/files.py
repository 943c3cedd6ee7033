"""Sets of Parquet files checked alike before any engine reads them.

A directory or glob may hold files that do not agree: a column missing from
one, another dtype in another, a file that is not Parquet at all, or no file
at all. Polars, PyArrow, Dask and Spark each fail in their own words (or, for
a Float32 file among Float64 ones, not at all). :func:`parquet_files` and
:func:`check_parquet_files` run before the in-process Parquet screen, the Dask
engine, the command line's Spark engine and the Spark functions (on the files
behind a Spark DataFrame: :mod:`polars_cumdev.engines.cluster.spark_files`),
so that every engine takes the same decision with the same
:class:`~polars_cumdev.errors.CumdevError`, naming the file.

A file may hold further columns the analysis does not use; the used columns
must be present in every file, with one dtype across the files.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.errors import ColumnNotFoundError, ColumnTypeError, CumdevError, first_line

__all__ = [
    "PARQUET_SUFFIXES",
    "check_parquet_files",
    "parquet_files",
    "read_schema",
    "unreadable",
]

PARQUET_SUFFIXES = (".parquet", ".pq")
_GLOB = "*?["


def parquet_files(source: str | Path | Sequence[str | Path]) -> list[str]:
    """The files named by a path, a directory (its Parquet files), a glob, or a list of these."""
    items = [source] if isinstance(source, str | Path) else list(source)
    if not items:
        raise CumdevError("no Parquet file given (an empty list)")
    files: list[str] = []
    for item in items:
        text = str(item)
        path = Path(text)
        if path.is_dir():
            found = sorted(str(p) for p in path.iterdir() if p.suffix.lower() in PARQUET_SUFFIXES)
            if not found:
                raise CumdevError(f"{text} is a directory without .parquet files")
            files += found
        elif any(ch in text for ch in _GLOB) and not path.exists():
            found = sorted(p for p in glob.glob(text) if Path(p).is_file())
            if not found:
                raise CumdevError(f"no file matches {text}")
            files += found
        elif not path.exists():
            raise CumdevError(f"no such file: {text}")
        elif not path.is_file():
            raise CumdevError(f"not a file: {text}")
        else:
            files.append(text)
    return files


def read_schema(file: str) -> pl.Schema:
    """The schema in a Parquet file's footer, or a CumdevError naming the file."""
    try:
        return pl.read_parquet_schema(file)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise CumdevError(
            f"cannot read {file}: not a readable Parquet file ({first_line(exc)})"
        ) from None


def check_parquet_files(files: Sequence[str], columns: Sequence[str]) -> pl.Schema:
    """Check that every file is Parquet and holds ``columns`` with one dtype each.

    Returns the schema of ``columns`` (from the first file). Only the files'
    footers are read.
    """
    wanted = list(dict.fromkeys(columns))
    first: tuple[str, pl.Schema] | None = None
    for file in files:
        schema = read_schema(file)
        missing = [c for c in wanted if c not in schema]
        if missing:
            raise ColumnNotFoundError(
                f"column(s) {missing} not found in {file}; it has columns {list(schema)}"
            )
        if first is None:
            first = (file, pl.Schema({c: schema[c] for c in wanted}))
            continue
        for column in wanted:
            if schema[column] != first[1][column]:
                raise ColumnTypeError(
                    f"column {column!r} is {schema[column]} in {file} but {first[1][column]} in "
                    f"{first[0]}: every file must give a column the same dtype"
                )
    assert first is not None
    return first[1]


def unreadable(files: Sequence[str], columns: Sequence[str], exc: BaseException) -> CumdevError:
    """The error to raise when reading ``files`` failed with ``exc`` behind sound footers.

    A data page damaged behind a sound footer is found only when the data is
    read, and Polars' and PyArrow's messages do not say which file held it.
    Each file's ``columns`` are read again, one file at a time in bounded
    memory (a streaming count), until one fails: that file is named. Only
    called once a read has failed, so a sound data set pays nothing.
    """
    wanted = list(dict.fromkeys(columns))
    for file in files:
        try:
            counts = [pl.col(c).null_count() for c in wanted] or [pl.len()]
            pl.scan_parquet(file).select(counts).collect(engine="streaming")
        except (OSError, pl.exceptions.PolarsError) as again:
            return CumdevError(f"cannot read {file}: damaged Parquet data ({first_line(again)})")
    where = files[0] if len(files) == 1 else f"the input ({len(files)} files)"
    return CumdevError(f"cannot read {where}: {first_line(exc)}")
