"""What a cluster screen asks for: its arguments and schema, rebuilt identically on each worker.

A :class:`Request` is small and picklable. The driver builds it from the
user's arguments and the schema of the engine's frame (as Polars dtypes), and
runs the schema checks at once, exactly as the in-process screen does
(:func:`polars_cumdev.subpopulation.prepare_screen`). Each worker rebuilds the
same :class:`~polars_cumdev.method.prepare.Prepared` from it, so the row checks and
the standardized columns are the in-process ones, expression for expression.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.checks import Check
from polars_cumdev.method.prepare import Prepared
from polars_cumdev.method.statistics import check_variance

__all__ = ["Kind", "Request", "make_request"]

Kind = Literal["screen", "calibration"]


@dataclass(frozen=True)
class Request:
    """The arguments of one cluster screen (or calibration) and the input's schema.

    Attributes
    ----------
    kind
        ``"screen"`` (subpopulations against the full population) or
        ``"calibration"`` (predictions against responses, per group).
    keys
        The grouping columns (empty for an overall calibration).
    score, response, weight
        The user's column names (``weight`` None: every row weighs 1).
    variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    schema
        Name and Polars dtype of every column the computation reads.
    """

    kind: Kind
    keys: tuple[str, ...]
    score: str
    response: str
    weight: str | None
    variance: str
    schema: tuple[tuple[str, pl.DataType], ...]

    @property
    def columns(self) -> list[str]:
        """The user's columns the computation reads, in the schema's order."""
        return [name for name, _ in self.schema]

    def empty(self) -> pl.DataFrame:
        """A frame with no row and the input's schema."""
        return pl.DataFrame(schema=dict(self.schema))

    def prepared(self, frame: pl.DataFrame | pl.LazyFrame | None = None) -> Prepared:
        """The in-process :class:`~polars_cumdev.method.prepare.Prepared` of ``frame``.

        Without ``frame``, of no row.
        """
        source = self.empty() if frame is None else frame
        if self.kind == "screen":
            from polars_cumdev.subpopulation import prepare_screen

            return prepare_screen(
                source, list(self.keys), self.score, self.response, self.weight, self.variance
            )
        from polars_cumdev.calibration.table import prepare_calibration

        return prepare_calibration(
            source, self.score, self.response, self.weight, list(self.keys) or None
        )

    def checks(self) -> list[Check]:
        """The in-process row checks, in their order."""
        return self.prepared().checks

    def standardize(self, chunk: pl.DataFrame) -> pl.DataFrame:
        """The keys and the float64 ``SCORE``, ``RESPONSE``, ``WEIGHT`` of a batch of rows."""
        return chunk.select(self.prepared().columns)

    def conform(self, chunk: pl.DataFrame) -> pl.DataFrame:
        """A batch cast to the schema (an engine may hand over, say, Int32 for Int64)."""
        wanted = dict(self.schema)
        have = chunk.schema
        casts = [pl.col(c).cast(t) for c, t in wanted.items() if c in have and have[c] != t]
        chunk = chunk.select(self.columns)
        return chunk.with_columns(casts) if casts else chunk


def make_request(
    kind: Kind,
    schema: pl.Schema | dict[str, pl.DataType],
    by: str | Sequence[str] | None,
    score: str,
    response: str,
    weight: str | None,
    variance: str = "auto",
) -> Request:
    """Check the arguments against ``schema`` (raising as in-process) and build the request.

    Raises the in-process errors for problems visible in the schema: a
    missing column, a string score, a ``by`` column clashing with an output.
    """
    if kind == "screen" and by is None:
        raise InvalidParameterError("`by` is required: name the column(s) defining the groups")
    variance = check_variance(variance)
    keys: tuple[str, ...] = () if by is None else ((by,) if isinstance(by, str) else tuple(by))
    probe = Request(kind, keys, score, response, weight, variance, tuple(dict(schema).items()))
    probe.prepared()  # the schema checks, raised here with the in-process messages
    wanted = [*keys, score, response, *([weight] if weight is not None else [])]
    seen = list(dict.fromkeys(wanted))
    columns = tuple((c, dict(schema)[c]) for c in seen)
    return Request(kind, keys, score, response, weight, variance, columns)
