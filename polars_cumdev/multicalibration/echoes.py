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

__all__ = ["echoes"]


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


def echoes(
    z: np.ndarray,
    significant: np.ndarray,
    which: np.ndarray,
    numbers: np.ndarray,
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    rows: int,
    critical: float,
    remainder: Callable[[np.ndarray], float],
) -> tuple[np.ndarray, np.ndarray]:
    """For every segment, the index of the segment it echoes (-1: none) and the remainder z.

    ``z``, ``significant``, ``which`` (subset index) and ``numbers`` (segment
    number in its subset) describe the family's segments; ``remainder(rows)``
    gives the z of the rows numbered ``rows`` (increasing, so sorted by score)
    taken as one segment (NaN when undefined, which explains nothing).
    """
    explained = np.full(z.shape[0], -1, dtype=np.int64)
    rest = np.full(z.shape[0], np.nan)
    chosen = np.flatnonzero(significant & ~np.isnan(z))
    order = chosen[np.argsort(-z[chosen], kind="stable")]
    levels = {int(i): _levels(coded, subsets, int(which[i]), int(numbers[i])) for i in order}
    ids_of: dict[int, np.ndarray] = {}
    for position, i in enumerate(order):
        stronger = [int(t) for t in order[:position] if z[t] > z[i]]
        if any(_adjacent(levels[int(i)], levels[t]) for t in stronger):
            continue  # inherited or broader already (a stronger parent or child is significant)
        siblings = [t for t in stronger if _sibling(levels[int(i)], levels[t])]
        if not siblings:
            continue
        subset = int(which[i])
        if subset not in ids_of:
            ids_of = {subset: subset_ids(coded, subsets[subset], rows)[0]}
        mine = np.flatnonzero(ids_of[subset] == numbers[i])
        for t in siblings:
            inside = np.ones(mine.shape[0], dtype=bool)
            for f, level in levels[t].items():
                inside &= coded[f].codes[mine] == level
            if not inside.any():
                continue  # no shared rows: nothing to explain
            found = remainder(mine[~inside]) if not inside.all() else np.nan
            if inside.all() or found <= critical:
                explained[i], rest[i] = t, found
                break
    return explained, rest
