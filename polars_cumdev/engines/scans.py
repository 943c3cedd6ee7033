"""The Parquet files a user's LazyFrame reads, checked before the analysis is planned.

A query the user built, such as ``pl.scan_parquet("data/*.parquet").cumdev.screen(...)``,
reads its files only when the result is collected; a file that does not agree
with the others (a used column missing or of another dtype, a column the first
file lacks, a file that is not Parquet, a path that names nothing) then fails
inside Polars with a raw ``SchemaError``, ``ColumnNotFoundError``,
``ComputeError`` or ``FileNotFoundError``. :func:`check_scans` finds the
Parquet scans of the plan and reads the footers of their files up front, and
refuses such a set with the :class:`~polars_cumdev.errors.CumdevError` that
:func:`polars_cumdev.engines.files.check_parquet_files` gives the in-process,
Dask and Spark engines, naming the file.

It refuses only what Polars' own scan would refuse with the options the user
gave: a column the analysis does not use may be missing or of another dtype
(Polars reads only the projected columns), extra columns are refused only
when the scan was built without ``extra_columns="ignore"``, and a scan given
an explicit ``schema`` or cast options is left to Polars. A data page damaged
behind a sound footer can only be found by reading the data, when the user
collects the result; that error comes from Polars.

The scans are found in the plan's serialized form (Polars' JSON of the
logical plan), for a plan whose text shows a Parquet scan (a frame built from
in-memory data is not serialized); a plan that cannot be serialized (it holds
a Python function) is not checked here.
"""

from __future__ import annotations

import glob
import json
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev.engines.files import check_parquet_files, read_schema
from polars_cumdev.errors import CumdevError

__all__ = ["check_scans"]

_GLOB = "*?["
_CASTS = ("integer_upcast", "integer_to_float_cast", "float_upcast", "float_downcast")


def _plan(frame: pl.LazyFrame) -> Any:
    try:  # the plan's text first: serializing a plan holds its in-memory frames too
        if "Parquet SCAN" not in frame.explain(optimized=False):
            return None
    except Exception:  # e.g. a path that names nothing: the serialized plan says which
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return json.loads(frame.serialize(format="json"))
    except Exception:  # a plan with a Python function, or another Polars' format
        return None


def _scans(node: Any) -> Iterator[dict[str, Any]]:
    """Every Parquet ``Scan`` node of a serialized plan."""
    if isinstance(node, dict):
        scan = node.get("Scan")
        if isinstance(scan, dict) and "Parquet" in (scan.get("scan_type") or {}):
            yield scan
        for value in node.values():
            yield from _scans(value)
    elif isinstance(node, list):
        for value in node:
            yield from _scans(value)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def _expand(text: str) -> list[str]:
    """The files Polars reads for one path: a file, a directory (recursively) or a glob."""
    path = Path(text)
    if path.is_dir():
        found = sorted(str(p) for p in path.rglob("*") if p.is_file() and not _hidden(p, path))
        if not found:
            raise CumdevError(f"{text} is a directory without files")
        return found
    if any(ch in text for ch in _GLOB) and not path.exists():
        found = sorted(p for p in glob.glob(text, recursive=True) if Path(p).is_file())
        if not found:
            raise CumdevError(f"no file matches {text}")
        return found
    if not path.exists():
        raise CumdevError(f"no such file: {text}")
    return [text]


def _check_scan(scan: dict[str, Any], columns: Sequence[str]) -> None:
    sources = (scan.get("sources") or {}).get("Paths")
    if not isinstance(sources, list):
        return  # in-memory buffers: nothing to find on disk
    texts = [s.get("inner") if isinstance(s, dict) else s for s in sources]
    if not all(isinstance(t, str) for t in texts) or any("://" in t for t in texts):
        return  # cloud storage is left to Polars
    files = [f for t in texts for f in _expand(t)]
    args = scan.get("unified_scan_args") or {}
    first = read_schema(files[0])
    used = [c for c in dict.fromkeys(columns) if c in first]
    if args.get("schema") is not None:
        check_parquet_files(files, [])
        return
    casts = args.get("cast_columns_policy") or {}
    if args.get("missing_columns_policy", "Raise") == "Raise" and not any(
        casts.get(c) for c in _CASTS
    ):
        check_parquet_files(files, used)
    else:
        check_parquet_files(files, [])
    if args.get("extra_columns_policy", "Raise") == "Raise":
        for file in files[1:]:
            extra = [c for c in read_schema(file) if c not in first]
            if extra:
                raise CumdevError(
                    f"{file} has column(s) {extra} that {files[0]}, the first file, lacks: "
                    "pl.scan_parquet reads every file with the first file's columns; pass "
                    "extra_columns='ignore' to pl.scan_parquet, or use "
                    "polars_cumdev.partitioned.screen_parquet"
                )


def check_scans(frame: pl.LazyFrame, columns: Sequence[str]) -> None:
    """Check the files of every Parquet scan in ``frame``'s plan, for the used ``columns``.

    Raises
    ------
    CumdevError
        Naming the file, as :func:`~polars_cumdev.engines.files.check_parquet_files` does.
    """
    plan = _plan(frame)
    if plan is None:
        return
    for scan in _scans(plan):
        _check_scan(scan, columns)
