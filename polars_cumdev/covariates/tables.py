"""Skilling's Hilbert transform as a finite-state machine, run several bits at a time.

Skilling's AxestoTranspose (see :mod:`polars_cumdev.covariates.hilbert`) walks the bit
levels from the most significant down. At each level it only reads that
level's bits, and what it does to the lower bits is, level after level, a
signed permutation of the axes: some axes exchanged, some inverted. The Gray
code that follows is bitwise within a level, and the final inversion of the
lower bits depends on the parity of the last axis's Gray bits above. So the
whole transform is a finite-state machine whose state is (signed
permutation, parity) and whose input at each level is the d bits of the
point there.

:func:`level_table` writes down one level of that machine by following
Skilling's steps literally; :func:`chunk_table` composes it over ``c``
levels so that :func:`distances` reads ``c`` bits of every axis per table
look-up. The result is bit for bit Skilling's distance (tests compare it with
:func:`polars_cumdev.covariates.hilbert.transpose` and with an independent per-point
transcription), at a fraction of the array passes.
"""

from __future__ import annotations

from functools import cache

import numpy as np

__all__ = ["MAX_TABLE_DIMENSIONS", "chunk_levels", "chunk_table", "distances", "level_table"]

#: Up to this many covariates the table machine is used (the tables stay small).
MAX_TABLE_DIMENSIONS = 4

State = tuple[tuple[int, ...], tuple[int, ...], int]


def _step(state: State, raw: int, d: int) -> tuple[int, State]:
    """One level of Skilling's transform: the level's digit and the next state.

    ``state`` = (perm, flip, parity): the lower bits of transformed axis j
    are the lower bits of input axis ``perm[j]``, inverted when ``flip[j]``;
    ``parity`` is the XOR of the last axis's Gray bits at the levels above.
    ``raw`` holds the input bits of this level, axis 0 most significant.
    """
    perm, flip, parity = list(state[0]), list(state[1]), state[2]
    bits = [((raw >> (d - 1 - perm[j])) & 1) ^ flip[j] for j in range(d)]
    # Undo excess work: bit set on axis i -> invert the lower bits of axis 0;
    # clear -> exchange the lower bits of axes 0 and i (in order of i).
    for i in range(d):
        if bits[i]:
            flip[0] ^= 1
        elif i:
            perm[0], perm[i] = perm[i], perm[0]
            flip[0], flip[i] = flip[i], flip[0]
    gray = []
    acc = 0
    for i in range(d):
        acc ^= bits[i]
        gray.append(acc)
    digit = 0
    for i in range(d):
        digit = (digit << 1) | (gray[i] ^ parity)
    return digit, (tuple(perm), tuple(flip), parity ^ gray[d - 1])


@cache
def level_table(d: int) -> tuple[np.ndarray, np.ndarray]:
    """One level of the machine over its reachable states: (digit, next state), shape (S, 2^d).

    State 0 is the start (identity, no inversion, even parity).
    """
    start: State = (tuple(range(d)), (0,) * d, 0)
    index = {start: 0}
    order = [start]
    digits: list[list[int]] = []
    nexts: list[list[int]] = []
    k = 0
    while k < len(order):
        row_d, row_n = [], []
        for raw in range(1 << d):
            digit, new = _step(order[k], raw, d)
            if new not in index:
                index[new] = len(order)
                order.append(new)
            row_d.append(digit)
            row_n.append(index[new])
        digits.append(row_d)
        nexts.append(row_n)
        k += 1
    return np.array(digits, dtype=np.int64), np.array(nexts, dtype=np.int64)


def chunk_levels(d: int) -> int:
    """Levels read per look-up: ``12 // d`` up to three axes, 2 for four (measured fastest).

    A look-up then reads at most 2^12 inputs per state; for four axes the
    2^8-wide table keeps its 384 states in cache.
    """
    return 12 // d if d <= 3 else 2


@cache
def chunk_table(d: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """``c`` levels of the machine at once, flattened for :func:`numpy.take`.

    The input of a look-up is ``state * 2^(c d) + chunk`` where ``chunk``
    concatenates the ``c`` bits of axis 0, then of axis 1, ... (axis-major,
    as they are cut from the coordinates). Returns the ``c d`` output bits
    (level-major, the order of the distance) and the next state, already
    multiplied by 2^(C d) with C = :func:`chunk_levels` (the width of the
    look-ups that follow: only the first may be narrower).
    """
    one_digit, one_next = level_table(d)
    states = one_digit.shape[0]
    width = c * d
    chunk = np.arange(1 << width, dtype=np.int64)
    state = np.repeat(np.arange(states, dtype=np.int64), 1 << width)
    chunk = np.tile(chunk, states)
    digit = np.zeros_like(chunk)
    for level in range(c):
        shift = c - 1 - level
        raw = np.zeros_like(chunk)
        for axis in range(d):
            bit = (chunk >> (c * (d - 1 - axis) + shift)) & 1
            raw |= bit << (d - 1 - axis)
        digit = (digit << d) | one_digit[state, raw]
        state = one_next[state, raw]
    return digit.astype(np.uint64), (state << (chunk_levels(d) * d)).astype(np.uint32)


def distances(coordinates: list[np.ndarray], bits: int) -> np.ndarray:
    """Skilling's distance along the curve (uint64) of grid points, by table look-ups.

    ``coordinates``: one unsigned integer array per axis (values < 2^bits,
    ``bits <= 32``, ``d <= MAX_TABLE_DIMENSIONS``, ``bits * d <= 63``). The
    top ``bits % c`` levels are read first, then ``c`` levels per step.
    """
    d = len(coordinates)
    axes = [np.asarray(a, dtype=np.uint32) for a in coordinates]
    c = chunk_levels(d)
    out = np.zeros(axes[0].shape, dtype=np.uint64)
    state = np.zeros(axes[0].shape, dtype=np.uint32)
    done = 0
    sizes = ([bits % c] if bits % c else []) + [c] * (bits // c)
    for size in sizes:
        digits, nexts = chunk_table(d, size)
        shift = np.uint32(bits - done - size)
        mask = np.uint32((1 << size) - 1)
        index = state.copy() if done else state
        for axis, values in enumerate(axes):
            part = (values >> shift) & mask
            if d - 1 - axis:
                part <<= np.uint32(size * (d - 1 - axis))
            index |= part
        out <<= np.uint64(size * d)
        out |= digits[index]
        state = nexts[index]
        done += size
    return out
