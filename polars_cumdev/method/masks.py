"""The subpopulation: a boolean mask over the full population, checked.

``subpop`` arguments (``curve``, ``reliability``, ``compare``,
``paired_curve``) are a boolean expression or the name of a boolean column.
:func:`resolve_mask` refuses at once what the schema shows cannot work;
:func:`mask_checks` are the lazy checks on its values (no nulls, at least one
row selected), evaluated with the other checks of
:class:`~polars_cumdev.method.prepare.Prepared`.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.errors import ColumnTypeError, EmptySubpopulationError, InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check
from polars_cumdev.method.groups import selection_label
from polars_cumdev.method.prepare import schema_of

__all__ = ["mask_checks", "resolve_mask"]


def resolve_mask(frame: pl.LazyFrame, subpop: pl.Expr | str, what: str = "subpop") -> pl.Expr:
    """Check that ``subpop`` is a boolean expression (or boolean column) over ``frame``.

    Returns the expression; raises :class:`ColumnTypeError` or
    :class:`ColumnNotFoundError` at once when the schema shows it cannot work.
    """
    if isinstance(subpop, str):
        expr = pl.col(subpop)
    elif isinstance(subpop, pl.Expr):
        expr = subpop
    else:
        raise InvalidParameterError(
            f"`{what}` must be a boolean polars expression or the name of a boolean column, "
            f"got {type(subpop).__name__}"
        )
    dtype = schema_of(frame.select(expr.alias(nm.MEMBER)))[nm.MEMBER]
    if dtype != pl.Boolean:
        raise ColumnTypeError(
            f"{selection_label(subpop, what)} has dtype {dtype}; it must be boolean"
        )
    return expr


def mask_checks(mask: pl.Expr, label: str) -> list[Check]:
    """Lazy checks that a subpopulation mask has no nulls and selects at least one row."""
    return [
        Check(
            mask.null_count(),
            f"{label} is null on {{count}} of {{rows}} rows; fill the nulls (True/False) first",
        ),
        Check(
            (mask.sum() == 0).cast(pl.Int64),
            f"{label} selects no rows (of {{rows}}): the subpopulation is empty",
            EmptySubpopulationError,
        ),
    ]
