"""Skilling's distance along the Hilbert curve, compiled: the table machine run row by row.

The same finite-state machine as :func:`polars_cumdev.covariates.tables.distances`
(its tables, built there), read ``c`` levels per look-up. Here each row runs
through all its levels at once instead of each level running through all
rows: the coordinates are read once, their bits interleaved (a Morton code,
by the usual shift-and-mask spreading), and the Morton code is then cut
into consecutive ``c d``-bit pieces, each one look-up. The caller reorders
the tables' inputs from axis-major to this level-major order and packs each
entry (output bits and next state) in 32 bits, so that a level is one
look-up in a table that stays in the first-level cache.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT

__all__ = ["machine_distances", "morton"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]


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
    head_table: U32,
    c: int,
    table: U32,
    out: U64,
) -> None:
    """out[i] = distance along the curve of the grid point ``coords[:, i]``, begin <= i < end.

    ``coords`` has one row per axis (d <= 4; values < 2^bits, bits * d <=
    63). The top ``head`` levels (0 <= head < c) are read in ``head_table``,
    then ``c`` levels per look-up in ``table``. A look-up's input is
    ``state + piece``, the piece being the next ``c d`` bits of the Morton
    code; an entry holds the ``c d`` output bits in its low 16 bits and the
    next state, already multiplied by 2^(c d), in its high 16 bits.
    """
    d = coords.shape[0]
    width = np.uint64(c * d)
    mask = np.uint64((1 << (c * d)) - 1)
    low = np.uint32(0xFFFF)
    high = np.uint32(16)
    total = bits * d
    quads = end - (end - begin) % 4
    # Four rows at a time: their chains of look-ups are independent, so the
    # processor overlaps them (one row's chain is a wait on the cache per level).
    for i in range(begin, quads, 4):
        code0 = morton(coords, i)
        code1 = morton(coords, i + 1)
        code2 = morton(coords, i + 2)
        code3 = morton(coords, i + 3)
        e0 = e1 = e2 = e3 = np.uint32(0)
        v0 = v1 = v2 = v3 = np.uint64(0)
        left = total
        if head:
            left -= head * d
            shift = np.uint64(left)
            e0, e1 = head_table[code0 >> shift], head_table[code1 >> shift]
            e2, e3 = head_table[code2 >> shift], head_table[code3 >> shift]
            v0, v1 = np.uint64(e0 & low), np.uint64(e1 & low)
            v2, v3 = np.uint64(e2 & low), np.uint64(e3 & low)
        while left > 0:
            left -= c * d
            shift = np.uint64(left)
            e0 = table[(e0 >> high) + ((code0 >> shift) & mask)]
            e1 = table[(e1 >> high) + ((code1 >> shift) & mask)]
            e2 = table[(e2 >> high) + ((code2 >> shift) & mask)]
            e3 = table[(e3 >> high) + ((code3 >> shift) & mask)]
            v0 = (v0 << width) | np.uint64(e0 & low)
            v1 = (v1 << width) | np.uint64(e1 & low)
            v2 = (v2 << width) | np.uint64(e2 & low)
            v3 = (v3 << width) | np.uint64(e3 & low)
        out[i], out[i + 1], out[i + 2], out[i + 3] = v0, v1, v2, v3
    for i in range(quads, end):
        code = morton(coords, i)
        e = np.uint32(0)
        v = np.uint64(0)
        left = total
        if head:
            left -= head * d
            e = head_table[code >> np.uint64(left)]
            v = np.uint64(e & low)
        while left > 0:
            left -= c * d
            e = table[(e >> high) + ((code >> np.uint64(left)) & mask)]
            v = (v << width) | np.uint64(e & low)
        out[i] = v
