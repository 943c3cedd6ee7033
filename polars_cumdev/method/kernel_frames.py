"""The compiled kernel's arrays as the frames the rest of the plan reads.

:func:`polars_cumdev.method.compiled.node` hands the kernel the sorted rows
(:class:`~polars_cumdev.method.compiled.Rows`); the walks return plain
arrays, one row per group (or per point). These functions turn them into
the layout of the Polars stages: :func:`summary_frame` that of
:func:`polars_cumdev.method.statistics.summarize`, :func:`points_frame`
that of the points the drill-down locates, and :func:`location` each
group's located stretch (method/location.py) from the first walk's sums.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.compiled import Rows
from polars_cumdev.method.kernel_loader import kernel
from polars_cumdev.method.weights import SCALE

__all__ = ["location", "points_frame", "summary_frame", "walk_events"]


def summary_frame(
    rows: Rows,
    keys: Sequence[str],
    out: np.ndarray,
    first: np.ndarray,
    constants: Mapping[str, object] | None = None,
) -> pl.DataFrame:
    """The kernel's per-group arrays in the layout of :func:`statistics.summarize`.

    Divides the kernel's sums by the group's total weight W_g (by W_g^2 for
    the sigma terms): C_k = (sum_{j<=k} W'_j (R'_j - Rt_j)) / W_g, and so on;
    ``weight`` is W_g in the user's units. Groups without rows are dropped;
    keys are read from each group's first row. ``constants`` become columns:
    a scalar repeated on every row (e.g. :func:`facts`), an array one value
    per group number (e.g. :func:`location`).
    """
    from polars_cumdev import kernel as k
    from polars_cumdev.method.statistics import (
        C_ERROR,
        OVERFLOWS,
        SIGMA_B,
        SIGMA_B_ERROR,
        SIGMA_E,
        SIGMA_E_ERROR,
    )

    present = first >= 0
    extra = {
        name: value[present] if isinstance(value, np.ndarray) else np.full(present.sum(), value)
        for name, value in (constants or {}).items()
    }
    out, first = out[present], first[present]
    total = out[:, k.WEIGHT]
    top, bottom = out[:, k.C_MAX], out[:, k.C_MIN]
    columns = {
        "n": out[:, k.N_ROWS].astype(np.int64),
        "n_scores": out[:, k.N_SCORES].astype(np.int64),
        "weight": total / rows.scale,
        "kuiper": (np.maximum(top, 0.0) - np.minimum(bottom, 0.0)) / total,
        "ks": np.maximum(np.abs(top), np.abs(bottom)) / total,
        "delta": out[:, k.C_LAST] / total,
        SIGMA_B: out[:, k.SIGMA_B] / (total * total),
        SIGMA_E: out[:, k.SIGMA_E] / (total * total),
        C_ERROR: out[:, k.ERR_C] / total,
        SIGMA_B_ERROR: out[:, k.ERR_B] / (total * total),
        SIGMA_E_ERROR: out[:, k.ERR_E] / (total * total),
        OVERFLOWS: out[:, k.OVERFLOWS].astype(np.int64),
    }
    body = pl.DataFrame({**columns, **extra}).with_columns(
        pl.col(c).fill_nan(None) for c in extra if extra[c].dtype.kind == "f"
    )
    key_frame = rows.at(first, keys) if keys else pl.DataFrame()
    return pl.concat([key_frame, body], how="horizontal")


def walk_events(out: np.ndarray, binary: bool) -> np.ndarray:
    """Each group's effective number of events from a compiled walk's sums, one per group
    number (:func:`polars_cumdev.method.finite_sample.effective_events` of its sums of
    w^2 v, w^3 v |1 - 2p| and w^4 v (1 - 6v)+, p the reference of each row's point: the
    screen's bin mean Rt_k, calibration's score; ``EVENTS_3`` and ``EVENTS_4`` of
    :mod:`polars_cumdev.kernel.walks`).

    NaN where it is not known: ``binary`` false (the screen of responses other than 0
    and 1 takes another criterion), or a sum that underflowed.
    """
    from polars_cumdev import kernel as k
    from polars_cumdev.method.finite_sample import counted_events

    if not binary:
        return np.full(out.shape[0], np.nan)
    return counted_events(out[:, k.SIGMA_B], out[:, k.EVENTS_3], out[:, k.EVENTS_4])


def location(
    rows: Rows,
    ids: np.ndarray,
    offset: int,
    out: np.ndarray,
    first: np.ndarray,
    binary: bool,
    prefix: tuple[np.ndarray, np.ndarray] | None = None,
    recorded: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None] | None = None,
    level: float | None = None,
) -> dict[str, np.ndarray]:
    """Each group's located stretch (:mod:`location`), one value per group number.

    From the first walk's per-group sums, T = D - 2 sigma; the groups with
    T > 0 are searched. NaN where there is no stretch. With ``level``, only
    the groups whose Kuiper p-value (method.md 4, from the same D and sigma)
    is at most ``level`` are: the result states a stretch only where the
    Benjamini-Hochberg q-value over the groups is at most ``level``
    (:mod:`polars_cumdev.method.findings`), and q is never below p, so the
    others' stretches would be blanked anyway (on ``benchmarks/common.py``'s
    1e7 rows, 132 of the 238 groups with T > 0, holding 17% of their points).
    ``recorded`` is ``(starts, A, C, S')``, every group's curve kept during
    the first walk (:func:`polars_cumdev.kernel.calibration_curves`, or
    :func:`polars_cumdev.kernel.events.screen_events`, whose S' is None: the
    scores of the points the stretches end at are then found in the rows,
    :func:`polars_cumdev.kernel.split_tie_scores`); without it the groups
    with T > 0 are walked again (:func:`polars_cumdev.kernel.group_curves`)
    to lay out their curves.
    ``prefix`` is then the first walk's ``(scores, table)`` of
    :func:`polars_cumdev.kernel.prefix_table`, reused; ``None`` for
    calibration, which has no bins.
    """
    from polars_cumdev import kernel as k
    from polars_cumdev.method.location import located, searched

    total = out[:, k.WEIGHT]
    with np.errstate(invalid="ignore", divide="ignore"):
        kuiper = (np.maximum(out[:, k.C_MAX], 0.0) - np.minimum(out[:, k.C_MIN], 0.0)) / total
        sigma2 = out[:, k.SIGMA_B if binary else k.SIGMA_E] / (total * total)
        sigma = np.sqrt(np.maximum(sigma2, 0.0))
        thresholds = kuiper - 2.0 * sigma
        ks = np.maximum(np.abs(out[:, k.C_MAX]), np.abs(out[:, k.C_MIN])) / total
    wanted = (first >= 0) & searched(kuiper, ks, sigma, thresholds, level)
    columns = {name: np.full(out.shape[0], np.nan) for name in ("from_score", "to_score")}
    columns |= {name: np.full(out.shape[0], np.nan) for name in ("share", "deviation")}
    if not wanted.any():
        return columns
    if recorded is not None:
        starts, a, c, s = recorded
        if s is None:
            points = np.diff(starts)
            s = partial(kernel().split_tie_scores, ids, offset, rows.s, points=points)
        chosen = np.where(wanted, thresholds, np.nan)  # T not positive: not searched
        found = located(starts, a, c, s, chosen, True)
        for name, values in found.items():
            columns[name][wanted] = values[wanted]
        return columns
    counts = np.where(wanted, out[:, k.N_SCORES], 0).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    bins = prefix is not None
    scores, table = prefix if bins else (np.empty(0), np.empty((0, kernel().TABLE_COLUMNS)))
    curves = kernel().group_curves(
        ids,
        offset,
        rows.s,
        rows.r,
        rows.w,
        rows.weighted,
        rows.scale,
        out.shape[0],
        rows.centre,
        scores,
        table,
        bins,
        wanted,
        starts,
    )
    per_point = np.repeat(total[wanted], counts[wanted])
    found = located(
        np.concatenate([[0], np.cumsum(counts[wanted])]),
        curves[:, 0] / per_point,
        curves[:, 1] / per_point,
        curves[:, 2],
        thresholds[wanted],
    )
    for name, values in found.items():
        columns[name][wanted] = values
    return columns


def points_frame(
    rows: Rows, values: np.ndarray, ints: np.ndarray, flags: np.ndarray
) -> pl.DataFrame:
    """The kernel's points of one subpopulation in the layout of ``locate_bins``.

    Weights stay rescaled; the column ``SCALE`` holds the factor.
    """
    from polars_cumdev import kernel as k

    return pl.DataFrame(
        {
            nm.SCORE: values[:, k.P_SCORE],
            nm.WEIGHT: values[:, k.P_WEIGHT],
            nm.RESPONSE: values[:, k.P_RESPONSE],
            nm.TIE: values[:, k.P_TIE],
            nm.ROWS: ints[:, 0],
            nm.BIN_WEIGHT: values[:, k.P_BIN_WEIGHT],
            nm.BIN_ROWS: ints[:, 1],
            nm.REFERENCE: values[:, k.P_REFERENCE],
            nm.BIN_VARIANCE: values[:, k.P_VARIANCE],
            nm.REFERENCE_ERROR: values[:, k.P_E_REFERENCE],
            nm.BERNOULLI_ERROR: values[:, k.P_E_BERNOULLI],
            nm.VARIANCE_ERROR: values[:, k.P_E_VARIANCE],
            nm.OVERFLOW: flags,
            SCALE: np.full(values.shape[0], rows.scale),
        }
    )
