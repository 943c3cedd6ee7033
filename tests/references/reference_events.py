"""Naive transcription of a group's effective number of events (docs/method.md, "Valid at
every size"): every group's merged points, their bins between the midpoints to its
neighbouring distinct scores, the population's mean response over each bin by
``math.fsum`` (the screen) or the score itself (calibration), then the three sums
row by row and E = min(E3, E4). The oracle of ``tests/method/test_walk_events.py``
and ``tests/engines/test_partitioned_events.py``, which also share
:func:`threshold_groups`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl


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


def threshold_groups(seed: int, weights: str = "log-normal") -> pl.DataFrame:
    """60 groups of 200-4,000 rows and 4 of 20,000, rare outcomes (scores near 0.03-0.2),
    every third group's rate 1.5 times its scores: E around the threshold of 200 for many
    groups (as in tests/analyses/test_few_events_filter.py), far above it for the large
    ones. Columns g, s, y and w (``weights``: "unit" or "log-normal")."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([rng.integers(200, 4000, 60), np.full(4, 20_000)])
    g = np.repeat(np.arange(sizes.size), sizes)
    s = rng.beta(1.0, rng.choice([8.0, 30.0]), g.size)
    y = (rng.random(g.size) < np.clip(s * (1.0 + 0.5 * (g % 3 == 0)), 0, 1)).astype(np.int8)
    w = np.ones(g.size) if weights == "unit" else rng.lognormal(0.0, 0.7, g.size)
    return pl.DataFrame({"g": g, "s": s, "y": y, "w": w})
