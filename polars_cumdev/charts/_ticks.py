"""Tick positions and labels for the two horizontal axes of the cumulative plot.

The plot's horizontal coordinate is the cumulative weight ``a`` (A_k, equal
to k/n without weights). Both axes are drawn on that one scale:

* lower axis, major ticks: at ``a`` for roughly equispaced k, labelled with
  the score at that k;
* lower axis, minor ticks: at ``a`` where the score first reaches each of
  several equispaced score values, so crowded minor ticks mark stretches in
  which the scores climb quickly and sparse ones stretches in which many
  points share nearly the same score;
* upper axis, major ticks: at ``a`` for roughly equispaced k, labelled k/n;
  with weights their spacing shows how the weight is distributed;
* upper axis, minor ticks: at equispaced values of ``a``, the positions the
  major ticks would have under uniform weights.

Vega-Lite cannot map tick values to arbitrary text directly, so labels are
attached with a ``labelExpr`` that looks the tick value up in a literal array.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Ticks", "label_expr", "lower_ticks", "uncrowd", "upper_ticks"]


@dataclass(frozen=True)
class Ticks:
    """Major tick positions with their labels, and unlabelled minor positions."""

    major: list[float]
    labels: list[str]
    minor: list[float]


def _decimals(step: float) -> int:
    """Decimal places that tell apart labels about ``step`` apart."""
    if not math.isfinite(step) or step <= 0:
        return 2
    return int(min(8, max(0, 1 - math.floor(math.log10(step) + 1e-9))))


def _fixed(value: float, decimals: int) -> str:
    """Fixed-point text without trailing zeros (and never "-0")."""
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def compact(values: Sequence[float], step: float) -> list[str]:
    """Format tick values with one shared, just-sufficient number of decimals.

    Parameters
    ----------
    values
        Ascending tick values.
    step
        Typical spacing between neighbouring ticks; sets the starting number
        of decimals, which then grows (up to 6) until neighbours with
        different values get different labels.

    Returns
    -------
    list of str
        Fixed-point labels without trailing zeros (so a value below the
        shared precision reads "0"); magnitudes of a million or more use
        scientific notation.
    """
    if any(math.isfinite(v) and abs(v) >= 1e6 for v in values):
        return [f"{v:.3g}" for v in values]
    decimals = _decimals(step)
    while True:
        labels = [_fixed(v, decimals) if math.isfinite(v) else str(v) for v in values]
        clash = any(
            labels[i] == labels[i + 1] and values[i] != values[i + 1]
            for i in range(len(values) - 1)
        )
        if not clash or decimals >= 6:
            return labels
        decimals += 1


def _positions(a: np.ndarray, index: np.ndarray) -> list[float]:
    """``a`` at ``index``, clipped to the axis domain [0, 1].

    Rounding can leave A_n a hair above 1; a tick outside the scale's domain
    would silently vanish, taking the last label with it.
    """
    return [min(max(float(a[i]), 0.0), 1.0) for i in index]


def _equispaced_k(n: int, count: int, lowest: int) -> np.ndarray:
    """About ``count`` distinct integers spread evenly over [lowest, n]."""
    ks = np.rint(np.linspace(0, n, max(count, 2))).astype(np.int64)
    return np.unique(np.clip(ks, lowest, n))


def lower_ticks(a: np.ndarray, score: np.ndarray, major: int, minor: int) -> Ticks:
    """Ticks for the lower axis: scores at equispaced k, minor ticks at equispaced scores.

    Parameters
    ----------
    a
        Cumulative weights A_0 = 0, A_1, ..., A_n (ascending).
    score
        Scores aligned with ``a`` (entry 0, the origin, is ignored).
    major
        Approximate number of labelled ticks.
    minor
        Number of equispaced score values marked by minor ticks (0 for none).

    Returns
    -------
    Ticks
        Positions on the ``a`` scale and the score labels.
    """
    n = len(a) - 1
    ks = _equispaced_k(n, major, 1)
    values = score[ks]
    spread = float(np.nanmax(score[1:]) - np.nanmin(score[1:])) if n else 0.0
    step = spread / max(len(ks) - 1, 1) if spread > 0 else abs(float(values[0])) or 1.0
    labels = compact([float(v) for v in values], step)
    minor_positions: list[float] = []
    if minor > 0 and n > 0 and spread > 0:
        body = score[1:]
        targets = np.linspace(float(np.nanmin(body)), float(np.nanmax(body)), minor)
        where = np.clip(np.searchsorted(body, targets, side="left"), 0, n - 1)
        minor_positions = sorted(set(_positions(a[1:], where)))
    return Ticks(_positions(a, ks), labels, minor_positions)


def upper_ticks(a: np.ndarray, major: int, minor: int) -> Ticks:
    """Ticks for the upper axis: k/n at equispaced k, minor ticks at equispaced A.

    Parameters
    ----------
    a
        Cumulative weights A_0 = 0, A_1, ..., A_n (ascending).
    major
        Approximate number of labelled ticks.
    minor
        Number of equispaced positions in [0, 1] marked by minor ticks.

    Returns
    -------
    Ticks
        Positions on the ``a`` scale and the k/n labels.
    """
    n = len(a) - 1
    ks = _equispaced_k(n, major, 0)
    step = 1.0 / max(len(ks) - 1, 1)
    labels = compact([k / n for k in ks], step)
    minor_positions = [float(v) for v in np.linspace(0.0, 1.0, minor)] if minor > 1 else []
    return Ticks(_positions(a, ks), labels, minor_positions)


def label_expr(values: Sequence[float], labels: Sequence[str]) -> str:
    """Vega expression giving each tick in ``values`` its text from ``labels``.

    Parameters
    ----------
    values
        Tick positions exactly as passed to the axis ``values``.
    labels
        Text for each position.

    Returns
    -------
    str
        An expression for :class:`altair.Axis` ``labelExpr``.
    """
    texts = ", ".join("'" + t.replace("\\", "\\\\").replace("'", "\\'") + "'" for t in labels)
    numbers = ", ".join(repr(float(v)) for v in values)
    return f"[{texts}][indexof([{numbers}], datum.value)]"


#: Estimated width of one character of a tick label, as a share of the font size.
_CHAR = 0.58
#: Smallest gap in pixels left between two neighbouring labels.
_GAP = 4.0
#: Labels this close (in pixels) to either end are drawn flush with it (Vega-Lite's labelFlush).
_FLUSH = 1.0


def uncrowd(values: Sequence[float], labels: Sequence[str], width: float, size: float) -> list[str]:
    """Blank the labels that would touch a neighbour, always keeping the first and last.

    Each label is centred on its tick (flush with the frame at either end,
    as Vega-Lite draws them), about ``_CHAR * size`` pixels per character
    wide. Going left to right, a label is kept when it clears the last kept
    one by ``_GAP`` pixels; the last label is always kept, dropping kept
    labels before it that it would touch. The ticks themselves all stay.

    Parameters
    ----------
    values
        Tick positions in [0, 1], ascending.
    labels
        Their texts.
    width
        Width of the axis in pixels.
    size
        Font size of the labels in pixels.

    Returns
    -------
    list of str
        ``labels`` with the crowding ones replaced by empty strings.
    """
    count = len(values)
    if count <= 2:
        return list(labels)

    def extent(i: int) -> tuple[float, float]:
        x = min(max(float(values[i]), 0.0), 1.0) * width
        w = _CHAR * size * len(labels[i])
        if x <= _FLUSH:
            return x, x + w
        if x >= width - _FLUSH:
            return x - w, x
        return x - w / 2.0, x + w / 2.0

    kept = [0]
    for i in range(1, count - 1):
        if extent(i)[0] >= extent(kept[-1])[1] + _GAP:
            kept.append(i)
    last = count - 1
    while len(kept) > 1 and extent(last)[0] < extent(kept[-1])[1] + _GAP:
        kept.pop()
    kept.append(last)
    chosen = set(kept)
    return [text if i in chosen else "" for i, text in enumerate(labels)]
