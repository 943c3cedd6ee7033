"""A naive transcription of the located stretch (issue 15): every pair of points, O(n^2).

For one curve: C_0 = 0, C_1..C_n against A_0 = 0, A_1..A_n. The Kuiper D is a
rise when the first minimum of C (over k = 0..n) comes before the first
maximum, a fall otherwise; the stretch is the pair i < j with the smallest
A_j - A_i among those whose rise (C_j - C_i, or C_i - C_j for a fall) is at
least T, the earliest j first among equal lengths, and for one j the latest
i. Returns (i, j) with 0 = the origin, or None.

It imports neither Polars nor anything from ``polars_cumdev``.
"""

from __future__ import annotations

__all__ = ["shortest_stretch"]


def shortest_stretch(a, c, threshold):
    if not threshold > 0.0:
        return None
    a = [0.0, *[float(x) for x in a]]
    c = [0.0, *[float(x) for x in c]]
    first_min = min(range(len(c)), key=lambda k: (c[k], k))
    first_max = min(range(len(c)), key=lambda k: (-c[k], k))
    sign = 1.0 if first_min < first_max else -1.0
    best = None
    for j in range(len(c)):
        for i in range(j - 1, -1, -1):  # the latest i first
            if sign * (c[j] - c[i]) >= threshold:
                length = a[j] - a[i]
                if best is None or length < best[0]:
                    best = (length, i, j)
                break
    return None if best is None else (best[1], best[2])


def expected_location(a, c, scores, threshold):
    """The four location columns for a curve with its origin: ``a``, ``c`` (A_0 = C_0 = 0 first)
    and ``scores`` (the score of each point, without the origin); ``None`` if none is located."""
    found = shortest_stretch(a[1:], c[1:], threshold)
    if found is None:
        return None
    i, j = found
    share = a[j] - a[i]
    return {
        "from_score": scores[i],
        "to_score": scores[j - 1],
        "share": share,
        "deviation": (c[j] - c[i]) / share,
    }
