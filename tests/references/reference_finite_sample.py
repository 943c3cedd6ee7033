"""Naive transcription of the finite-sample p-values (docs/method.md, "Valid at every size").

Plain Python integers for SplitMix64 (masked to 64 bits), one row and one
redraw at a time, Besag and Clifford's sequential rule written out. Used by
``tests/analyses/test_finite_sample_pvalues.py`` as the oracle of
:func:`polars_cumdev.kernel.finite_sample.simulated_pvalues`.
"""

from __future__ import annotations

import struct

MASK = (1 << 64) - 1
SEED = 0x5EED_C0DE_CA1B_0001
GOLDEN = 0x9E3779B97F4A7C15


def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def seed(s: list[float], w: list[float]) -> int:
    """From the scores alone (the weights' scale must not change the draws)."""
    del w
    h = SEED
    for a in s:
        h = mix(h ^ bits(a))
    return mix((h + len(s)) & MASK)


def ranges(s, w, p, r) -> tuple[float, float]:
    """Kuiper range and KS maximum of the tie-merged curve sum w (r - p)."""
    c, high, low = 0.0, 0.0, 0.0
    for i in range(len(s)):
        c += w[i] * (r[i] - p[i])
        if i == len(s) - 1 or s[i + 1] != s[i]:
            high, low = max(high, c), min(low, c)
    return high - low, max(high, -low)


def pvalues(s, w, p, r, draws: int, stop: int) -> tuple[float, float, int]:
    """(Kuiper p, KS p, redraws) of one group whose rows are sorted by score, weight, response."""
    d0, g0 = ranges(s, w, p, r)
    slack = 1e-12 * sum(abs(x) for x in w)
    state = seed(s, w)
    hits, stops = [0, 0], [0, 0]
    t = 0
    while t < draws and (stops[0] == 0 or stops[1] == 0):
        t += 1
        redrawn = []
        for i in range(len(s)):
            state = (state + GOLDEN) & MASK
            u = (mix(state) >> 11) * 2.0**-53
            redrawn.append(1.0 if u < p[i] else 0.0)
        found = ranges(s, w, p, redrawn)
        for j, observed in enumerate((d0, g0)):
            if stops[j] == 0 and found[j] >= observed - slack:
                hits[j] += 1
                if hits[j] == stop:
                    stops[j] = t
    out = [stop / stops[j] if stops[j] else (hits[j] + 1.0) / (t + 1.0) for j in range(2)]
    return out[0], out[1], t
