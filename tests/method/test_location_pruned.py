"""The kernel searches stretches only in groups whose own p-value reaches the level.

The screen and ``calibration(by=)`` state a located stretch only where the
group's Benjamini-Hochberg q-value is at most ``level``; q is never below p,
so the compiled node leaves the other groups unsearched
(:func:`polars_cumdev.method.kernel_frames.location`). The Polars plan
searches every group with T > 0 and blanks the stretches afterwards: the two
must state the same stretches at every level, while the kernel searches fewer
groups.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from numpy.testing import assert_allclose

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.method import location as location_module

_LOCATION = ("from_score", "to_score", "share", "deviation")


def _frame(seed: int) -> pl.DataFrame:
    """60 groups; group g's responses shifted up by g / 200 on the upper half of the scores.

    Their p-values spread from far below 0.05 to near 1, and many groups
    without a significant q still have D > 2 sigma.
    """
    rng = np.random.default_rng(seed)
    rows = 30_000
    g = rng.integers(0, 60, rows)
    s = rng.random(rows)
    p = 0.3 + 0.4 * s + np.where(s > 0.5, g / 200.0, 0.0)
    return pl.DataFrame(
        {
            "g": g,
            "s": s,
            "r": (rng.random(rows) < p).astype(np.int8),
            "w": rng.uniform(0.5, 2.0, rows),
        }
    )


def _searched_groups(monkeypatch) -> list[int]:
    """Counts, call by call, the groups the kernel's node hands to the search."""
    counts: list[int] = []
    original = location_module.located

    def counting(starts, a, c, s, thresholds, compiled_search=False):
        counts.append(int(np.sum(np.asarray(thresholds) > 0.0)))
        return original(starts, a, c, s, thresholds, compiled_search)

    monkeypatch.setattr(location_module, "located", counting)
    return counts


def _same(kernel: pl.DataFrame, plan: pl.DataFrame) -> None:
    assert kernel["g"].to_list() == plan["g"].to_list()
    for name in _LOCATION:
        assert_allclose(
            kernel[name].fill_null(np.nan).to_numpy(),
            plan[name].fill_null(np.nan).to_numpy(),
            rtol=1e-9,
            atol=1e-12,
            err_msg=name,
        )


@pytest.mark.parametrize("level", [0.01, 0.05, 0.3, 1.0])
def test_the_screen_states_the_plans_stretches_searching_fewer_groups(level, monkeypatch):
    df = _frame(1)
    plan = df.cumdev.screen(
        by="g", score="s", response="r", weight="w", engine="polars", level=level
    )
    counts = _searched_groups(monkeypatch)
    kernel = df.cumdev.screen(
        by="g", score="s", response="r", weight="w", engine="kernel", level=level
    )
    _same(kernel.sort("g"), plan.sort("g"))
    stated = int(kernel["from_score"].is_not_null().sum())
    beyond = int((kernel["kuiper"] > 2.0 * kernel["sigma"]).sum())  # T > 0
    assert 0 < stated <= beyond
    (searched,) = counts
    assert stated <= searched <= beyond
    if level <= 0.05:
        assert searched < beyond  # some groups with T > 0 were left out of the search
    else:  # T > 0 means z > 2, so p < 0.29: from there on no group can be left out
        assert searched == beyond


@pytest.mark.parametrize("level", [0.05, 1.0])
def test_calibration_by_group_states_the_plans_stretches(level, monkeypatch):
    df = _frame(2).with_columns((0.3 + 0.4 * pl.col("s")).alias("p"))
    args = {"by": "g", "level": level}
    plan = df.cumdev.calibration("p", "r", "w", engine="polars", **args)
    counts = _searched_groups(monkeypatch)
    kernel = df.cumdev.calibration("p", "r", "w", engine="kernel", **args)
    _same(kernel.sort("g"), plan.sort("g"))
    stated = int(kernel["from_score"].is_not_null().sum())
    (searched,) = counts
    assert 0 < stated <= searched
    if level < 1.0:
        assert searched < kernel.height
