"""What coding a segment feature into levels shares: the coded feature and its labels.

A level's label is its value as text (:func:`label_of`); the made-up labels
``(missing)`` and ``(other)`` gain parentheses until no real value reads the
same (:func:`made_up`); a level's condition is SQL text over the quoted
column name (:func:`quote`) and a literal (:func:`literal`), which
:func:`polars_cumdev.multicalibration.subpop` turns back into an expression.
Used by the categorical rule (:mod:`~polars_cumdev.multicalibration.levels`)
and the numerical one (:mod:`~polars_cumdev.multicalibration.numerical_levels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["MISSING", "OTHER", "Coded", "Segments", "label_of", "literal", "made_up", "quote"]

MISSING = "(missing)"
OTHER = "(other)"


class Segments(Protocol):
    """What the coding reads of a :class:`~polars_cumdev.multicalibration.family.Segments`."""

    rules: str
    categorical: tuple[str, ...]

    @property
    def features(self) -> tuple[str, ...]: ...

    def kept_count(self, name: str, counts: list[int]) -> int: ...

    def bins_of(self, name: str) -> int: ...


@dataclass(frozen=True)
class Coded:
    """One feature's levels: a code per row, and per code a label and an SQL condition."""

    codes: np.ndarray
    labels: list[str]
    conditions: list[str]
    pooled: tuple[int, int] = (0, 0)  # values and rows pooled into (other)


def quote(name: str) -> str:
    """``name`` as an SQL identifier (double quotes, inner ones doubled)."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: object) -> str:
    """``value`` as an SQL literal: TRUE/FALSE, a number, or a quoted string."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return "'" + str(value).replace("'", "''") + "'"


def label_of(value: object) -> str:
    """A level's label: a float to 6 significant digits, anything else as text."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def made_up(label: str, real: set[str]) -> str:
    """``label`` ("(missing)" or "(other)") wrapped in parentheses until no real level has it."""
    while label in real:
        label = f"({label})"
    return label
