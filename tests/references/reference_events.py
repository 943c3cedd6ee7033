"""Naive transcription of a group's effective number of events (docs/method.md, "Valid at
every size"): every group's merged points, their bins between the midpoints to its
neighbouring distinct scores, the population's mean response over each bin by
``math.fsum`` (the screen) or the score itself (calibration), then the three sums
row by row and E = min(E3, E4). The oracle of ``tests/method/test_walk_events.py``
and ``tests/engines/test_partitioned_events.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def naive_events(gid, s, r, w, groups: int, screen: bool = True) -> np.ndarray:
    """E per group number 0 .. groups - 1 (rows in any order)."""
    found = []
    for g in range(groups):
        mine = gid == g
        scores = sorted(set(s[mine].tolist()))
        edges = [-math.inf] + [(a + b) / 2 for a, b in itertools.pairwise(scores)] + [math.inf]
        p = {x: x for x in scores}
        for j, x in enumerate(scores if screen else []):
            inside = (s > edges[j]) & (s <= edges[j + 1])
            p[x] = math.fsum(w[inside] * r[inside]) / math.fsum(w[inside])
        terms = [0.0, 0.0, 0.0]
        for si, wi in zip(s[mine].tolist(), w[mine].tolist(), strict=True):
            v = p[si] * (1.0 - p[si])
            terms[0] += wi**2 * v
            terms[1] += wi**3 * v * abs(1.0 - 2.0 * p[si])
            terms[2] += wi**4 * v * max(1.0 - 6.0 * v, 0.0)
        second, third, fourth = terms
        e3 = second**3 / third**2 if third > 0 else math.inf
        e4 = second**2 / fourth if fourth > 0 else math.inf
        found.append(min(e3, e4) if second > 0 else 0.0)
    return np.array(found)
