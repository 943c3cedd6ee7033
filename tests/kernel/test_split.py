"""The walks split by group between two threads give the bits of one thread.

A group's points are closed from its own state only, so two threads that
close the points of disjoint sets of groups add the same numbers in the same
order as one thread (:mod:`polars_cumdev.kernel.split`). Checked on skewed
group sizes, ties and weights, for the screen's first pass
(:func:`polars_cumdev.kernel.boundaries.file_closings`), the screen's walk
(:func:`polars_cumdev.kernel.screen_events`), calibration's walk
(:func:`polars_cumdev.kernel.calibration_walk`), and end to end under the
thresholds lowered to 0 rows, against the Polars plan.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import build_frame

pytest.importorskip("numba")

from polars_cumdev import kernel as k
from polars_cumdev.kernel import boundaries, events, split


def _data(rows: int, groups: int, scores: str, seed: int):
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    gid = rng.choice(groups, size=rows, p=share / share.sum()).astype(np.int32) + 2
    s = rng.random(rows) if scores == "continuous" else np.round(rng.random(rows), 2)
    r = (rng.random(rows) < 0.2 + 0.6 * s).astype(np.int8)
    w = rng.lognormal(0.0, 1.0, rows)
    order = np.argsort(s, kind="stable")
    return gid[order], s[order], r[order], w[order]


def _filed(heads: np.ndarray, link: np.ndarray) -> list[list[int]]:
    """Each row's closings (the rows whose arrival closes a tie there), as sorted lists."""
    filed = []
    for u in range(heads.shape[1]):
        found = []
        for t in range(heads.shape[0]):
            j = heads[t, u]
            while j >= 0:
                found.append(int(j))
                j = link[j]
        filed.append(sorted(found))
    return filed


@pytest.mark.parametrize("scores", ["continuous", "ties"])
@pytest.mark.parametrize("groups", [1, 5, 200])
def test_two_threads_file_the_same_closings(scores, groups):
    gid, s, _, _ = _data(3000, groups, scores, seed=groups)
    count = groups + 4  # numbers 0, 1 and the last two have no row
    one = boundaries.file_closings(gid, 0, s, count, threads=1)
    two = boundaries.file_closings(gid, 0, s, count, threads=2)
    assert one[0].shape[0] == 1 and two[0].shape[0] == 2
    assert _filed(*one[:2]) == _filed(*two[:2])
    np.testing.assert_array_equal(one[2], two[2])
    np.testing.assert_array_equal(one[3], two[3])


@pytest.mark.parametrize("scores", ["continuous", "ties"])
@pytest.mark.parametrize("groups", [1, 5, 200])
@pytest.mark.parametrize("weighted", [True, False])
def test_screen_events_same_bits_on_one_and_two_threads(monkeypatch, scores, groups, weighted):
    monkeypatch.setattr(events, "TWO_THREADS", 0)
    gid, s, r, w = _data(4000, groups, scores, seed=7 * groups)
    columns = (gid, 0, s, r, w if weighted else np.empty(0), weighted, 2.0**-2, groups + 4, 0.5)
    one = events.screen_events(*columns, True, 64, threads=1)
    two = events.screen_events(*columns, True, 64, threads=2)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("scores", ["continuous", "ties"])
@pytest.mark.parametrize("groups", [1, 5, 200])
@pytest.mark.parametrize("weighted", [True, False])
def test_calibration_walk_same_bits_on_one_and_two_threads(scores, groups, weighted):
    gid, s, r, w = _data(4000, groups, scores, seed=3 * groups)
    count = groups + 4
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(k.tie_counts(gid, 0, s, count), out=starts[1:])
    columns = (gid, 0, s, r, w if weighted else np.empty(0), weighted, 2.0**-2, count, starts)
    reference = k.calibration_curves(*columns)
    for threads in (1, 2):
        found = k.calibration_walk(*columns, threads=threads)
        for a, b in zip(reference, found, strict=True):
            np.testing.assert_array_equal(a, b)
        out, _, divided = k.calibration_walk(*columns, threads=threads, divided=True)
        per_point = np.repeat(out[:, k.WEIGHT], np.diff(starts))
        np.testing.assert_array_equal(divided[:, :2], reference[2][:, :2] / per_point[:, None])
        np.testing.assert_array_equal(divided[:, 2], reference[2][:, 2])


@pytest.mark.parametrize("share", [0.0, 0.1, 0.31, 0.5, 0.9])
def test_owners_give_the_calling_thread_about_its_share(share):
    points = np.array([500, 0, 7, 300, 300, 90, 60, 40, 3, 1, 1], dtype=np.int64)
    owner = split.owners(points, share)
    assert set(owner.tolist()) <= {0, 1}
    mine = points[owner == 0].sum() / points.sum()
    assert abs(mine - share) <= points.max() / points.sum()
    np.testing.assert_array_equal(owner, split.owners(points, share))  # deterministic


def test_split_walks_equal_one_thread_end_to_end(monkeypatch):
    """Screen and calibration(by=) with the second thread on small data: same bits."""
    df = build_frame(5, 3000, response="bernoulli", weights="float", scores="mixed")
    options = dict(by="g", score="s", response="r", weight="w", engine="kernel")
    one_screen = df.cumdev.screen(**options)
    one_calibration = df.cumdev.calibration("s", "r", "w", by="g", engine="kernel")
    monkeypatch.setattr(events, "TWO_THREADS", 0)
    monkeypatch.setattr(k, "TWO_THREADS", 0)
    assert df.cumdev.screen(**options).equals(one_screen)
    assert df.cumdev.calibration("s", "r", "w", by="g", engine="kernel").equals(one_calibration)


@pytest.mark.parametrize("groups", [1, 5, 200])
def test_split_stretches_find_the_stretches_of_one_thread(groups):
    rng = np.random.default_rng(groups)
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    counts = rng.multinomial(5000, share / share.sum())
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    a = np.concatenate([np.cumsum(rng.random(n)) for n in counts])
    c = np.concatenate([np.cumsum(rng.normal(0.0, 1.0, n)) for n in counts])
    thresholds = rng.uniform(0.5, 6.0, groups)
    thresholds[1::3] = np.nan  # not searched
    thresholds[2::5] = -1.0
    reference = k.stretches(starts, a, c, thresholds)
    assert (reference[1] >= 0).any()
    for threads in (1, 2):
        found = k.split_stretches(starts, a, c, thresholds, threads)
        for x, y in zip(reference, found, strict=True):
            np.testing.assert_array_equal(x, y)
