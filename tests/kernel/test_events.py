"""The screen's walk without a prefix table gives the walk with one, bit for bit.

:func:`polars_cumdev.kernel.events.screen_events` closes each bin when the
running sums reach its end; :func:`polars_cumdev.kernel.screen_groups` looks
the bin up in the stored prefix table, and :func:`group_curves` walks again
for the curves. Same additions in the same order, so the same bits.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from polars_cumdev import kernel as k
from polars_cumdev.kernel import events


def _data(rows: int, groups: int, scores: str, seed: int):
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    gid = rng.choice(groups, size=rows, p=share / share.sum()).astype(np.int32) + 3
    if scores == "continuous":
        s = rng.random(rows)
    elif scores == "ties":
        s = np.round(rng.random(rows), 2)
    else:  # a few huge ties among distinct scores
        s = np.where(rng.random(rows) < 0.3, 0.5, rng.random(rows))
    r = (rng.random(rows) < 0.2 + 0.6 * s).astype(np.int8)
    w = rng.lognormal(0.0, 1.0, rows)
    order = np.argsort(s, kind="stable")
    return gid[order], s[order], r[order], w[order]


@pytest.mark.parametrize("scores", ["continuous", "ties", "mixed"])
@pytest.mark.parametrize("groups", [1, 7, 300])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize(
    ("batch", "threads"),
    [(events.QUEUE, 2), (64, 2), (64, 1), pytest.param(1, 2, marks=pytest.mark.slow)],
)
def test_events_equal_the_prefix_table_walk(monkeypatch, scores, groups, weighted, batch, threads):
    monkeypatch.setattr(events, "TWO_THREADS", 0)  # a second thread even on small data
    # 5,000 rows: one batch of closings (events.QUEUE), or many batches closed on a
    # second thread while the rows of the next are walked: the same bits either way.
    gid, s, r, w = _data(5000, groups, scores, seed=groups)
    centre, scale = 0.5, 2.0**-3
    columns = (s, r, w if weighted else np.empty(0), weighted, scale)
    count = groups + 5  # group numbers 0..2 and the last two have no row
    prefix = k.prefix_table(*columns, centre)
    out, first = k.screen_groups(gid, 0, *columns, count, centre, *prefix)
    new, new_first, starts, curves = events.screen_events(
        gid, 0, *columns, count, centre, True, batch, threads
    )
    np.testing.assert_array_equal(new, out)
    np.testing.assert_array_equal(new_first, first)
    present = first >= 0
    counts = np.where(present, out[:, k.N_SCORES], 0).astype(np.int64)
    np.testing.assert_array_equal(np.diff(starts), counts)
    old = k.group_curves(gid, 0, *columns, count, centre, *prefix, True, present, starts)
    per_point = np.repeat(out[present, k.WEIGHT], counts[present])
    np.testing.assert_array_equal(curves[:, 0], old[:, 0] / per_point)
    np.testing.assert_array_equal(curves[:, 1], old[:, 1] / per_point)
    assert curves.shape[1] == 2  # (no scores: tie_scores finds the few wanted)
    rng = np.random.default_rng(groups)
    wanted = np.where(
        present[:, None], rng.integers(-1, np.maximum(counts, 1)[:, None], (count, 2)), -1
    )
    scores = k.tie_scores(gid, 0, s, wanted)
    split = k.split_tie_scores(gid, 0, s, wanted, np.diff(starts), threads=2)
    np.testing.assert_array_equal(split, scores)
    kept = wanted >= 0
    at = np.where(kept, starts[:-1, None] + wanted, 0)
    np.testing.assert_array_equal(scores[kept], old[:, 2][at[kept]])
    assert np.isnan(scores[~kept]).all()
    bare = events.screen_events(gid, 0, *columns, count, centre, False, batch)
    np.testing.assert_array_equal(bare[0], out)
    assert bare[3].size == 0


def test_events_of_no_rows():
    empty = np.empty(0)
    out, first, starts, curves = events.screen_events(
        np.empty(0, dtype=np.int32), 0, empty, empty, empty, True, 1.0, 2, 0.5, True
    )
    assert (first == -1).all() and (out[:, k.N_SCORES] == 0).all()
    assert starts.tolist() == [0, 0, 0] and curves.shape == (0, 2)
