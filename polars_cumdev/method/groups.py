"""Selecting one group by its key values, and naming selections in messages.

A screen keeps every group its ``by`` columns define, the group whose key is
null included. Drilling into a group needs a mask that selects exactly its
rows: ``pl.col(key) == value`` is null wherever the key is null (and for a
null ``value`` selects nothing), so the masks here compare with null-aware
equality (:meth:`polars.Expr.eq_missing`): a null key equals a null value and
differs from every other value. The mask is always true or false, never null.

Messages name a selection the way a person wrote it: a boolean column by its
name, an aliased expression by its alias (``county = Cedar``), and any other
expression by its Polars representation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_cumdev.errors import CumdevError

__all__ = ["NULL_LABEL", "group_label", "group_selection", "selection_label", "top_group"]

#: How a null key value is written in labels.
NULL_LABEL = "(null)"


def _text(value: Any) -> str:
    return NULL_LABEL if value is None else str(value)


def group_label(keys: Sequence[str], row: Mapping[str, Any]) -> str:
    """``key = value`` for each key of the group, comma-separated; nulls as ``(null)``.

    Parameters
    ----------
    keys
        The ``by`` columns of a screen.
    row
        A row of the screen (or any mapping holding the keys' values).

    Returns
    -------
    str
        For example ``"county = Cedar"`` or ``"county = (null), rooms = 3"``.
    """
    return ", ".join(f"{key} = {_text(row[key])}" for key in keys)


def group_selection(keys: Sequence[str], row: Mapping[str, Any]) -> pl.Expr:
    """The mask of the group with the key values of ``row``, null keys included.

    Each key is compared with null-aware equality (:meth:`polars.Expr.eq_missing`),
    so the mask is never null and a null key value selects the rows whose key
    is null. The expression is aliased with :func:`group_label`, which
    :func:`selection_label` uses to name it in messages.

    Parameters
    ----------
    keys
        The ``by`` columns of a screen (at least one).
    row
        A row of the screen (or any mapping holding the keys' values).

    Returns
    -------
    pl.Expr
        A boolean expression, true exactly on the group's rows.
    """
    if not keys:
        raise ValueError("a group is selected by at least one key")
    masks = [pl.col(key).eq_missing(pl.lit(row[key])) for key in keys]
    mask = masks[0]
    for other in masks[1:]:
        mask = mask & other
    return mask.alias(group_label(keys, row))


def selection_label(selection: pl.Expr | str, what: str = "subpop") -> str:
    """How messages name a selection: ``what`` followed by its name.

    A string is a boolean column (``subpop column 'member'``); an expression
    whose outermost operation is an alias is named by the alias
    (``subpop 'county = Cedar'``); any other expression by its Polars
    representation (``subpop expression [(col("g")) == ("Z")]``).

    Parameters
    ----------
    selection
        The mask as given by the caller.
    what
        The argument's role: ``"subpop"``, ``"first"`` or ``"second"``.

    Returns
    -------
    str
        The label.
    """
    if isinstance(selection, str):
        return f"{what} column {selection!r}"
    name = selection.meta.output_name(raise_if_undetermined=False)
    if name is not None and selection.meta.eq(selection.meta.undo_aliases().alias(name)):
        return f"{what} {name!r}"
    return f"{what} expression {selection}"


def top_group(
    table: pl.DataFrame, keys: Sequence[str], z: str
) -> tuple[pl.Expr, str, dict[str, Any]]:
    """The first group of a ranked table with a defined ``z``: its selection, label and row.

    Raises :class:`~polars_cumdev.errors.CumdevError` when no group has one.
    """
    ranked = table.filter(pl.col(z).is_not_null())
    if ranked.height == 0:
        raise CumdevError(f"no group has a defined {z}: nothing to draw")
    row = ranked.row(0, named=True)
    return group_selection(keys, row), group_label(keys, row), row
