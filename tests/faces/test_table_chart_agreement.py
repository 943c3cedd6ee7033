"""The table and the chart of one group apply one rule for the normalized statistics.

Issue 12 item 3: a single-score group had ``kuiper_z`` null in the screen
while the chart's subtitle printed "1.001 sigma" and drew the triangle. Here
every kind of comparison (subpopulation, calibration, compare, paired) is drawn for
groups of one, two and several points, and the chart must show z (in the
subtitle, with the triangle) exactly when the table reports it, with the
same value.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("altair")

from polars_cumdev import charts
from polars_cumdev.compare import compare, compare_curve
from polars_cumdev.method.statistics import MIN_SCORES, normalized

SIGMA = "\N{GREEK SMALL LETTER SIGMA}"


def _chart_z(curve: pl.DataFrame, kind: str) -> tuple[bool, str]:
    spec = charts.cumulative(curve, kind=kind).to_dict()  # type: ignore[arg-type]
    names = {layer.get("name", layer.get("description")) for layer in spec["layer"]}
    return "triangle" in names, " ".join(spec["title"]["subtitle"])


def _agree(z: float | None, curve: pl.DataFrame, kind: str) -> None:
    triangle, subtitle = _chart_z(curve, kind)
    assert triangle == (z is not None), (z, subtitle)
    if z is None:
        assert SIGMA + ";" not in subtitle and "not normalized" in subtitle
    else:
        assert f"= {z:.4g}{SIGMA}" in subtitle


def _groups(scores_per_group: dict[str, int], seed: int = 0) -> pl.DataFrame:
    """Groups with the given numbers of distinct scores, 8 rows per score, over a background."""
    rng = np.random.default_rng(seed)
    parts = []
    for name, count in scores_per_group.items():
        scores = np.repeat(np.linspace(0.2, 0.8, count), 8) if count > 1 else np.full(8, 0.5)
        parts.append(
            pl.DataFrame(
                {
                    "g": [name] * scores.size,
                    "s": scores,
                    "r": (rng.random(scores.size) < 0.3 + 0.4 * scores).astype(np.float64),
                }
            )
        )
    background = rng.random(400)
    parts.append(
        pl.DataFrame(
            {
                "g": ["rest"] * 400,
                "s": background,
                "r": (rng.random(400) < background).astype(np.float64),
            }
        )
    )
    return pl.concat(parts)


GROUPS = {"one": 1, "two": 2, "several": 12}


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.slow
def test_subpopulation_table_and_chart_agree(group: str) -> None:
    df = _groups(GROUPS, seed=1)
    table = df.cumdev.screen(by="g", score="s", response="r")
    row = table.filter(pl.col("g") == group).row(0, named=True)
    assert row["n_scores"] == GROUPS[group]
    if group == "one":
        assert row["kuiper_z"] is None  # the table's rule: a single point says nothing
    curve = df.cumdev.curve(subpop=pl.col("g") == group, score="s", response="r")
    _agree(row["kuiper_z"], curve, "subpopulation")


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.slow
def test_calibration_table_and_chart_agree(group: str) -> None:
    df = _groups(GROUPS, seed=2)
    table = df.cumdev.calibration(score="s", response="r", by="g")
    row = table.filter(pl.col("g") == group).row(0, named=True)
    if group == "one":
        assert row["ecce_r_z"] is not None  # calibration needs only sigma > 0
    curve = df.filter(pl.col("g") == group).cumdev.calibration_curve(score="s", response="r")
    _agree(row["ecce_r_z"], curve, "calibration")


@pytest.mark.parametrize(
    ("first", "second", "points"),
    [
        ([0.0, 1.0, 4.0], [2.0, 3.0], 1),  # blocks a b a: one interior block
        ([0.0, 2.0], [1.0, 3.0], 2),
        ([0.0, 2.0, 4.0, 6.0, 8.0, 10.0], [1.0, 3.0, 5.0, 7.0, 9.0, 11.0], 10),
    ],
)
@pytest.mark.slow
def test_compare_table_and_chart_agree(
    first: list[float], second: list[float], points: int
) -> None:
    rng = np.random.default_rng(points)
    s = np.repeat(first + second, 4)
    g = np.repeat(["a"] * len(first) + ["b"] * len(second), 4)
    df = pl.DataFrame({"g": g, "s": s, "r": rng.normal(size=s.size)})
    args = (df, pl.col("g") == "a", pl.col("g") == "b", "s", "r")
    row = compare(*args).row(0, named=True)
    curve = compare_curve(*args)
    assert curve.height - 1 == points
    _agree(row["kuiper_z"], curve, "compare")


def test_normalized_on_numbers_and_expressions() -> None:
    cases = [(0, 1.0), (1, 1.0), (2, 1.0), (2, 0.0), (3, None), (3, float("nan")), (5, 2.5)]
    for least in (MIN_SCORES["subpopulation"], MIN_SCORES["calibration"]):
        frame = pl.DataFrame(
            {"n": [n for n, _ in cases], "sigma": [s for _, s in cases]},
            schema={"n": pl.Int64, "sigma": pl.Float64},
        )
        got = frame.select(normalized(pl.col("n"), pl.col("sigma"), least)).to_series().to_list()
        want = [n >= least and s is not None and np.isfinite(s) and s > 0 for n, s in cases]
        assert got == want
        assert [normalized(n, s, least) for n, s in cases] == want


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.slow
def test_paired_table_and_chart_agree(group: str) -> None:
    df = _groups(GROUPS, seed=3)
    rng = np.random.default_rng(3)
    df = df.with_columns(pl.Series("r2", rng.random(df.height) < 0.5).cast(pl.Float64))
    table = df.cumdev.paired("s", "r", "r2", by="g")
    row = table.filter(pl.col("g") == group).row(0, named=True)
    if group == "one":
        assert row["kuiper_z"] is None
    curve = df.filter(pl.col("g") == group).cumdev.paired_curve("s", "r", "r2")
    _agree(row["kuiper_z"], curve, "paired")
