"""Calibration of multiclass probabilities: top-label and class-wise.

A classifier gives each row K probabilities p_0, ..., p_{K-1}, as K score
columns or one List/Array column, and the row's label names its class.
Both kinds reduce to the calibration of one probability per row
(:mod:`polars_cumdev.calibration.cumulative`, method.md 2):

* **top-label**: the score is the top probability max_c p_c and the response
  is 1 when the label is the predicted class (the first class reaching the
  top probability, so a tie in the argmax goes to the lowest class index),
  0 otherwise. One curve: is the model's confidence in its own prediction
  right?
* **class-wise**: for each class c, the score p_c against the indicator
  "label is c" (one-vs-rest). The rows are unpivoted into a ``class`` key and
  the classes become groups of ``by``: one query, one row per (group, class),
  with Benjamini-Hochberg (``ecce_r_q``) and Holm (``ecce_r_holm``)
  adjustments across all rows of the result.

Labels are matched to classes as follows. With ``classes`` given, the label
values are looked up in it (class c is ``classes[c]``, the c-th score). Without
it, an integer label is the class index 0..K-1 (the order of the score
columns, or of the list), and a string label is the name of a score column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidParameterError,
    InvalidValuesError,
)
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check, guard, verdict
from polars_cumdev.method.prepare import FrameLike, as_lazy, schema_of

__all__ = ["KINDS", "Multiclass", "check_kind", "multiclass"]

KINDS = ("top-label", "class-wise")
_PROBS = f"{nm.PREFIX}probabilities"
_INDEX = f"{nm.PREFIX}label_index"
_CLASS = f"{nm.PREFIX}class_index"


def check_kind(kind: object) -> str:
    """Validate ``kind``: "top-label" or "class-wise"."""
    if kind not in KINDS:
        raise InvalidParameterError(f"`kind` must be 'top-label' or 'class-wise', got {kind!r}")
    return str(kind)


@dataclass(frozen=True)
class Multiclass:
    """The checked rows, one List column of probabilities and the label's class index.

    ``names`` holds the K class names when K is known (score columns, an
    Array column, or ``classes``), else None (a List column with integer
    labels: the classes are the indices).
    """

    rows: pl.LazyFrame
    names: list[Any] | None
    what: str  # how errors name the scores, e.g. "score columns ['a', 'b']"
    response: str

    def _index(self, class_: object) -> int:
        if self.names is not None and class_ in self.names:
            return self.names.index(class_)
        if isinstance(class_, int) and not isinstance(class_, bool):
            k = len(self.names) if self.names is not None else None
            if class_ >= 0 and (k is None or class_ < k):
                return class_
        known = "" if self.names is None else f"; the classes are {self.names}"
        raise InvalidParameterError(f"`class_`={class_!r} is not a class{known}")

    def top_label(self, score: str, hit: str) -> pl.LazyFrame:
        """Rows with the top probability ``score`` and the indicator ``hit`` it was right."""
        probs = pl.col(_PROBS)
        right = probs.list.arg_max().cast(pl.Int64) == pl.col(_INDEX)
        return self.rows.with_columns(
            probs.list.max().alias(score), right.cast(pl.Float64).alias(hit)
        ).drop(_PROBS, _INDEX)

    def one_vs_rest(self, score: str, hit: str, class_: object = None) -> pl.LazyFrame:
        """Rows unpivoted to (class, p_class, label is class); only ``class_`` when given."""
        probs = pl.col(_PROBS)
        long = self.rows.with_columns(
            pl.int_ranges(0, probs.list.len(), dtype=pl.Int64).alias(_CLASS)
        ).explode([_PROBS, _CLASS])
        if class_ is not None:
            long = long.filter(pl.col(_CLASS) == self._index(class_))
        cls = pl.col(_CLASS)
        if self.names is not None:
            cls = cls.replace_strict(list(range(len(self.names))), self.names)
        return long.select(
            pl.all().exclude(_PROBS, _INDEX, _CLASS),
            cls.alias("class"),
            pl.col(_PROBS).alias(score),
            (pl.col(_CLASS) == pl.col(_INDEX)).cast(pl.Float64).alias(hit),
        )


def _probabilities(schema: pl.Schema, score: str | Sequence[str]) -> tuple[pl.Expr, list, str]:
    """The List expression of the K probabilities, the score names (or []), and their label."""
    if isinstance(score, str):
        if score not in schema:
            raise ColumnNotFoundError(
                f"score column {score!r} not found; the frame has columns {list(schema)}"
            )
        dtype = schema[score]
        if not isinstance(dtype, pl.List | pl.Array) or not dtype.inner.is_numeric():
            raise ColumnTypeError(
                f"score column {score!r} is {dtype}: multiclass calibration needs a List or "
                "Array column of class probabilities, or a list of score columns"
            )
        names = list(range(dtype.size)) if isinstance(dtype, pl.Array) else []
        expr = pl.col(score).cast(pl.List(pl.Float64))
        return expr, names, f"score column {score!r}"
    columns = list(score)
    if len(columns) < 2 or not all(isinstance(c, str) for c in columns):
        raise InvalidParameterError(
            f"`score` must name at least two probability columns, got {score!r}"
        )
    if len(set(columns)) != len(columns):
        raise InvalidParameterError(f"`score` names a column twice: {columns}")
    for c in columns:
        if c not in schema:
            raise ColumnNotFoundError(
                f"score column {c!r} not found; the frame has columns {list(schema)}"
            )
        if not schema[c].is_numeric():
            raise ColumnTypeError(f"score column {c!r} is {schema[c]}, not numeric")
    expr = pl.concat_list([pl.col(c).cast(pl.Float64) for c in columns])
    return expr, columns, f"score columns {columns}"


def _label_index(dtype: pl.DataType, response: str, names: list, given: bool) -> pl.Expr:
    """The class index of each label (null where it matches no class)."""
    label = pl.col(response)
    if given:
        return label.replace_strict(names, list(range(len(names))), default=None)
    if dtype.is_integer():  # (a label beyond Int64, e.g. UInt64 from 2^63, matches no class)
        return label.cast(pl.Int64, strict=False)
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        if not names or not all(isinstance(n, str) for n in names):
            raise InvalidParameterError(
                f"response column {response!r} holds class names: pass `classes=[...]`, "
                "the name of each class in the order of the probabilities"
            )
        return label.cast(pl.String).replace_strict(names, list(range(len(names))), default=None)
    raise ColumnTypeError(
        f"response column {response!r} is {dtype}: multiclass labels are class indices "
        "(integers 0..K-1) or class names (strings)"
    )


def multiclass(
    frame: FrameLike,
    score: str | Sequence[str],
    response: str,
    weight: str | None,
    by: Sequence[str],
    classes: Sequence[Any] | None,
) -> Multiclass:
    """Check the multiclass columns; the rows gated on those checks (see module docstring)."""
    lazy = as_lazy(frame)
    schema = schema_of(lazy)
    probs, names, what = _probabilities(schema, score)
    if not isinstance(response, str) or response not in schema:
        raise ColumnNotFoundError(
            f"response column {response!r} not found; the frame has columns {list(schema)}"
        )
    if classes is not None:
        classes = list(classes)
        if names and len(classes) != len(names):
            raise InvalidParameterError(
                f"`classes` names {len(classes)} classes but {what} hold {len(names)}"
            )
        if len(set(classes)) != len(classes) or len(classes) < 2:
            raise InvalidParameterError(
                f"`classes` must be at least two distinct values: {classes}"
            )
        names = classes
    if "class" in by:
        raise InvalidParameterError(
            "`by` column 'class' clashes with the output column of the class; rename it first"
        )
    index = _label_index(schema[response], response, names, classes is not None)
    length = probs.list.len()
    k = pl.lit(len(names)) if names else length.max()
    bad = probs.list.eval(
        pl.element().is_null() | pl.element().is_nan() | (pl.element() < 0) | (pl.element() > 1)
    ).list.any()
    checks = [
        Check(
            probs.is_null().sum() + bad.fill_null(False).sum(),
            f"{what}: {{count}} row(s) among {{rows}} have a null, NaN or probability outside "
            "[0, 1]",
        ),
        Check(
            (length != k).sum(),
            f"{what}: {{count}} row(s) among {{rows}} hold another number of probabilities "
            "than the classes",
        ),
        Check(
            pl.col(response).null_count(),
            f"response column {response!r} has {{count}} null label(s) among {{rows}} rows",
        ),
        Check(
            (pl.col(response).is_not_null() & (index.is_null() | (index < 0) | (index >= k))).sum(),
            f"response column {response!r} has {{count}} label(s) among {{rows}} rows that "
            f"match no class (labels are {_rule(names, classes is not None)})",
            InvalidValuesError,
        ),
    ]
    keep = [*by, *([weight] if weight is not None else [])]
    for c in keep:
        if not isinstance(c, str) or c not in schema:
            raise ColumnNotFoundError(
                f"column {c!r} (of `by` or `weight`) not found; the frame has columns "
                f"{list(schema)}"
            )
    rows = lazy.select(*[pl.col(c) for c in keep], probs.alias(_PROBS), index.alias(_INDEX))
    return Multiclass(guard(rows, verdict(lazy, checks)), names or None, what, response)


def _rule(names: list, given: bool) -> str:
    if given:
        return f"the values of `classes`: {names}"
    if names and all(isinstance(n, str) for n in names):
        return f"indices 0..{len(names) - 1} or the score columns' names"
    return "class indices 0..K-1"
