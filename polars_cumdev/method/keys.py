"""Grouping keys given as column names or as Polars expressions.

``by=`` accepts column names and expressions alike, e.g.
``by=pl.col("ts").dt.truncate("1w")`` for one group per week or
``by=["region", pl.col("age") // 10]``. An expression is evaluated once on
the input, as a column named by its output name (``"ts"`` and ``"age"``
above; alias it to choose another name), and the groups are then the
distinct values of those columns, exactly as if the user had added the
columns first with :meth:`polars.LazyFrame.with_columns`. The result names
the key by that output name. An expression replaces an input column of the
same name for the analysis only; the user's frame is not changed.

Every analysis reaches this through :func:`polars_cumdev.method.prepare.prepare`.
A group selected later from the user's own frame (a drill-down by key value)
needs the same column, so callers that drill down pass a frame that has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

from polars_cumdev.errors import InvalidParameterError

__all__ = ["Key", "coded", "join_on_keys", "key_names", "with_keys"]

Key = str | pl.Expr


def _name(key: object) -> str:
    if isinstance(key, str) and key:
        return key
    if isinstance(key, pl.Expr):
        try:
            return key.meta.output_name()
        except pl.exceptions.PolarsError:
            raise InvalidParameterError(
                f"the `by` expression {key} has no output name; name it with .alias(...)"
            ) from None
    raise InvalidParameterError(
        f"`by` must be a column name, an expression, or a list of them; got {key!r}"
    )


def _listed(by: Key | Sequence[Key] | None) -> list[Key]:
    if by is None:
        return []
    if isinstance(by, str | pl.Expr):
        return [by]
    if not isinstance(by, Sequence):
        raise InvalidParameterError(
            f"`by` must be a column name, an expression, or a list of them; got {by!r}"
        )
    keys = list(by)
    if not keys:
        raise InvalidParameterError("`by` is an empty list: name at least one column")
    return keys


def key_names(by: Key | Sequence[Key] | None) -> list[str]:
    """The names of the key columns ``by`` defines (an expression by its output name).

    Raises
    ------
    InvalidParameterError
        For something that is neither a name nor an expression, an expression
        without an output name, an empty list, or a name given twice.
    """
    return _names(_listed(by))


def _names(keys: list[Key]) -> list[str]:
    names = [_name(key) for key in keys]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"`by` names a column twice: {names}")
    return names


def with_keys(
    frame: pl.LazyFrame, by: Key | Sequence[Key] | None
) -> tuple[pl.LazyFrame, list[str]]:
    """``frame`` with one column per key expression, and the key columns' names.

    Plain names leave the frame as it is; with no expression among the keys
    the same frame object is returned.

    Parameters
    ----------
    frame
        The user's frame, lazy.
    by
        Column names and/or expressions (see the module docstring).

    Returns
    -------
    frame, names
        The frame with the key expressions added under their output names,
        and the names of all keys in the order given.
    """
    keys = _listed(by)
    names = _names(keys)
    expressions = [
        key.alias(name) for key, name in zip(keys, names, strict=True) if isinstance(key, pl.Expr)
    ]
    return (frame.with_columns(expressions) if expressions else frame), names


def join_on_keys(
    left: pl.LazyFrame,
    right: pl.LazyFrame,
    keys: Sequence[str],
    schema: pl.Schema,
    *,
    maintain_order: Literal["left"] | None = None,
) -> pl.LazyFrame:
    """``left`` joined (left join, nulls equal) to ``right`` on ``keys``, NaN equal to NaN.

    Polars' in-memory engine did not match a group keyed NaN on both sides
    of a one-row join (the calibration of a frame whose only key is NaN lost
    its located stretch; found by random fuzzing), while the streaming engine
    did. A float key is joined as the pair (is NaN, value with NaN as 0), as
    the compiled kernel numbers groups (:mod:`polars_cumdev.method.compiled`).
    ``maintain_order="left"`` keeps ``left``'s row order.
    """
    floats = [k for k in keys if schema[k].is_float()]
    if not floats:
        return left.join(
            right, on=list(keys), how="left", nulls_equal=True, maintain_order=maintain_order
        )
    helpers = {f"{k}__cd_nan": pl.col(k).is_nan() for k in floats} | {
        f"{k}__cd_value": pl.col(k).fill_nan(0.0) for k in floats
    }
    on = [k for k in keys if k not in floats] + list(helpers)
    return (
        left.with_columns(**helpers)
        .join(
            right.with_columns(**helpers).drop(floats),
            on=on,
            how="left",
            nulls_equal=True,
            maintain_order=maintain_order,
        )
        .drop(list(helpers))
    )


def coded(rows: pl.LazyFrame, types: Mapping[str, pl.DataType]) -> tuple[pl.LazyFrame, list[str]]:
    """``rows`` with every string key (of the keys' ``types``) cast to a categorical.

    Returns the frame and the names of the keys cast. The Polars stages
    compare, hash and move each key once per row several times (regrouping,
    window sums, group-by, joins); a categorical's 4-byte code costs far less
    there than the text (on the census screen about a tenth of the Polars
    plan's time). The groups are the same rows in the same order, so every
    sum is the same; the caller casts the keys of its result back.
    """
    texts = [k for k, dtype in types.items() if dtype == pl.String]
    if not texts:
        return rows, texts
    return rows.with_columns(pl.col(k).cast(pl.Categorical) for k in texts), texts
