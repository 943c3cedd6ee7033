"""Calibration by score ranges: what one range contributes (pure functions of its rows).

Calibration compares each merged point with its own score (method.md 2,
equations (44)-(47) of M. Tygert, "Cumulative deviation of a subpopulation
from the full population"): the term of point k of a group is
W'_k (R'_k - S'_k), and sigma^2 sums W'_k^2 f_k S'_k (1 - S'_k). Nothing
reaches across points, so a range (cut between distinct scores:
:mod:`.cuts`, no tie is split) holds whole points, and one walk of the
calibration kernel (:func:`polars_cumdev.kernel.calibration_walk`, the
in-process walk) over the range's rows gives every (range, group) *cell*
its partial walk: its sums, and the largest and smallest partial sum with
the places of their first occurrences. The driver shifts each cell's
partial sums by the sums of the group's earlier cells
(:mod:`.calibration_ranges`).

:func:`calibration_cells` is the first pass's step; :func:`calibration_points`
the second's, for the groups whose stretch is located: their points with
absolute A and C, the range's best stretch and the candidates for
stretches crossing ranges, in the layout of
:func:`polars_cumdev.engines.partitioned.points.range_points`, so that
:func:`polars_cumdev.engines.partitioned.locating.stitch` finishes them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.columns import GID, TOTAL_WEIGHT
from polars_cumdev.engines.partitioned.locating import FID, SIGN
from polars_cumdev.engines.partitioned.points import _bests
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled as _engines
from polars_cumdev.method.node_columns import group_ids

__all__ = [
    "CELL_SUMS",
    "calibration_cells",
    "calibration_points",
    "empty_cells",
    "walk_ordered",
    "walked_cells",
    "walked_points",
]

#: The cell's sums, in the kernel's units (weights times the plan's scale), undivided
#: (``s_3``, ``s_4``: the effective events' terms, ``kernel.walks.EVENTS_3`` and ``_4``).
CELL_SUMS = ("weight", "c_last", "s_b", "s_e", "e_c", "e_b", "e_e", "s_3", "s_4")
#: Every column of a cell after the keys.
CELL_COLUMNS = (
    "n",
    "n_scores",
    *CELL_SUMS,
    "c_max",
    "c_min",
    "at_max",
    "at_min",
    "lo",
    "overflows",
)


def empty_cells(keys: Sequence[str], key_types: dict[str, pl.DataType]) -> pl.DataFrame:
    """A frame of cells with no row (the schema of :func:`calibration_cells`)."""
    ints = ("n", "n_scores", "at_max", "at_min", "overflows")
    schema = {k: key_types[k] for k in keys}
    schema |= {c: (pl.Int64 if c in ints else pl.Float64) for c in CELL_COLUMNS}
    return pl.DataFrame(schema=schema)


def _walk(frame: pl.DataFrame, keys: Sequence[str], scale: float):
    """The kernel's calibration walk over ``frame``'s rows in canonical order.

    Returns ``(out, first, curves, starts, order)``: the kernel's per-group
    sums (undivided), each group's first row in the order, the points'
    running weight, running C and score, the groups' offsets in ``curves``
    and the source row of each place of the order.
    """
    kernel = _engines.kernel()
    ids, offset, count = group_ids(frame, keys)
    s, r, w = (
        np.ascontiguousarray(frame.get_column(c).cast(pl.Float64).to_numpy())
        for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    )
    s, order, (r, w, ids) = kernel.bucketsort.bucket_sort(s, r, w, ids, True)
    return (*walk_ordered(ids, offset, count, s, r, w, scale), order)


def walk_ordered(
    ids: np.ndarray,
    offset: int,
    count: int,
    s: np.ndarray,
    r: np.ndarray,
    w: np.ndarray,
    scale: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The calibration walk of rows already in canonical order (score, weight, response)
    within each group: ``(out, first, curves, starts)`` as :func:`_walk` gives them.

    Only each group's own rows need that order: the walk keeps one state per
    group, so rows of different groups may interleave in any way.
    """
    kernel = _engines.kernel()
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(kernel.tie_counts(ids, offset, s, count), out=starts[1:])
    out, first, curves = kernel.calibration_walk(
        ids, offset, s, r, w, True, scale, count, starts, 1, divided=False
    )
    return out, first, curves, starts


def _first_places(values: np.ndarray, extremes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group, the place (1, 2, ...) of the first point whose value equals its extreme."""
    counts = np.diff(starts)
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    hits = np.flatnonzero(values == extremes[owner])
    hit_owner = owner[hits]  # (non-decreasing: the first hit of each group opens its run)
    opens = np.ones(hits.shape[0], dtype=np.bool_)
    np.not_equal(hit_owner[1:], hit_owner[:-1], out=opens[1:])
    groups = hit_owner[opens]
    places = np.zeros(counts.shape[0], dtype=np.int64)
    places[groups] = hits[opens] - starts[groups] + 1
    return places


def calibration_cells(frame: pl.DataFrame, keys: Sequence[str], scale: float) -> pl.DataFrame:
    """Range ``r``'s cells: one row per group present in ``frame`` (the range's rows).

    Parameters
    ----------
    frame
        The standardized rows of one range (keys, ``SCORE``, ``RESPONSE``,
        ``WEIGHT``), in any order: the walk reads them in canonical order
        (score, weight, response), so the result does not depend on it.
    keys
        The grouping columns (possibly none).
    scale
        The power of two the weights are multiplied by (the whole data's,
        :func:`polars_cumdev.method.weights.scale_factor` of the largest
        weight), so that every range's sums are in the same units.

    Returns
    -------
    pl.DataFrame
        The keys, ``n``, ``n_scores``, the sums :data:`CELL_SUMS` (the
        cell's weight, its partial sum of W'_k (R'_k - S'_k), the sigma sums
        and error bounds), ``c_max`` and ``c_min`` (the largest and smallest
        partial sum over the cell's points), ``at_max`` and ``at_min`` (the
        places of their first occurrences, from 1), ``lo`` (the cell's
        first score) and ``overflows``.
    """
    if not frame.height:
        return empty_cells(keys, dict(frame.schema))
    out, first, curves, starts, order = _walk(frame, keys, scale)
    body = walked_cells(out, first, curves, starts)
    if not keys:
        return body
    named = frame.select(keys)[pl.Series(order[first[first >= 0]])]
    return pl.concat([named, body], how="horizontal")


def walked_cells(
    out: np.ndarray, first: np.ndarray, curves: np.ndarray, starts: np.ndarray
) -> pl.DataFrame:
    """The cells' columns after the keys, one row per group present (``first >= 0``), in
    the order of the group numbers, from the walk :func:`walk_ordered`."""
    from polars_cumdev import kernel as k

    present = first >= 0
    at_max = _first_places(curves[:, 1], out[:, k.C_MAX], starts)
    at_min = _first_places(curves[:, 1], out[:, k.C_MIN], starts)
    lo = curves[np.minimum(starts[:-1], max(curves.shape[0] - 1, 0)), 2]
    columns = {
        "n": out[:, k.N_ROWS].astype(np.int64),
        "n_scores": out[:, k.N_SCORES].astype(np.int64),
        "weight": out[:, k.WEIGHT],
        "c_last": out[:, k.C_LAST],
        "s_b": out[:, k.SIGMA_B],
        "s_e": out[:, k.SIGMA_E],
        "e_c": out[:, k.ERR_C],
        "e_b": out[:, k.ERR_B],
        "e_e": out[:, k.ERR_E],
        "s_3": out[:, k.EVENTS_3],
        "s_4": out[:, k.EVENTS_4],
        "c_max": out[:, k.C_MAX],
        "c_min": out[:, k.C_MIN],
        "at_max": at_max,
        "at_min": at_min,
        "lo": lo,
        "overflows": out[:, k.OVERFLOWS].astype(np.int64),
    }
    return pl.DataFrame({c: v[present] for c, v in columns.items()})


def calibration_points(
    frame: pl.DataFrame, keys: Sequence[str], scale: float, cells: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The second pass of one range, for the flagged groups' cells ``cells`` only.

    ``cells`` are the range's rows of
    :attr:`polars_cumdev.engines.partitioned.Locating.cells` (``FID``, the keys,
    ``SIGN``, ``LIMIT``, ``c_base``, ``TOTAL_WEIGHT``, ``prior_w``,
    ``prior_n``, ``next_score``, ``lo_level``, ``hi_level``). Each flagged
    group's points get their place on the whole curve: A_k = (weight
    before the cell + running weight) / W and C_k = C before the cell +
    (running sum) / W. Returns ``(bests, candidates)`` as
    :func:`polars_cumdev.engines.partitioned.points.range_points` does.
    """
    from polars_cumdev.engines.partitioned.locating import empty_outputs

    keys = list(keys)
    if keys:
        frame = frame.join(
            cells.select(keys), on=keys, how="semi", nulls_equal=True, maintain_order="left"
        )
    if not frame.height:
        return empty_outputs()
    _, first, curves, starts, order = _walk(frame, keys, scale)
    present = np.flatnonzero(first >= 0)
    groups = pl.DataFrame({GID: present})
    if keys:
        named = frame.select(keys)[pl.Series(order[first[present]])]
        groups = pl.concat([named, groups], how="horizontal")
        groups = groups.join(cells, on=keys, how="inner", nulls_equal=True).drop(keys)
    else:
        groups = groups.join(cells, how="cross")
    return walked_points(groups, curves, starts)


#: A flagged group's columns, in the order the compiled
#: :func:`polars_cumdev.kernel.pieces.calibration_pieces` reads them.
_CONSTANTS = (
    TOTAL_WEIGHT,
    "prior_w",
    "c_base",
    "prior_n",
    "next_score",
    SIGN,
    "lo_level",
    "hi_level",
)


def walked_points(
    groups: pl.DataFrame, curves: np.ndarray, starts: np.ndarray
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`calibration_points`' outputs from the walk (:func:`walk_ordered`) of the
    flagged groups' rows: ``groups`` holds each flagged group's number (``GID``) and
    its cell's columns (those of ``cells`` after the keys)."""
    groups = groups.sort(GID)
    ids = groups.get_column(GID).to_numpy()
    counts = np.diff(starts)[ids]
    group_starts = np.zeros(ids.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=group_starts[1:])
    constants = groups.select(pl.col(c).cast(pl.Float64).fill_null(np.nan) for c in _CONSTANTS)
    score, a, c, position, nxt, end, start = _engines.kernel().calibration_pieces(
        group_starts,
        starts[ids],
        curves,
        np.ascontiguousarray(constants.to_numpy()),
    )
    values = {"score": score, "a": a, "c": c, "position": position, "next": nxt}
    values |= {"end": end, "start": start}
    picked = end | start
    owner = np.repeat(np.arange(ids.shape[0]), counts)[picked]
    candidates = pl.DataFrame(
        {
            FID: groups.get_column(FID).to_numpy()[owner],
            "position": position[picked].astype(np.int64),
            **{name: values[name][picked] for name in ("a", "c", "score", "next")},
        },
        schema_overrides={FID: groups.schema[FID]},
    ).with_columns(pl.col("next").fill_nan(None))
    return _bests(group_starts, groups, values, True), candidates
