"""What every method of the ``cumdev`` namespace holds: the frame, and how to return."""

from __future__ import annotations

from typing import Generic, TypeVar

import polars as pl

__all__ = ["F", "Methods"]

#: The frame kind a namespace was reached from, and returns.
F = TypeVar("F", pl.DataFrame, pl.LazyFrame)


class Methods(Generic[F]):
    """The frame the namespace was reached from, and :meth:`_out` to return a result as it."""

    def __init__(self, frame: F) -> None:
        self._frame = frame

    def _data(self, *columns: object) -> F:
        """The frame, for a call that uses ``columns`` (names, expressions or lists of them)."""
        return self._frame

    def _out(self, result: pl.LazyFrame | pl.DataFrame) -> F:
        raise NotImplementedError


def column_names(columns: object) -> list[str]:
    """The column names in ``columns``: names, expressions (their root names), nested lists."""
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    if isinstance(columns, pl.Expr):
        try:
            return columns.meta.root_names()
        except pl.exceptions.PolarsError:
            return []
    if isinstance(columns, list | tuple | set | dict):
        return [name for item in columns for name in column_names(item)]
    return []
