"""Which significant segments a round corrects, and their conditions as the fix writes them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

__all__ = ["disjoint", "ends", "open_condition", "open_ends"]


def ends(rows: pl.DataFrame, numerical: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Each numerical feature's smallest and largest value (the outer bins' closed ends)."""
    out = {}
    for name in numerical:
        values = rows.get_column(name).cast(pl.Float64).fill_nan(None).drop_nulls()
        if values.len():
            low, high = values.min(), values.max()
            out[name] = (float(low) + 0.0, float(high) + 0.0)  # type: ignore[arg-type]
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def open_condition(condition: str, bounds: dict[str, tuple[float, float]]) -> str:
    """The condition with the outer bins' ends (the audited rows' extremes) left open.

    The audit cuts a numerical feature into bins from its smallest to its
    largest value (``levels.py`` writes ``("x" >= low AND "x" <= high)``);
    a correction applies to new rows beyond them too.
    """
    for name, (low, high) in bounds.items():
        q = _quote(name)
        condition = condition.replace(f"({q} >= {low!r} AND ", "(")
        condition = condition.replace(f" AND {q} <= {high!r})", ")")
    return condition


def open_ends(
    row: dict[str, Any], features: Sequence[str], bounds: dict[str, tuple[float, float]]
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A segment's condition and level labels, outer bins opened (:func:`open_condition`)."""
    levels = []
    for f in features:
        label = row[f]
        if label is None:
            continue
        if f in bounds:
            low, high = bounds[f]
            if label.startswith(f"[{low:.6g}, "):
                label = "(-inf, " + label[len(f"[{low:.6g}, ") :]
            if label.endswith(f", {high:.6g}]"):
                label = label[: -len(f", {high:.6g}]")] + ", inf)"
        levels.append((f, label))
    return open_condition(row["condition"], bounds), tuple(levels)


def disjoint(candidates: pl.DataFrame, features: Sequence[str]) -> list[dict[str, Any]]:
    """The strongest candidate, then each next one whose features none picked before restrict.

    Segments sharing a feature with a stronger one are left to the next
    round: often their excess was the stronger one's, and the refit removes it.
    The full population (depth 0, restricting no feature) shares every
    segment's rows: it is taken only alone (a round that corrects a segment
    moves the population's mean too, and the next audit sees whether any of
    it is left).
    """
    picked: list[dict[str, Any]] = []
    used: set[str] = set()
    for row in candidates.iter_rows(named=True):
        restricted = {f for f in features if row[f] is not None}
        if not picked:
            picked.append(row)
            used |= restricted
            if not restricted:
                break
        elif restricted and not restricted & used:
            picked.append(row)
            used |= restricted
    return picked
