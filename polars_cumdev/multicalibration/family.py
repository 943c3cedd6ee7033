"""The family of segments: every conjunction of at most ``depth`` feature levels.

A :class:`Segments` object only *describes* the family (which features, how
many levels, the depth, the smallest segment); the levels themselves depend on
the data and are found by :func:`coded_features` on the rows sorted by score.
Each feature becomes an integer code per row, so every subset of features is a
partition of the rows, numbered by the mixed-radix combination of its codes:
one sort by score serves every segment, and no segment is ever a row mask.

Two sets of rules (``rules``):

* ``"cumdev"`` (default): a categorical feature keeps, by default, every value
  with at least ``min_rows`` rows (the :data:`MAX_LEVELS` most frequent at
  most), with ``levels`` given its ``levels - 1`` most frequent values (count
  ties broken by value), and pools the rest into ``(other)``
  (:meth:`Segments.kept_count`: the one place of that rule; what is pooled is
  reported in the table's ``pooled`` column); a numerical feature is cut at
  its quantiles k / ``levels`` (:data:`BINS` by default) into at most that
  many right-closed bins (raw values when it has at most
  ``levels`` distinct ones). Nulls (and NaN) are a level of their own,
  ``(missing)``, never pooled. No cap unless ``max_segments`` is given, and
  then the smallest segments are dropped and counted.
* ``"mcgrad"``: MCGrad 0.1.5's rules (multicalibration-mcgrad.md, section a):
  nulls count as an ordinary categorical value, count ties and level order by
  first appearance along the sorted rows, and the first
  ``chunk * ceil(max_segments / chunk)`` segments in enumeration order kept.
  As in MCGrad, "first appearance" among rows with the same score, weight
  and response follows the order in which the sort leaves them, so with a
  cap the segments kept may change when such rows are shuffled; the
  ``"cumdev"`` rules do not depend on the row order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CumdevError,
    InvalidParameterError,
)
from polars_cumdev.multicalibration.coding import MISSING, OTHER, Coded
from polars_cumdev.multicalibration.levels import coded_features

__all__ = [
    "BINS",
    "MAX_LEVELS",
    "MISSING",
    "OTHER",
    "Coded",
    "Segments",
    "coded_features",
    "enumerate_family",
    "layout",
    "marginals",
    "segments",
    "subset_ids",
]

Rules = Literal["cumdev", "mcgrad"]

#: Most levels a categorical feature keeps by default (``levels=None``), besides ``(other)``.
MAX_LEVELS = 50
#: Quantile bins of a numerical feature by default (``levels=None``).
BINS = 3
#: MCGrad's default ``max_values_per_segment_feature`` (``rules="mcgrad"``, ``levels=None``).
MCGRAD_LEVELS = 3


@dataclass(frozen=True)
class Segments:
    """A family of segments (see :func:`segments`)."""

    categorical: tuple[str, ...]
    numerical: tuple[str, ...]
    depth: int
    levels: int | None
    min_rows: int
    max_segments: int | None = None
    rules: Rules = "cumdev"
    chunk: int = 50
    feature_levels: tuple[tuple[str, int], ...] = ()

    def levels_of(self, name: str) -> int | None:
        """The levels asked of feature ``name`` (``feature_levels`` wins over ``levels``).

        ``None`` is the default rule (:meth:`kept_count`, :meth:`bins_of`).
        """
        return dict(self.feature_levels).get(name, self.levels)

    def bins_of(self, name: str) -> int:
        """The quantile bins of numerical feature ``name``: as asked, else :data:`BINS`."""
        levels = self.levels_of(name)
        return BINS if levels is None else levels

    def kept_count(self, name: str, counts: Sequence[int]) -> int:
        """How many of categorical feature ``name``'s values keep a level of their own.

        ``counts`` are the rows of its values, most frequent first; the
        values after the kept ones are pooled into ``(other)``. With
        ``levels`` (or ``feature_levels``) L: every value when there are at
        most L, else the L - 1 most frequent. By default (``levels=None``;
        ``rules="cumdev"``): every value with at least ``min_rows`` rows,
        the :data:`MAX_LEVELS` most frequent at most (a value with fewer
        rows can form no segment of its own, so pooling it hides nothing
        that could be tested). ``rules="mcgrad"`` by default: MCGrad's 3.
        """
        levels = self.levels_of(name)
        if levels is None and self.rules == "mcgrad":
            levels = MCGRAD_LEVELS
        if levels is not None:
            return len(counts) if len(counts) <= levels else levels - 1
        large = sum(1 for c in counts if c >= self.min_rows)
        return min(large, MAX_LEVELS)

    @property
    def features(self) -> tuple[str, ...]:
        """Categorical features first, then numerical ones (MCGrad's order)."""
        return self.categorical + self.numerical

    def subsets(self) -> list[tuple[int, ...]]:
        """Feature subsets by depth, each in ``itertools.combinations`` order."""
        depth = min(self.depth, len(self.features))
        return [
            c
            for d in range(depth + 1)
            for c in itertools.combinations(range(len(self.features)), d)
        ]

    def check(self, schema: pl.Schema, reserved: Sequence[str]) -> None:
        """Raise a :class:`CumdevError` when a feature is missing, clashes or has a bad type.

        A family naming no feature (only a hand-made :class:`Segments` can) is
        refused here too: its full population alone is ``calibration(...)``.
        """
        if not self.features:
            raise InvalidParameterError(
                "the family of segments names no feature: name columns in `categorical` or "
                "`numerical` (the full population alone is calibration(...))"
            )
        for name in self.features:
            if name not in schema:
                raise ColumnNotFoundError(
                    f"segment feature {name!r} not found; the frame has columns {list(schema)}"
                )
            if name in reserved or name.startswith("_"):
                raise InvalidParameterError(
                    f"segment feature {name!r} clashes with an output column name; rename it first"
                )
        for name in self.numerical:
            dtype = schema[name]
            if not (dtype.is_numeric() or dtype == pl.Boolean):
                raise ColumnTypeError(
                    f"numerical feature {name!r} must be numeric, got {dtype}; "
                    "list it under `categorical` instead"
                )
        for name in self.categorical:
            dtype = schema[name]
            ok = dtype in (pl.String, pl.Categorical, pl.Boolean) or isinstance(dtype, pl.Enum)
            if not (ok or dtype.is_integer()):
                raise ColumnTypeError(
                    f"categorical feature {name!r} must be a string, categorical, enum, boolean "
                    f"or integer column, got {dtype}; cast it first"
                )


def _positive_int(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidParameterError(f"`{name}` must be an integer >= {low}, got {value!r}")
    return value


def _names(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    names = tuple(value)  # type: ignore[arg-type]
    if not all(isinstance(n, str) and n for n in names):
        raise InvalidParameterError(f"`{what}` must be column names, got {value!r}")
    return names


def segments(
    categorical: Sequence[str] | str | None = None,
    numerical: Sequence[str] | str | None = None,
    *,
    depth: int = 3,
    levels: int | None = None,
    min_rows: int = 10,
    max_segments: int | None = None,
    rules: Rules = "cumdev",
    chunk: int = 50,
    feature_levels: Mapping[str, int] | None = None,
) -> Segments:
    """Describe the family of segments a multicalibration audit examines.

    Every conjunction of at most ``depth`` features, one level each, is a
    segment, the empty conjunction (the full population) included; a
    segment is kept when it has at least ``min_rows`` rows. The levels are
    found from the data when the audit runs (see the module docstring), the
    same way whatever the row order.

    Parameters
    ----------
    categorical
        Categorical features (string, categorical, enum, boolean or integer).
    numerical
        Numerical features, cut at their quantiles.
    depth
        Largest number of features in a conjunction (MCGrad's ``max_depth``).
    levels
        Levels per feature, not counting ``(missing)`` (MCGrad's
        ``max_values_per_segment_feature``): a categorical feature with more
        values keeps its ``levels - 1`` most frequent and pools the rest into
        ``(other)``; a numerical one is cut into ``levels`` quantile bins.
        ``None`` (default): a categorical feature keeps every value with at
        least ``min_rows`` rows, at most :data:`MAX_LEVELS` of them (fifty), the
        most frequent, and pools the rest into ``(other)``; a numerical one
        is cut into :data:`BINS` quantile bins (three) (with ``rules="mcgrad"``,
        MCGrad's 3 levels for both). What is pooled (values and rows) is
        reported in the table's ``pooled`` column.
    min_rows
        Fewest rows of a kept segment (MCGrad's ``min_samples_per_segment``).
    max_segments
        Optional cap on the number of segments. ``rules="cumdev"`` keeps the
        largest ones (ties by enumeration order) and counts the dropped ones;
        ``rules="mcgrad"`` keeps the first ones in enumeration order, as
        MCGrad does (with ``chunk``), and counts the dropped ones too.
    rules
        ``"cumdev"`` or ``"mcgrad"`` (multicalibration-mcgrad.md, section a).
    chunk
        MCGrad's ``chunk_size`` (only with ``rules="mcgrad"`` and a cap).
    feature_levels
        Levels of particular features, overriding ``levels`` (e.g.
        ``{"county": 50}`` keeps every county of 50 or fewer apart).

    Returns
    -------
    Segments
        The description, passed as ``segments=`` to
        :func:`polars_cumdev.multicalibration.multicalibration`.
    """
    cat, num = _names(categorical, "categorical"), _names(numerical, "numerical")
    if not cat + num:
        raise InvalidParameterError(
            "segments() needs at least one feature: name columns in `categorical` or "
            "`numerical` (the full population alone is calibration(...))"
        )
    if len(set(cat + num)) < len(cat + num):
        raise InvalidParameterError(f"a feature is listed twice in {list(cat + num)}")
    if rules not in ("cumdev", "mcgrad"):
        raise InvalidParameterError(f"`rules` must be 'cumdev' or 'mcgrad', got {rules!r}")
    if max_segments is not None:
        _positive_int(max_segments, "max_segments", 1)
    own = dict(feature_levels or {})
    for name, count in own.items():
        if name not in cat + num:
            raise InvalidParameterError(f"`feature_levels` names {name!r}, which is not a feature")
        _positive_int(count, f"feature_levels[{name!r}]", 2)
    return Segments(
        categorical=cat,
        numerical=num,
        depth=_positive_int(depth, "depth", 0),
        levels=None if levels is None else _positive_int(levels, "levels", 2),
        min_rows=_positive_int(min_rows, "min_rows", 1),
        max_segments=max_segments,
        rules=rules,
        chunk=_positive_int(chunk, "chunk", 1),
        feature_levels=tuple(sorted(own.items())),
    )


def subset_ids(
    coded: Sequence[Coded], subset: tuple[int, ...], rows: int
) -> tuple[np.ndarray, int]:
    """Each row's segment number within ``subset`` (mixed radix, last feature fastest)."""
    if not subset:
        return np.zeros(rows, dtype=np.int32), 1
    ids = coded[subset[0]].codes.astype(np.int32, copy=True)
    size = len(coded[subset[0]].labels)
    for f in subset[1:]:
        count = len(coded[f].labels)
        ids *= count
        ids += coded[f].codes
        size *= count
    return ids, size


def decode(coded: Sequence[Coded], subset: tuple[int, ...], number: int) -> list[int]:
    """The level of each feature of ``subset`` in segment ``number``."""
    levels = []
    for f in reversed(subset):
        count = len(coded[f].labels)
        levels.append(number % count)
        number //= count
    return levels[::-1]


def enumerate_family(
    counts: Sequence[np.ndarray], family: Segments
) -> tuple[list[np.ndarray], int]:
    """Which segment numbers of each subset are kept, and how many were dropped by the cap.

    ``counts[i]`` holds the rows of every segment number of subset i. A
    segment is kept with at least ``min_rows`` rows; then the cap, if any.
    """
    kept = [np.flatnonzero(c >= family.min_rows) for c in counts]
    total = sum(k.shape[0] for k in kept)
    cap = family.max_segments
    if cap is None or total <= cap:
        return kept, 0
    if family.rules == "mcgrad":
        size = min(family.chunk, cap)
        limit = min(total, size * math.ceil(cap / size))
        out, left = [], limit
        for k in kept:
            out.append(k[: max(left, 0)])
            left -= k.shape[0]
        return out, total - limit
    sizes = np.concatenate([c[k] for c, k in zip(counts, kept, strict=True)])
    order = np.argsort(-sizes, kind="stable")[:cap]
    chosen = np.zeros(total, dtype=bool)
    chosen[order] = True
    out, start = [], 0
    for k in kept:
        out.append(k[chosen[start : start + k.shape[0]]])
        start += k.shape[0]
    return out, total - cap


def _check_codes(feature: Coded) -> None:
    """Refuse codes outside 0 ... levels - 1 before a compiled walk indexes by them."""
    codes, count = feature.codes, len(feature.labels)
    if codes.shape[0] and (int(codes.min()) < 0 or int(codes.max()) >= count):
        raise CumdevError(
            f"internal error: level codes {int(codes.min())} ... {int(codes.max())} "
            f"outside 0 ... {count - 1}"
        )


def layout(
    coded: Sequence[Coded], subsets: Sequence[tuple[int, ...]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The walk's view of the family: a features x rows code matrix, per subset its
    features and their numbers of levels (padded with -1 and 1), where its segment
    numbers start, and the number of segment numbers over all subsets.
    """
    widest = max(256, *(len(c.labels) for c in coded)) if coded else 256
    # The narrowest code that holds every level (a feature may have more than 2^16).
    dtype = np.uint8 if widest <= 1 << 8 else np.uint16 if widest <= 1 << 16 else np.int32
    rows = coded[0].codes.shape[0] if coded else 0
    codes = np.zeros((max(len(coded), 1), rows), dtype=dtype)
    for f, c in enumerate(coded):
        _check_codes(c)
        codes[f] = c.codes
    depth = max(1, *(len(s) for s in subsets))
    features = np.full((len(subsets), depth), -1, dtype=np.int64)
    radices = np.ones((len(subsets), depth), dtype=np.int64)
    sizes = np.ones(len(subsets), dtype=np.int64)
    for k, subset in enumerate(subsets):
        for j, f in enumerate(subset):
            features[k, j] = f
            radices[k, j] = len(coded[f].labels)
        sizes[k] = int(np.prod(radices[k]))
    bases = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return codes, features, radices, bases, int(sizes.sum())


def marginals(
    table: np.ndarray, first: np.ndarray, counts: np.ndarray, subset: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """A subset's additive sums and first rows from those of the cells of the full cross.

    ``table`` (cells x columns) and ``first`` are numbered in mixed radix
    over every feature (``counts`` levels each, last fastest); the subset's
    segments are unions of cells, numbered as :func:`subset_ids` numbers
    them. Sums add up; a segment's first row is its cells' earliest (-1 when
    every cell is empty).
    """
    shape = tuple(int(c) for c in counts)
    others = tuple(f for f in range(len(shape)) if f not in subset)
    sums = table.reshape(*shape, table.shape[1]).sum(axis=others)
    rows = np.where(first < 0, np.iinfo(np.int64).max, first).reshape(shape).min(axis=others)
    size = int(np.prod([shape[f] for f in subset], dtype=np.int64))
    rows = np.where(rows == np.iinfo(np.int64).max, -1, rows).reshape(size)
    return sums.reshape(size, table.shape[1]), rows
