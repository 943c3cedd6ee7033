"""The ECE-versus-bins chart and the namespace methods around it."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import vl_convert

import polars_cumdev
from polars_cumdev import charts


def rows(spec: dict, layer: dict) -> list[dict]:
    """The data rows of a layer, inline or in the spec's named datasets."""
    data = layer["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


@pytest.fixture(scope="module")
def predictions() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    s = rng.uniform(size=4000)
    r = (rng.uniform(size=s.size) < np.clip(s + 0.1 * np.sin(8 * s), 0, 1)).astype(np.float64)
    return pl.DataFrame({"s": s, "r": r})


@pytest.mark.slow
def test_chart_draws_every_sweep_point_and_the_ecce_rules(predictions: pl.DataFrame) -> None:
    sweep = predictions.cumdev.ece_sweep("s", "r", bins=[2, 5, 10, 20])
    ecce = predictions.lazy().cumdev.calibration("s", "r")
    spec = charts.ece_sweep(sweep, ecce=ecce).to_dict()
    names = [layer["name"] for layer in spec["layer"]]
    assert names == ["ece", "ecce"]
    lines = rows(spec, spec["layer"][0])
    assert len(lines) == 2 * sweep.height
    rules = {row["metric"]: row["value"] for row in rows(spec, spec["layer"][1])}
    row = ecce.collect().row(0, named=True)
    assert rules == {"ECCE-R": row["ecce_r"], "ECCE-MAD": row["ecce_mad"]}
    svg = vl_convert.vegalite_to_svg(json.loads(json.dumps(spec)))
    assert svg.lstrip().startswith("<svg")


def test_chart_without_ecce_and_missing_columns(predictions: pl.DataFrame) -> None:
    sweep = predictions.cumdev.ece_sweep("s", "r", bins=[3, 6])
    assert [layer["name"] for layer in charts.ece_sweep(sweep).to_dict()["layer"]] == ["ece"]
    with pytest.raises(polars_cumdev.ColumnNotFoundError):
        charts.ece_sweep(sweep.drop("ece2"))


def test_namespace_binned_methods_follow_the_frame_kind(predictions: pl.DataFrame) -> None:
    lazy = predictions.lazy()
    assert isinstance(lazy.cumdev.ece("s", "r"), pl.LazyFrame)
    assert isinstance(lazy.cumdev.reliability("s", "r", calibration=True), pl.LazyFrame)
    eager = predictions.cumdev.ece("s", "r", bins=10)
    assert eager.equals(lazy.cumdev.ece("s", "r", bins=10).collect())
    bins = predictions.cumdev.reliability("s", "r", bins=5, calibration=True)
    assert bins["population"].unique().to_list() == ["full"]
    assert bins.height == 5
