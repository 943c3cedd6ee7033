"""The stable sort of places by two unsigned 64-bit keys (:mod:`polars_cumdev.kernel.keysort`).

Against NumPy's ``lexsort`` (by the first key, then the second, then the
place), on keys spread over the whole 64 bits, bunched a few units apart,
or about four apart, of two or a few values, one far from the rest: every path of the counting
passes, and the insertion pass after them or skipped.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from polars_cumdev.kernel import keysort

TOP = np.iinfo(np.uint64).max


def _keys(rng, kind: str, n: int) -> np.ndarray:
    """n unsigned keys of one kind."""
    if kind == "wide":  # the whole range, ends included
        keys = rng.integers(0, TOP, n, dtype=np.uint64, endpoint=True)
        if n >= 2:
            keys[rng.permutation(n)[:2]] = [0, TOP]
        return keys
    if kind == "bunched":  # a few units apart: buckets of one key each
        return np.uint64(2**63) + rng.integers(0, 50, n).astype(np.uint64)
    if kind == "near":  # about four units a key: two keys to a bucket of one bit
        return np.uint64(2**63) + rng.integers(0, 4 * max(n, 1), n).astype(np.uint64)
    if kind == "two":
        return rng.choice(np.array([3, TOP - 5], dtype=np.uint64), n)
    if kind == "few":
        return rng.choice(np.array([0, 7, 2**40, 2**63 + 1], dtype=np.uint64), n)
    if kind == "far":  # all within 1,000 units but one at the top: one bucket holds the rest
        keys = rng.integers(0, 1000, n).astype(np.uint64)
        if n:
            keys[rng.integers(0, n)] = TOP
        return keys
    return np.zeros(n, dtype=np.uint64)  # equal


KINDS = ["wide", "bunched", "near", "two", "few", "far", "equal"]


def _sorted_places(first, second, levels):
    n = first.shape[0]
    space = keysort.work_space(max(n, 1), levels == 2)
    space[0][:n] = first
    if levels == 2:
        space[1][:n] = second
    least, most = (first.min(), first.max()) if n else (np.uint64(0), np.uint64(0))
    keysort.stable_order(space, n, levels, least, most)
    return space[2][:n].copy()


_LEXSORT_CASES = given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([0, 1, 2, 16, 17, 40, 300, 3_000]),
    first_kind=st.sampled_from(KINDS),
    second_kind=st.sampled_from(KINDS),
    levels=st.sampled_from([1, 2]),
)


@settings(max_examples=40, deadline=None)
@_LEXSORT_CASES
def test_stable_order_is_lexsort(seed, n, first_kind, second_kind, levels):
    """A quick sample of the cases; the 300 of the ``_many`` twin are slow."""
    _lexsort_case(seed, n, first_kind, second_kind, levels)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@_LEXSORT_CASES
def test_stable_order_is_lexsort_many(seed, n, first_kind, second_kind, levels):
    _lexsort_case(seed, n, first_kind, second_kind, levels)


def _lexsort_case(seed, n, first_kind, second_kind, levels):
    rng = np.random.default_rng(seed)
    first, second = _keys(rng, first_kind, n), _keys(rng, second_kind, n)
    place = np.arange(n)
    expected = np.lexsort((place, second, first) if levels == 2 else (place, first))
    np.testing.assert_array_equal(_sorted_places(first, second, levels), expected)
