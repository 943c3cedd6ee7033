"""Charts of curves on Hilbert order: covariate tuples on the axis, and the covariate map."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from conftest import covariate_data as data

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.errors import InvalidParameterError


@pytest.fixture(scope="module")
def hilbert_curve() -> pl.DataFrame:
    df = data(n=3000, seed=2, corner=0.6, q=0.6, ties=False)
    return pc.curve(df, pl.col("g") == "a", ["x", "y"], "r", "w")


def _lower_axis(chart) -> dict:
    spec = chart.to_dict()
    line = next(layer for layer in spec["layer"] if layer.get("name") == "curve")
    return line["encoding"]["x"]["axis"]


def _labels(axis: dict) -> tuple[list[str], list[float]]:
    texts, numbers = re.match(
        r"\[(.*)\]\[indexof\(\[(.*)\], datum.value\)\]", axis["labelExpr"]
    ).groups()
    labels = [t.strip().strip("'") for t in re.findall(r"'[^']*'", texts)]
    return labels, [float(v) for v in numbers.split(",")]


@pytest.mark.slow
def test_cumulative_labels_ticks_with_covariate_tuples(hilbert_curve: pl.DataFrame) -> None:
    axis = _lower_axis(charts.cumulative(hilbert_curve))
    assert axis["title"] == "(x, y) along a Hilbert curve"
    labels, positions = _labels(axis)
    assert len(labels) == len(positions) >= 5
    kept = [(label, p) for label, p in zip(labels, positions, strict=True) if label]
    assert len(kept) >= 3  # crowded labels are blanked; the rest are tuples
    for label, position in kept:
        row = hilbert_curve.filter((pl.col("a") - position).abs() < 1e-12).filter(pl.col("k") > 0)
        assert row.height >= 1
        x, y = (float(v) for v in label.strip("()").split(","))
        assert x == pytest.approx(row["x"][0], abs=0.01)
        assert y == pytest.approx(row["y"][0], abs=0.01)


@pytest.mark.slow
def test_cumulative_keeps_a_given_label_and_ordinary_curves(hilbert_curve) -> None:
    axis = _lower_axis(charts.cumulative(hilbert_curve, score_label="income and age"))
    assert axis["title"] == "income and age"
    ordinary = hilbert_curve.drop("ordering", "x", "y")
    labels, _ = _labels(_lower_axis(charts.cumulative(ordinary)))
    assert not any(label.startswith("(") for label in labels)


@pytest.mark.slow
def test_covariate_map(hilbert_curve: pl.DataFrame) -> None:
    chart = charts.covariate_map(hilbert_curve)
    spec = chart.to_dict()
    names = [layer.get("name") for layer in spec["layer"]]
    assert names == ["points", "located"]
    values = spec["datasets"][spec["data"]["name"]]
    assert len(values) == hilbert_curve.height - 1
    assert {"x", "y", "k_over_n", "located"} <= set(values[0])
    encoding = spec["layer"][0]["encoding"]
    assert encoding["x"]["field"] == "x" and encoding["y"]["field"] == "y"
    assert encoding["color"]["field"] == "k_over_n"
    assert "hilbert(x, y)" in json.dumps(spec["title"])
    swapped = charts.covariate_map(hilbert_curve, x="y", y="x", max_points=100).to_dict()
    assert swapped["layer"][0]["encoding"]["x"]["field"] == "y"
    assert len(swapped["datasets"][swapped["data"]["name"]]) <= 100


def test_covariate_map_refuses_other_frames(hilbert_curve: pl.DataFrame) -> None:
    with pytest.raises(InvalidParameterError, match="several covariates"):
        charts.covariate_map(hilbert_curve.drop("ordering"))
    with pytest.raises(InvalidParameterError, match="not one of"):
        charts.covariate_map(hilbert_curve, x="z", y="x")
    one = pc.curve(data(n=300), pl.col("g") == "a", ["x"], "r")
    with pytest.raises(InvalidParameterError, match="needs two"):
        charts.covariate_map(one)


@pytest.mark.slow
def test_located_stretch_is_named_by_covariates(hilbert_curve: pl.DataFrame) -> None:
    subtitle = charts.cumulative(hilbert_curve).to_dict()["title"]["subtitle"]
    joined = " ".join(subtitle)  # lines are wrapped to fit the chart's width
    line = joined[joined.index("shaded:") :]
    located = hilbert_curve.filter("located")
    first, last = located.row(0, named=True), located.row(-1, named=True)
    want = (
        f"from (x, y) = ({first['x']:.4g}, {first['y']:.4g}) to ({last['x']:.4g}, {last['y']:.4g})"
    )
    assert want in line
