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

    def _out(self, result: pl.LazyFrame | pl.DataFrame) -> F:
        raise NotImplementedError
