"""Frames from other libraries: pandas DataFrames and PyArrow tables, converted once.

The analyses work on Polars frames. A pandas DataFrame or a PyArrow
``Table`` / ``RecordBatch`` handed to a top-level function is converted once,
at the door, with :func:`polars.from_pandas` or :func:`polars.from_arrow`
(the latter without rechunking, so Arrow buffers are shared, not copied,
wherever Polars can use them as they are). pandas and PyArrow stay optional:
the type of the object is recognized by the name of the module that defines
it, so neither library is imported unless the user already holds one of its
objects.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_cumdev.errors import InvalidParameterError, first_line

__all__ = ["is_foreign", "polars_frame"]

_ARROW_TABLES = ("Table", "RecordBatch")


def _library(frame: object) -> str:
    """The top-level package of the module defining ``type(frame)`` (e.g. ``"pandas"``)."""
    return type(frame).__module__.partition(".")[0]


def is_foreign(frame: object) -> bool:
    """Whether ``frame`` is a pandas DataFrame or a PyArrow table (not a Polars frame)."""
    library = _library(frame)
    if library == "pandas":
        return type(frame).__name__ == "DataFrame"
    return library == "pyarrow" and type(frame).__name__ in _ARROW_TABLES


def _from_pandas(frame: Any, what: str) -> pl.DataFrame:
    """A pandas DataFrame as a Polars one, NaN kept as NaN in float columns.

    In a float column NaN is a value the checks name as NaN (a null is what
    pandas writes as ``pd.NA`` in a nullable column); elsewhere NaN and None
    are pandas' marks of a missing value, and become nulls. A column Polars
    cannot convert (an object column mixing str and int) is named.
    """
    try:
        converted = pl.from_pandas(frame)
    except Exception:
        for column in frame.columns:
            try:
                pl.from_pandas(frame[[column]])
            except Exception as exc:
                values = frame[column].dropna()
                kinds = sorted({type(v).__name__ for v in values})
                mixed = f"mixes values of types {kinds}" if len(kinds) > 1 else first_line(exc)
                raise InvalidParameterError(
                    f"`{what}` (DataFrame from pandas): column {column!r} ({frame[column].dtype}) "
                    f"{mixed}; a column holds one type: cast it first, e.g. "
                    f"df[{column!r}].astype(str)"
                ) from None
        raise
    floats = [c for c, dtype in frame.dtypes.items() if getattr(dtype, "kind", "") == "f"]
    if not floats:
        return converted
    return converted.with_columns(pl.from_pandas(frame[floats], nan_to_null=False))


def polars_frame(frame: Any, what: str = "frame") -> pl.DataFrame | pl.LazyFrame:
    """``frame`` as a Polars frame: Polars frames pass, pandas and PyArrow are converted.

    Parameters
    ----------
    frame
        A Polars DataFrame or LazyFrame (returned as it is), a pandas
        DataFrame (:func:`polars.from_pandas`; the index is not kept, NaN in
        a float column stays NaN, None and NaN elsewhere are nulls) or a
        PyArrow ``Table`` / ``RecordBatch`` (:func:`polars.from_arrow` with
        ``rechunk=False``: zero-copy where the Arrow layout allows).
    what
        How messages name the argument.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame

    Raises
    ------
    InvalidParameterError
        For any other object (a pandas Series, a NumPy array, a dict, ...),
        or a foreign frame Polars cannot convert (the reason is given).
    """
    if isinstance(frame, pl.DataFrame | pl.LazyFrame):
        return frame
    if not is_foreign(frame):
        kind = f"{type(frame).__module__}.{type(frame).__qualname__}"
        raise InvalidParameterError(
            f"`{what}` must be a Polars DataFrame or LazyFrame, a pandas DataFrame or a "
            f"PyArrow Table; got {kind}"
        )
    try:
        if _library(frame) == "pandas":
            return _from_pandas(frame, what)
        converted = pl.from_arrow(frame, rechunk=False)
    except InvalidParameterError:
        raise
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameterError(
            f"`{what}` ({type(frame).__name__} from {_library(frame)}) cannot be converted "
            f"to a Polars frame: {text}"
        ) from None
    assert isinstance(converted, pl.DataFrame)  # a Table or RecordBatch gives a frame
    return converted
