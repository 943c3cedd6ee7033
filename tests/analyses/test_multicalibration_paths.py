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
from polars_cumdev.multicalibration import bootstrap, multicalibration, segments, subpop
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
        screen(frame, segments(["a", "b"], levels=3, min_rows=30), "s", "y")


def test_segment_screen_uses_the_level_given():
    frame = _frame(6, 300, ties=False)
    family = segments(["a", "b"], depth=1, min_rows=5)
    strict = screen(frame, family, "s", "y", level=0.001)
    loose = screen(frame, family, "s", "y", level=0.2)
    assert strict["critical_z"][0] > loose["critical_z"][0]


def _naive_stepdown(z: np.ndarray, resampled: np.ndarray) -> np.ndarray:
    """Westfall and Young's step-down max-T, written out segment by segment."""
    b = resampled.shape[1]
    raw = np.empty(z.shape[0])
    for g in range(z.shape[0]):
        rest = [k for k in range(z.shape[0]) if z[k] <= z[g]]
        hits = sum(max(resampled[k, j] for k in rest) >= z[g] for j in range(b))
        raw[g] = (1.0 + hits) / (b + 1.0)
    return np.array(
        [max(raw[j] for j in range(z.shape[0]) if z[j] >= z[g]) for g in range(z.shape[0])]
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stepdown_matches_a_naive_transcription(seed):
    rng = np.random.default_rng(seed)
    z = np.round(rng.gamma(2.0, 1.0, 40), 1)  # rounded: ties among the observed z
    resampled = rng.gamma(2.0, 1.0, (40, 57))
    counts = bootstrap.stepdown_counts(z, resampled[:, :30]) + bootstrap.stepdown_counts(
        z, resampled[:, 30:]
    )  # two blocks of resamples, as the walk accumulates them
    got = bootstrap.stepdown(z, counts, 57)
    assert np.allclose(got, _naive_stepdown(z, resampled), rtol=0, atol=1e-15)
    single = bootstrap.adjusted(z, resampled.max(axis=0))
    assert np.all(got <= single + 1e-15)  # never less powerful than the single step


@pytest.mark.slow
def test_stepdown_runs_and_is_at_most_the_single_step():
    frame = _frame(8, 1500, ties=False)
    family = segments(["a", "b"], ["c"], depth=2, min_rows=5)
    single = multicalibration(frame, "s", "y", segments=family, method="bootstrap", resamples=49)
    step = multicalibration(frame, "s", "y", segments=family, method="stepdown", resamples=49)
    joined = single.join(step, on="condition", suffix="_step")
    assert joined.height == single.height
    assert (joined["p_family_step"] <= joined["p_family"] + 1e-15).all()
    assert (joined["ecce_r_z_step"] == joined["ecce_r_z"]).all()
