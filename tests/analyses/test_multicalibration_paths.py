"""Multicalibration: the walk's three paths agree; levels never share a label; empty families.

The walk takes the additive sums from the cells of the features' cross (or,
past ``MAX_CELLS``, sums them itself), and skips its tie bookkeeping when no
two scores tie; all paths must give the same table. Oracle for the labels:
each segment's rows, selected by its SQL condition, against a plain mask.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_cumdev.errors import EmptySubpopulationError
from polars_cumdev.multicalibration import multicalibration, segments, subpop
from polars_cumdev.multicalibration import walk as walk_module
from polars_cumdev.subpopulation import screen


def _frame(seed: int, n: int, *, ties: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.integers(1, 12, n) / 12.0 if ties else rng.uniform(0.02, 0.98, n)
    return pl.DataFrame(
        {
            "s": s,
            "y": (rng.random(n) < s).astype(np.float64),
            "w": rng.uniform(0.2, 3.0, n),
            "a": rng.choice(["p", "q", "r", "t"], n).tolist(),
            "b": rng.integers(0, 4, n),
            "c": rng.normal(size=n),
        }
    )


@pytest.mark.slow
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("method", ["holm", "bootstrap"])
def test_cells_and_walked_sums_agree(monkeypatch, ties, method):
    frame = _frame(3, 900, ties=ties)
    family = segments(["a", "b"], ["c"], depth=2, min_rows=5)

    def run():
        return multicalibration(frame, "s", "y", "w", segments=family, method=method, resamples=19)

    cells = run()
    monkeypatch.setattr(walk_module, "MAX_CELLS", 0)  # the walk sums everything itself
    walked = run()
    assert cells.height > 10
    assert_frame_equal(cells, walked, rel_tol=1e-12, abs_tol=1e-15)


def test_made_up_labels_never_collide_with_real_values():
    n = 600
    rng = np.random.default_rng(5)
    values = np.array(["(missing)", "(other)", "x", "y", "z", "v"], dtype=object)
    a = values[rng.integers(0, 6, n)]
    a[rng.random(n) < 0.1] = None
    # the two "real" made-up-looking values are the most frequent, so they are kept
    a[: n // 3] = "(missing)"
    a[n // 3 : 2 * n // 3] = "(other)"
    s = rng.uniform(0.05, 0.95, n)
    frame = pl.DataFrame(
        {"s": s, "y": (rng.random(n) < s).astype(np.float64), "a": pl.Series(a, dtype=pl.String)}
    )
    table = multicalibration(
        frame, "s", "y", segments=segments(["a"], depth=1, levels=3, min_rows=1)
    )
    level = table.filter(pl.col("depth") == 1)
    labels = level.get_column("a").to_list()
    assert len(labels) == len(set(labels)) == 4  # two real values, pooled rest, nulls
    indexed = frame.with_row_index("_i")
    for row in level.iter_rows(named=True):
        chosen = set(indexed.filter(subpop(row)).get_column("_i").to_list())
        label = row["a"]
        if label in ("(missing)", "(other)"):
            expected = pl.col("a") == label  # the real value, not the made-up level
        elif label == "((missing))":
            expected = pl.col("a").is_null()
        else:
            assert label == "((other))"
            expected = (
                pl.col("a").is_in(["(missing)", "(other)"]).not_() & pl.col("a").is_not_null()
            )
        assert chosen == set(indexed.filter(expected).get_column("_i").to_list()), label
        assert row["n"] == len(chosen)


def test_an_empty_family_says_why():
    frame = _frame(4, 40, ties=False)
    with pytest.raises(EmptySubpopulationError, match="min_rows=50"):
        multicalibration(frame, "s", "y", segments=segments(["a"], min_rows=50))
    with pytest.raises(EmptySubpopulationError, match="min_rows=30"):
        screen(frame, segments(["a", "b"], min_rows=30), "s", "y")


def test_segment_screen_uses_the_level_given():
    frame = _frame(6, 300, ties=False)
    family = segments(["a", "b"], depth=1, min_rows=5)
    strict = screen(frame, family, "s", "y", level=0.001)
    loose = screen(frame, family, "s", "y", level=0.2)
    assert strict["critical_z"][0] > loose["critical_z"][0]
