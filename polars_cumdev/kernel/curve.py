"""Skilling's distance along the Hilbert curve, compiled: the table machine run row by row.

The same finite-state machine as :func:`polars_cumdev.hilbert_tables.distances`
(its tables, built there), read ``c`` levels per look-up. Here each row runs
through all its levels at once instead of each level running through all
rows: the coordinates are read once, their bits interleaved (a Morton code,
by the usual shift-and-mask spreading), and the Morton code is then cut
into consecutive ``c d``-bit pieces, each one look-up. The caller reorders
the tables' inputs from axis-major to this level-major order and narrows
them (16-bit digits, 32-bit states) so that they stay in the first-level
cache.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT

__all__ = ["machine_distances", "morton"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
U16 = npt.NDArray[np.uint16]


@njit(**JIT)
def _spread(x: np.uint64, d: int) -> np.uint64:
    """The bits of ``x`` moved to positions 0, d, 2d, ... (d <= 4; x < 2^(64 // d))."""
    if d == 1:
        return x
    if d == 2:
        x = (x | (x << np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
        x = (x | (x << np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
        x = (x | (x << np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
        x = (x | (x << np.uint64(2))) & np.uint64(0x3333333333333333)
        return (x | (x << np.uint64(1))) & np.uint64(0x5555555555555555)
    if d == 3:
        x = (x | (x << np.uint64(32))) & np.uint64(0x001F00000000FFFF)
        x = (x | (x << np.uint64(16))) & np.uint64(0x001F0000FF0000FF)
        x = (x | (x << np.uint64(8))) & np.uint64(0x100F00F00F00F00F)
        x = (x | (x << np.uint64(4))) & np.uint64(0x10C30C30C30C30C3)
        return (x | (x << np.uint64(2))) & np.uint64(0x1249249249249249)
    x = (x | (x << np.uint64(24))) & np.uint64(0x000000FF000000FF)
    x = (x | (x << np.uint64(12))) & np.uint64(0x000F000F000F000F)
    x = (x | (x << np.uint64(6))) & np.uint64(0x0303030303030303)
    return (x | (x << np.uint64(3))) & np.uint64(0x1111111111111111)


@njit(**JIT)
def morton(coords: U32, i: int) -> np.uint64:
    """Row i's coordinates interleaved: level by level from the top, axis 0 first in each."""
    d = coords.shape[0]
    code = np.uint64(0)
    for axis in range(d):
        code |= _spread(np.uint64(coords[axis, i]), d) << np.uint64(d - 1 - axis)
    return code


@njit(**JIT)
def machine_distances(
    coords: U32,
    begin: int,
    end: int,
    bits: int,
    head: int,
    head_digits: U16,
    head_nexts: U32,
    c: int,
    digits: U16,
    nexts: U32,
    out: U64,
) -> None:
    """out[i] = distance along the curve of the grid point ``coords[:, i]``, begin <= i < end.

    For d <= 4 axes.

    ``coords`` has one row per axis (values < 2^bits, bits * d <= 63). The
    top ``head`` levels (0 <= head < c) are read with the ``head`` tables,
    then ``c`` levels per look-up; a look-up's input is ``state + piece``,
    the piece being the next ``c d`` bits of the Morton code, and the
    ``nexts`` tables hold the next state already multiplied by 2^(c d).
    """
    d = coords.shape[0]
    width = np.uint64(c * d)
    mask = np.uint64((1 << (c * d)) - 1)
    total = bits * d
    quads = end - (end - begin) % 4
    # Four rows at a time: their chains of look-ups are independent, so the
    # processor overlaps them (one row's chain is a wait on the cache per level).
    for i in range(begin, quads, 4):
        code0 = morton(coords, i)
        code1 = morton(coords, i + 1)
        code2 = morton(coords, i + 2)
        code3 = morton(coords, i + 3)
        s0 = s1 = s2 = s3 = np.uint32(0)
        v0 = v1 = v2 = v3 = np.uint64(0)
        left = total
        if head:
            left -= head * d
            shift = np.uint64(left)
            k0, k1 = code0 >> shift, code1 >> shift
            k2, k3 = code2 >> shift, code3 >> shift
            v0, v1 = np.uint64(head_digits[k0]), np.uint64(head_digits[k1])
            v2, v3 = np.uint64(head_digits[k2]), np.uint64(head_digits[k3])
            s0, s1, s2, s3 = head_nexts[k0], head_nexts[k1], head_nexts[k2], head_nexts[k3]
        while left > 0:
            left -= c * d
            shift = np.uint64(left)
            k0 = s0 + ((code0 >> shift) & mask)
            k1 = s1 + ((code1 >> shift) & mask)
            k2 = s2 + ((code2 >> shift) & mask)
            k3 = s3 + ((code3 >> shift) & mask)
            v0 = (v0 << width) | np.uint64(digits[k0])
            v1 = (v1 << width) | np.uint64(digits[k1])
            v2 = (v2 << width) | np.uint64(digits[k2])
            v3 = (v3 << width) | np.uint64(digits[k3])
            s0, s1, s2, s3 = nexts[k0], nexts[k1], nexts[k2], nexts[k3]
        out[i], out[i + 1], out[i + 2], out[i + 3] = v0, v1, v2, v3
    for i in range(quads, end):
        out[i] = _one(coords, i, total, head, head_digits, head_nexts, c, digits, nexts)


@njit(**JIT)
def _one(
    coords: U32,
    i: int,
    total: int,
    head: int,
    head_digits: U16,
    head_nexts: U32,
    c: int,
    digits: U16,
    nexts: U32,
) -> np.uint64:
    """The distance of row i alone (see :func:`machine_distances`)."""
    d = coords.shape[0]
    width = np.uint64(c * d)
    mask = np.uint64((1 << (c * d)) - 1)
    code = morton(coords, i)
    state = np.uint32(0)
    value = np.uint64(0)
    left = total
    if head:
        left -= head * d
        index = code >> np.uint64(left)
        value = np.uint64(head_digits[index])
        state = head_nexts[index]
    while left > 0:
        left -= c * d
        index = state + ((code >> np.uint64(left)) & mask)
        value = (value << width) | np.uint64(digits[index])
        state = nexts[index]
    return value
