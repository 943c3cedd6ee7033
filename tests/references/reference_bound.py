"""A naive transcription of the soft labels' bound (docs/method.md, "Soft labels").

One group at a time, row by row, from the description alone: the tie-merged walk
S = cumsum w (r - s) at the ends of the ties (S_0 = 0), its range D and largest
|S| G; the Bernoulli cumulants psi(lambda) = log E exp(+-lambda w (B - s)) summed
over the rows; the Chernoff-Ville tail exp(min(0, min over lambda of Psi - lambda a));
KS: the two tails at G; Kuiper: the smaller of the split bound (a grid of a in
[0, D]) and, for at most 1000 distinct scores, the restart bound (the two tails
at D summed over j = 0 and every tie end but the last, Psi over the rows after j).
"""

from __future__ import annotations

import math

import numpy as np

#: lambda times the group's largest weight; the split's grid of a / D.
LAMBDA = [float(x) for x in np.geomspace(1e-2, 64.0, 96)]
SPLIT = [k / 128 for k in range(129)]
RESTARTS = 1000


def _psi(rows: list[tuple[float, float]], lam: float, sign: int) -> float:
    """Psi(lambda): the rows' Bernoulli cumulants of +-lambda w (B - s), summed."""
    s = np.array([x for x, _ in rows])
    w = np.array([y for _, y in rows])
    x = sign * lam * w
    return float(np.sum(np.maximum(np.log(1.0 - s + s * np.exp(x)) - x * s, 0.0)))


def _tails(rows: list[tuple[float, float]], top_w: float, sign: int):
    """a -> exp(min(0, min over the grid of lambda of Psi(lambda) - lambda a))."""
    grid = [(theta / top_w, _psi(rows, theta / top_w, sign)) for theta in LAMBDA]

    def tail(a: float) -> float:
        return math.exp(min(0.0, min(psi - lam * a for lam, psi in grid)))

    return tail


def group_bound(s: np.ndarray, w: np.ndarray, r: np.ndarray) -> tuple[float, float]:
    """(Kuiper p, KS p) of one group's bound."""
    order = np.lexsort((r, w, s))
    s, w, r = s[order], w[order], r[order]
    n = len(s)
    walk, ends = [0.0], [0]  # S at 0 and at each tie end; ends: rows before that point
    total = 0.0
    for i in range(n):
        total += w[i] * (r[i] - s[i])
        if i == n - 1 or s[i + 1] != s[i]:
            walk.append(total)
            ends.append(i + 1)
    d = max(walk) - min(walk)
    g = max(abs(x) for x in walk)
    top_w = float(max(w))
    rows = list(zip(s.tolist(), w.tolist(), strict=True))
    up, down = _tails(rows, top_w, 1), _tails(rows, top_w, -1)
    ks = up(g) + down(g)
    kuiper = min(up(t * d) + down((1 - t) * d) for t in SPLIT)
    if len(walk) - 1 <= RESTARTS:
        restart = 0.0
        for j in ends[:-1]:
            after = rows[j:]
            restart += _tails(after, top_w, 1)(d) + _tails(after, top_w, -1)(d)
        kuiper = min(kuiper, restart)
    tiny = float(np.finfo(np.float64).tiny)
    return min(max(kuiper, tiny), 1.0), min(max(ks, tiny), 1.0)
