"""Echoes: a significant segment whose deviation an overlapping stronger one explains.

A miscalibration planted in one cell (say ``a = 1 & b = 2``) shows in its
parents and children (:mod:`~polars_cumdev.multicalibration.redundancy`), and
also in segments that only *share rows* with it: ``a = 1 & c = 0`` holds the
cell's rows with ``c = 0``, and deviates through them alone. Such a segment S
is an *echo* of an overlapping segment T when

* T is significant family-wise and its z exceeds S's,
* T overlaps S without containing it or being contained in it (a sibling in
  the broad sense: their conditions agree on the features they share, and
  each restricts a feature the other does not; nested segments are compared
  by :mod:`~polars_cumdev.multicalibration.redundancy`), and
* S's deviation is explained by T: **S's rows outside T, on their own, are not
  significant at the family's first step**, that is their z (the same
  statistic, (49)/(50) or the screen's (25)-(32) of M. Tygert, "Cumulative
  deviation of a subpopulation from the full population", on S minus T's
  rows) is at most the family's ``critical_z``.

Then S's ``finding`` is ``"echo"``, not ``"new"``; ``overlap`` names T and
``remainder_z`` gives the z of S's rows outside T. A segment that keeps a
significant deviation after every such removal stays ``new``: two separate
findings that happen to overlap are both reported.

Only segments significant family-wise are examined, strongest first, and only
those that a stronger significant parent or child does not already mark
(inherited, broader; a stronger parent or child has a smaller family-wise p, so
it is significant too); each removal is one walk over S's rows (already
sorted by score), so the cost grows with those segments' rows, not with the
whole family.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from polars_cumdev.multicalibration.family import Coded, decode, subset_ids

__all__ = ["Split", "echo_plan", "echoes", "kernel_z", "row_split", "segment_levels"]


def _levels(
    coded: Sequence[Coded], subsets: Sequence[tuple[int, ...]], which: int, number: int
) -> dict[int, int]:
    subset = subsets[which]
    return dict(zip(subset, decode(coded, subset, int(number)), strict=True))


def _sibling(s: dict[int, int], t: dict[int, int]) -> bool:
    """Conditions that agree where both restrict, and neither containing the other."""
    if any(s[f] != t[f] for f in s.keys() & t.keys()):
        return False
    return bool(t.keys() - s.keys()) and bool(s.keys() - t.keys())


def _adjacent(s: dict[int, int], t: dict[int, int]) -> bool:
    """T is a parent or a child of S (one condition fewer or more, the others the same)."""
    small, large = (s, t) if len(s) < len(t) else (t, s)
    return len(large) == len(small) + 1 and all(large.get(f) == v for f, v in small.items())


def echo_plan(
    z: np.ndarray,
    significant: np.ndarray,
    which: np.ndarray,
    numbers: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
) -> list[tuple[int, list[int]]]:
    """The segments to examine, strongest first, each with its stronger significant siblings.

    Decided from the z's and the levels alone (no row): a segment that a
    stronger parent or child already marks, or without a stronger sibling,
    is left out. An engine gathers the rows of these segments only.
    """
    chosen = np.flatnonzero(significant & ~np.isnan(z))
    order = chosen[np.argsort(-z[chosen], kind="stable")]
    levels = {int(i): _levels(coded, subsets, int(which[i]), int(numbers[i])) for i in order}
    plan = []
    for position, i in enumerate(order):
        stronger = [int(t) for t in order[:position] if z[t] > z[i]]
        if any(_adjacent(levels[int(i)], levels[t]) for t in stronger):
            continue  # inherited or broader already (a stronger parent or child is significant)
        siblings = [t for t in stronger if _sibling(levels[int(i)], levels[t])]
        if siblings:
            plan.append((int(i), siblings))
    return plan


def segment_levels(
    coded: Sequence[Coded], subsets: Sequence[tuple[int, ...]], which: int, number: int
) -> dict[int, int]:
    """Feature index -> level of segment ``number`` of subset ``which``."""
    return _levels(coded, subsets, which, number)


#: ``split(s, t)``: whether segment s shares rows with segment t, whether all its rows are
#: in t, and the z of its rows outside t taken as one segment (NaN when undefined or none).
Split = Callable[[int, int], tuple[bool, bool, float]]


def echoes(
    z: np.ndarray,
    significant: np.ndarray,
    which: np.ndarray,
    numbers: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    critical: float,
    split: Split,
) -> tuple[np.ndarray, np.ndarray]:
    """For every segment, the index of the segment it echoes (-1: none) and the remainder z.

    ``z``, ``significant``, ``which`` (subset index) and ``numbers`` (segment
    number in its subset) describe the family's segments; ``split`` reads the
    rows (:data:`Split`): in process from the sorted rows
    (:func:`row_split`), on a cluster from the few segments' rows gathered.
    """
    explained = np.full(z.shape[0], -1, dtype=np.int64)
    rest = np.full(z.shape[0], np.nan)
    for i, siblings in echo_plan(z, significant, which, numbers, coded, subsets):
        for t in siblings:
            shares, whole, found = split(i, t)
            if not shares:
                continue  # no shared rows: nothing to explain
            if whole or found <= critical:
                explained[i], rest[i] = t, found
                break
    return explained, rest


def kernel_z(out: np.ndarray, c_max: int, c_min: int, sigma2: int) -> float:
    """The z of the one group of a compiled walk's output row ``out[0]``: its Kuiper range
    (``c_max``, ``c_min`` columns) over the square root of its sigma^2 (column ``sigma2``);
    NaN when sigma is 0. Used for an echo's remainder, in process and on a cluster."""
    spread = float(max(out[0, c_max], 0.0) - min(out[0, c_min], 0.0))
    root = float(np.sqrt(max(out[0, sigma2], 0.0)))
    return spread / root if root > 0.0 else float("nan")


def row_split(
    which: np.ndarray,
    numbers: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    rows: int,
    remainder: Callable[[np.ndarray], float],
) -> Split:
    """:data:`Split` from every row's codes; ``remainder(rows)`` gives the z of the rows
    numbered ``rows`` (increasing, so sorted by score) taken as one segment."""
    ids_of: dict[int, np.ndarray] = {}

    def split(i: int, t: int) -> tuple[bool, bool, float]:
        subset = int(which[i])
        if subset not in ids_of:
            ids_of.clear()
            ids_of[subset] = subset_ids(coded, subsets[subset], rows)[0]
        mine = np.flatnonzero(ids_of[subset] == numbers[i])
        inside = np.ones(mine.shape[0], dtype=bool)
        for f, level in _levels(coded, subsets, int(which[t]), int(numbers[t])).items():
            inside &= coded[f].codes[mine] == level
        if not inside.any():
            return False, False, float("nan")
        whole = bool(inside.all())
        return True, whole, float("nan") if whole else remainder(mine[~inside])

    return split
