"""The public entry points' shared front: expressions as columns, results as the input's kind.

Every analysis function (``screen``, ``curve``, ``calibration``, ``paired``,
``corp``, ``ece``, ...) is wrapped by :func:`entry_point`, which does two
things the same way for all of them, as ``frame.cumdev`` does:

* **Expressions as columns.** ``score``, ``response``, ``weight``, ``by``
  (and the analysis' other column arguments) take a column name or a Polars
  expression, e.g. ``by=pl.col("occupation")`` or
  ``score=pl.col("income").log10()``. An expression that is just a column
  is that column; any other is added with ``with_columns`` under its output
  name (``expr.meta.output_name()``, set with ``.alias``), and results name
  it that way. :func:`named_columns` does it.
* **Results follow the input.** A pandas DataFrame or PyArrow table is
  converted once (:func:`polars_cumdev.method.frames.polars_frame`) and
  counts as a DataFrame. A DataFrame in gives a DataFrame out
  (collected with Polars' in-memory engine, as ``df.cumdev`` does); a
  LazyFrame in gives a LazyFrame that chains. The wrapped function itself
  receives the frame as given (a DataFrame's height chooses the engine,
  :func:`polars_cumdev.method.compiled.choose`) and returns a LazyFrame.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import polars as pl

from polars_cumdev.errors import ColumnNotFoundError, InvalidParameterError
from polars_cumdev.method.frames import is_foreign, polars_frame

__all__ = ["Column", "entry_point", "named_columns"]

#: A column argument: a column name or a Polars expression giving one column.
Column = str | pl.Expr

F = TypeVar("F", pl.DataFrame, pl.LazyFrame)
P = ParamSpec("P")


def _name_of(expr: pl.Expr, role: str) -> str:
    meta = expr.meta
    if meta.has_multiple_outputs():
        raise InvalidParameterError(
            f"`{role}` must give one column; {expr} selects several (pass a list of "
            "expressions, one per column, where several are allowed)"
        )
    name = meta.output_name(raise_if_undetermined=False)
    if not name:
        raise InvalidParameterError(
            f"`{role}`: the expression {expr} has no output name; name it with .alias(...)"
        )
    return name


def named_columns(frame: F, columns: dict[str, Any]) -> tuple[F, dict[str, Any]]:
    """Replace every expression among ``columns`` by the name of a column of the returned frame.

    Parameters
    ----------
    frame
        The user's frame.
    columns
        Argument name -> value: None, a column name, an expression, or a
        list or tuple of names and expressions (several ``by`` columns or
        covariates).

    Returns
    -------
    tuple
        The frame with one column added (``with_columns``) per expression
        that is not a bare column, and the arguments with names in place of
        expressions (lists stay lists).

    Raises
    ------
    InvalidParameterError
        An expression with several outputs or without an output name, or
        two arguments that would name different data alike (an expression
        named like a column another argument uses, or two expressions with
        one output name).
    """
    added: dict[str, tuple[str, pl.Expr]] = {}
    plain: dict[str, str] = {}

    def resolve(value: Any, role: str) -> Any:
        if isinstance(value, pl.Expr):
            name = _name_of(value, role)
            if value.meta.is_column():
                plain.setdefault(name, role)
                return name
            if name in added and not added[name][1].meta.eq(value):
                raise InvalidParameterError(
                    f"`{added[name][0]}` and `{role}` are different expressions both named "
                    f"{name!r}; give them distinct names with .alias(...)"
                )
            added[name] = (role, value)
            return name
        if isinstance(value, str):
            plain.setdefault(value, role)
        return value

    resolved: dict[str, Any] = {}
    for role, value in columns.items():
        if isinstance(value, list | tuple):
            resolved[role] = [resolve(item, role) for item in value]
        else:
            resolved[role] = resolve(value, role)
    for name, (role, _) in added.items():
        if name in plain:
            raise InvalidParameterError(
                f"the expression given as `{role}` is named {name!r}, like the column "
                f"{name!r} given as `{plain[name]}`; give it another name with .alias(...)"
            )
    if added:
        try:  # eager on a DataFrame: a missing column is found here
            frame = frame.with_columns(expr.alias(name) for name, (_, expr) in added.items())
        except pl.exceptions.ColumnNotFoundError as exc:
            roles = ", ".join(f"`{role}`" for role, _ in added.values())
            raise ColumnNotFoundError(
                f"the expression(s) given as {roles} refer to a missing column: "
                f"{str(exc).strip().splitlines()[0]}"
            ) from None
    return frame, resolved


def entry_point(
    *columns: str,
) -> Callable[[Callable[Concatenate[Any, P], pl.LazyFrame]], Callable[Concatenate[F, P], F]]:
    """Wrap a public analysis function: expressions as columns, the result as the input's kind.

    Parameters
    ----------
    *columns
        The names of the function's column arguments that take expressions
        (e.g. ``"by", "score", "response", "weight"``).

    Returns
    -------
    callable
        The decorator. The wrapped function takes a DataFrame or a
        LazyFrame first and returns the same kind; its signature and
        docstring are the function's own.
    """

    def decorate(function: Callable[..., pl.LazyFrame]) -> Callable[..., Any]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapper(frame: Any, *args: Any, **kwargs: Any) -> Any:
            if is_foreign(frame):  # pandas or PyArrow: converted once, to a DataFrame
                frame = polars_frame(frame)
            bound = signature.bind(frame, *args, **kwargs)
            given = {c: bound.arguments[c] for c in columns if c in bound.arguments}
            if isinstance(frame, pl.DataFrame | pl.LazyFrame):
                if any(_has_expression(v) for v in given.values()):
                    frame, given = named_columns(frame, given)
                    bound.arguments.update(given)
                    bound.arguments[next(iter(signature.parameters))] = frame
            result = function(*bound.args, **bound.kwargs)
            if isinstance(frame, pl.DataFrame) and isinstance(result, pl.LazyFrame):
                # The data are in memory already: Polars' in-memory engine runs
                # these plans faster than the streaming default (benchmarks/README.md).
                return result.collect(engine="in-memory")
            return result

        return wrapper

    return decorate  # type: ignore[return-value]


def _has_expression(value: Any) -> bool:
    if isinstance(value, pl.Expr):
        return True
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and any(isinstance(item, pl.Expr) for item in value)
    )
