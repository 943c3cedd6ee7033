"""Exceptions raised by polars-cumdev.

Every problem with a user's data or arguments surfaces as a subclass of
:class:`CumdevError`, which is also a :class:`ValueError`, so callers can catch
one type and still rely on the standard hierarchy.
"""

from __future__ import annotations

__all__ = [
    "ColumnNotFoundError",
    "ColumnTypeError",
    "CumdevError",
    "EmptySubpopulationError",
    "InvalidParameterError",
    "InvalidValuesError",
    "OverlapError",
    "TiedScoresError",
]


# Polars re-raises an exception from inside a query with this note appended,
# naming internal expressions; the message the library wrote ends before it.
_POLARS_CONTEXT = "\n\nThis error occurred in the following expression:"


class CumdevError(ValueError):
    """Base class of every error raised by polars-cumdev."""

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str):
            args = (args[0].split(_POLARS_CONTEXT, 1)[0], *args[1:])
        super().__init__(*args)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none).

    Polars follows its own one-line messages with a dump of the query plan;
    the first line is the part meant for a person.
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class ColumnNotFoundError(CumdevError):
    """A column named in the call does not exist in the frame."""


class ColumnTypeError(CumdevError):
    """A column has a data type the method cannot use (e.g. a string score)."""


class InvalidValuesError(CumdevError):
    """A column holds values the method cannot use: nulls, NaN, infinities,
    non-positive weights or values outside a required range."""


class EmptySubpopulationError(CumdevError):
    """A subpopulation selects no rows, or too few distinct scores."""


class InvalidParameterError(CumdevError):
    """A keyword argument has a value outside its documented set or range."""


class OverlapError(CumdevError):
    """Two selections that must be disjoint share rows."""


class TiedScoresError(CumdevError):
    """Two subpopulations share scores where the method requires none."""
