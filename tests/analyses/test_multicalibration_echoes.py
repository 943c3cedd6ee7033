"""New findings told from echoes (issue 36, item 4): polars_cumdev.multicalibration.echoes.

One depth-2 cell ``a = 0 & b = 0`` is miscalibrated at low scores, and a
feature ``c`` follows the score, so the siblings ``a = 0 & c = 1`` and
``b = 0 & c = 1`` hold most of the cell's deviating rows and sometimes beat
their own parents: the parent/child rule alone labelled such a sibling a second
``new`` finding (seeds 1 and 2 here, on the code before the echo rule). Their
rows outside the cell are calibrated, so they are echoes of the cell.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.multicalibration import multicalibration

CELL = (pl.col("a") == "0") & (pl.col("b") == "0") & pl.col("c").is_null()


def cell_and_siblings(seed: int, rows: int = 6_000) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, rows)
    a, b = rng.integers(0, 6, rows), rng.integers(0, 6, rows)
    c = (s + rng.normal(0, 0.1, rows) < 0.6).astype(int)
    p = np.clip(s + 0.4 * ((a == 0) & (b == 0) & (s < 0.6)), 0, 1)
    y = (rng.random(rows) < p).astype(float)
    return pl.DataFrame(
        {"s": s, "y": y, "a": a.astype(str), "b": b.astype(str), "c": c.astype(str)}
    )


@pytest.mark.slow
def test_siblings_of_a_planted_cell_are_echoes() -> None:
    family = pc.segments(["a", "b", "c"], depth=2, levels=6, min_rows=10)
    echoes = 0
    for seed in range(8):
        table = multicalibration(cell_and_siblings(seed), "s", "y", segments=family)
        assert table.filter(CELL)["finding"].to_list() == ["new"], seed
        # a significant segment sharing rows with the cell without nesting in it
        sibling = ((pl.col("a") == "0") | (pl.col("b") == "0")) & pl.col("c").is_not_null()
        found = table.filter(sibling & pl.col("significant"))
        assert "new" not in found["finding"].to_list(), (seed, found)
        echo = table.filter(pl.col("finding") == "echo")
        echoes += echo.height
        # an echo names the cell and its rows outside it are not significant
        assert (echo["overlap"] == table.filter(CELL)["condition"][0]).all()
        assert (echo["remainder_z"] <= echo["critical_z"]).all()
    assert echoes >= 2  # the rule was needed on these seeds


@pytest.mark.slow
@pytest.mark.parametrize("method", ["holm", "bootstrap"])
def test_two_separate_findings_that_overlap_both_stay_new(method: str) -> None:
    """Removing the stronger cell's rows leaves the other cell significant: not an echo."""
    rng = np.random.default_rng(5)
    rows = 12_000
    s = rng.uniform(0.05, 0.95, rows)
    a, b, d, e = (rng.integers(0, 3, rows) for _ in range(4))
    first = (a == 0) & (b == 0)
    second = (d == 0) & (e == 0)
    p = np.clip(s + 0.3 * first - 0.3 * second, 0, 1)
    y = (rng.random(rows) < p).astype(float)
    frame = pl.DataFrame(
        {"s": s, "y": y, **{k: v.astype(str) for k, v in zip("abde", (a, b, d, e), strict=True)}}
    )
    family = pc.segments(["a", "b", "d", "e"], depth=2, levels=3, min_rows=10)
    table = multicalibration(frame, "s", "y", segments=family, method=method, resamples=199)
    new = table.filter(pl.col("finding") == "new")
    named = {(r["a"], r["b"], r["d"], r["e"]) for r in new.iter_rows(named=True)}
    assert ("0", "0", None, None) in named and (None, None, "0", "0") in named, new


def test_the_echo_is_worded() -> None:
    from polars_cumdev.multicalibration.words import sentences

    family = pc.segments(["a", "b", "c"], depth=2, levels=6, min_rows=10)
    table = multicalibration(cell_and_siblings(1), "s", "y", segments=family)
    lines = sentences(table, ["a", "b", "c"], top=10)
    echoes = [line for line in lines if "an echo of a = 0 & b = 0" in line]
    assert echoes and all("its rows outside: z = " in line for line in echoes), lines
