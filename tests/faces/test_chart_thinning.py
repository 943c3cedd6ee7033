"""Charts of large groups (issue 12 item 9): a few points per pixel column, every extreme kept.

The cumulative chart draws at most 4 points per pixel column of its width
(the first, last, lowest and highest of the column), one tooltip point per
column plus the overall maximum and minimum, and says that it thinned the
line; the frame the library returns stays complete.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl
import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

import vl_convert

from polars_cumdev import charts

WIDTH = 420


def walk(n: int, seed: int = 0) -> pl.DataFrame:
    """A weighted random walk in the layout of a curve frame (origin row first)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2.0, n)
    a = np.concatenate([[0.0], np.cumsum(w) / w.sum()])
    c = np.concatenate([[0.0], np.cumsum(rng.normal(size=n) * w / w.sum())])
    return pl.DataFrame(
        {
            "k": np.arange(n + 1),
            "a": a,
            "k_over_n": np.arange(n + 1) / n,
            "score": np.concatenate([[np.nan], np.sort(rng.random(n))]),
            "cumdiff": c,
            "sigma": np.full(n + 1, np.sqrt((w**2).sum()) / w.sum()),
        }
    ).with_columns(pl.col("score").fill_nan(None))


def rows(spec: dict[str, Any], name: str) -> list[dict[str, Any]]:
    layer = next(
        layer for layer in spec["layer"] if layer.get("name", layer.get("description")) == name
    )
    data = layer["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


def columns(a: np.ndarray) -> np.ndarray:
    """The pixel column of each A, the way the chart cuts [0, 1]."""
    return np.clip(np.floor(np.clip(a, 0.0, 1.0) * WIDTH), 0, WIDTH - 1).astype(np.int64)


@pytest.fixture(scope="module")
def big() -> tuple[pl.DataFrame, dict[str, Any]]:
    frame = walk(200_000)
    return frame, charts.cumulative(frame, width=WIDTH).to_dict()


@pytest.mark.slow
def test_spec_size_is_bounded(big: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    _, spec = big
    assert len(rows(spec, "curve")) <= 4 * WIDTH
    assert len(rows(spec, "points")) <= WIDTH + 2
    # 200,000 points: about 160 KB of JSON (491 KB before, with 4,000 points).
    assert len(json.dumps(spec)) < 200_000


@pytest.mark.slow
def test_envelope_of_every_pixel_column_is_exact(big: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, spec = big
    drawn = pl.DataFrame(rows(spec, "curve"))
    full = frame.select("a", "cumdiff").with_columns(
        pl.Series("column", columns(frame.get_column("a").to_numpy()))
    )
    kept = drawn.with_columns(pl.Series("column", columns(drawn.get_column("a").to_numpy())))

    def envelope(f: pl.DataFrame) -> pl.DataFrame:
        return (
            f.group_by("column")
            .agg(
                pl.col("cumdiff").max().alias("high"),
                pl.col("cumdiff").min().alias("low"),
                pl.col("a").min().alias("first"),
                pl.col("a").max().alias("last"),
            )
            .sort("column")
        )

    assert envelope(kept).equals(envelope(full))
    assert drawn.get_column("a").is_sorted()


@pytest.mark.slow
def test_extremes_survive_and_thinning_is_said(big: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, spec = big
    c = frame.get_column("cumdiff")
    for name in ("curve", "points"):
        values = [row["cumdiff"] for row in rows(spec, name)]
        assert max(values) == c.max() and min(values) == c.min()
    points = next(
        layer for layer in spec["layer"] if layer.get("name", layer.get("description")) == "points"
    )
    assert "200,001" in points["transform"][0]["calculate"]
    assert {"field": "thinned", "type": "nominal", "title": "line thinned"} in points["encoding"][
        "tooltip"
    ]
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "thinned for display" in subtitle and "200,001" in subtitle
    svg = vl_convert.vegalite_to_svg(spec)  # renders, the tooltip text included
    assert "200,001 points drawn" in svg
    # The statistics of the subtitle use every point.
    kuiper = max(c.max(), 0.0) - min(c.min(), 0.0)  # type: ignore[operator]
    assert f"Kuiper {kuiper:.4g}" in subtitle


@pytest.mark.slow
def test_small_curves_are_drawn_whole() -> None:
    frame = walk(1000)
    spec = charts.cumulative(frame, width=WIDTH).to_dict()
    assert [row["cumdiff"] for row in rows(spec, "curve")] == frame.get_column("cumdiff").to_list()
    assert "thinned" not in " ".join(spec["title"]["subtitle"])
    points = next(
        layer for layer in spec["layer"] if layer.get("name", layer.get("description")) == "points"
    )
    assert "transform" not in points
    # Tooltips on one point per pixel column, the extremes included.
    tips = rows(spec, "points")
    assert len(tips) <= WIDTH + 2
    assert {row["cumdiff"] for row in tips} >= {frame["cumdiff"].max(), frame["cumdiff"].min()}
    assert set(columns(np.array([row["a"] for row in tips]))) == set(
        columns(frame.get_column("a").to_numpy())
    )


@pytest.mark.slow
def test_tiny_curves_share_one_dataset() -> None:
    frame = walk(50)
    spec = charts.cumulative(frame, width=WIDTH).to_dict()
    # The line and its tooltips share one dataset: no point is embedded twice.
    assert rows(spec, "curve") == rows(spec, "points")
    assert len(rows(spec, "points")) == frame.height
    assert sum(len(v) == frame.height for v in spec["datasets"].values()) == 1


@pytest.mark.slow
def test_the_returned_frame_stays_complete() -> None:
    from polars_cumdev.datasets import census

    data = census(n=40_000)
    points = data.cumdev.curve(
        subpop=pl.col("county") == "Oakridge",
        score="log10_income",
        response="has_internet",
        weight="WGTP",
    )
    before = points.clone()
    charts.cumulative(points, width=100).to_dict()  # thinned: 4 x 100 < its rows
    assert points.height > 400
    assert points.equals(before)
    n_scores = (
        data.cumdev.screen(
            by="county", score="log10_income", response="has_internet", weight="WGTP"
        )
        .filter(pl.col("county") == "Oakridge")
        .get_column("n_scores")[0]
    )
    assert points.height == n_scores + 1
