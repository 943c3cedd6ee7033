"""The Hilbert distance of one point, transcribed independently with Python integers."""

from __future__ import annotations


def naive_distance(point: list[int], bits: int) -> int:
    """Skilling (2004) for one point, transcribed independently with Python integers.

    Undo the excess work level by level, Gray-encode, then read the
    transposed bits out most significant first, axis 0 first.
    """
    x = list(point)
    n = len(x)
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = 1 << (bits - 1)
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [v ^ t for v in x]
    h = 0
    for b in range(bits - 1, -1, -1):
        for v in x:
            h = (h << 1) | ((v >> b) & 1)
    return h
