"""Issue 15, part 1: where the deviation is (the located stretch)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_location import shortest_stretch

from polars_cumdev.kernel.location import stretches
from polars_cumdev.location import stretches_numpy


def _search(curves, thresholds, function=stretches):
    starts = np.cumsum([0, *[len(a) for a, _ in curves]])
    a = np.concatenate([np.asarray(a, float) for a, _ in curves] or [np.empty(0)])
    c = np.concatenate([np.asarray(c, float) for _, c in curves] or [np.empty(0)])
    lower, upper = function(starts.astype(np.int64), a, c, np.asarray(thresholds, float))
    return [None if u < 0 else (lo + 1, u + 1) for lo, u in zip(lower, upper, strict=True)]


def _compiled(curves, thresholds):
    found = _search(curves, thresholds)
    assert _search(curves, thresholds, stretches_numpy) == found  # the NumPy search agrees
    return found


@settings(
    deadline=None, max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=st.lists(
        st.tuples(st.floats(0.01, 1.0), st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])),
        min_size=1,
        max_size=30,
    ),
    share=st.floats(0.0, 1.2),
)
def test_compiled_stretch_equals_the_naive_transcription(steps, share):
    weights = np.array([w for w, _ in steps])
    a = np.cumsum(weights) / weights.sum()
    c = np.cumsum([w * d for w, d in steps]) / weights.sum()
    values = np.concatenate([[0.0], c])
    threshold = share * (values.max() - values.min())
    assert _compiled([(a, c)], [threshold]) == [shortest_stretch(a, c, threshold)]


def test_several_groups_at_once_and_no_threshold():
    rng = np.random.default_rng(0)
    curves, thresholds = [], []
    for g in range(40):
        n = int(rng.integers(1, 60))
        w = rng.uniform(0.1, 1.0, n)
        a = np.cumsum(w) / w.sum()
        c = np.cumsum(w * rng.normal(0.0, 1.0, n)) / w.sum()
        curves.append((a, c))
        thresholds.append([0.0, np.nan, -1.0, 0.5 * (np.ptp(np.r_[0, c]))][g % 4])
    expected = [shortest_stretch(a, c, t) for (a, c), t in zip(curves, thresholds, strict=True)]
    assert _compiled(curves, thresholds) == expected
    assert expected[3] is not None and expected[0] is None


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_whole_rise_is_found_when_the_threshold_is_d(sign):
    a = np.linspace(0.1, 1.0, 10)
    c = sign * np.array([0.0, -0.1, 0.2, 0.5, 0.4, 0.9, 0.8, 0.85, 0.3, 0.3])
    d = np.ptp(np.r_[0.0, c])
    ((i, j),) = _compiled([(a, c)], [d])
    assert (i, j) == (2, 6)  # from the minimum after point 1 to the maximum at point 6
