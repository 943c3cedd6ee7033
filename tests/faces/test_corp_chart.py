"""charts.corp: the CORP reliability diagram drawn from a hand-made corp_curve frame."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_cumdev  # noqa: F401
from polars_cumdev import charts
from polars_cumdev.errors import ColumnNotFoundError, InvalidParameterError, InvalidValuesError


def make_curve(n: int = 60, *, band: bool = True, weighted: bool = True) -> pl.DataFrame:
    """A corp_curve-shaped frame: blocks of 4 scores, a band around the diagonal."""
    score = np.linspace(0.01, 0.99, n)
    block = np.arange(n) // 4 + 1
    fitted = np.clip((block - 1) * 4 / n + 0.05, 0, 1)
    weight = np.linspace(1.0, 3.0, n) if weighted else np.ones(n)
    low = np.clip(score - 0.1, 0, 1) if band else [None] * n
    high = np.clip(score + 0.1, 0, 1) if band else [None] * n
    return pl.DataFrame(
        {
            "score": score,
            "fitted": fitted,
            "response_mean": fitted,
            "weight": weight,
            "rows": np.ones(n, dtype=np.int64),
            "block": block,
            "lower": low,
            "upper": high,
            "level": [0.9 if band else None] * n,
            "resamples": [100 if band else 0] * n,
        },
        schema_overrides={"lower": pl.Float64, "upper": pl.Float64, "level": pl.Float64},
    )


def layers_by_name(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {}
    for panel in spec["vconcat"]:
        for layer in panel.get("layer", [panel]):
            if "name" in layer:  # Altair suffixes _0, _1 inside concatenations
                found[re.sub(r"_\d+$", "", layer["name"])] = layer
    return found


def rows(spec: dict[str, Any], layer: dict[str, Any]) -> list[dict[str, Any]]:
    data = layer["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


@pytest.mark.slow
def test_layers_and_data() -> None:
    curve = make_curve()
    spec = charts.corp(curve).to_dict()
    named = layers_by_name(spec)
    assert set(named) == {"band", "diagonal", "fit", "points", "histogram"}
    fit = rows(spec, named["fit"])
    # The line runs through the first and last score of each of the 15 blocks.
    assert len(fit) == 30
    assert {row["block"] for row in fit} == set(range(1, 16))
    band = rows(spec, named["band"])
    assert len(band) == curve.height and band[0]["lower"] == pytest.approx(0.0)
    shares = [row["share"] for row in rows(spec, named["histogram"])]
    assert sum(shares) == pytest.approx(1.0) and len(shares) <= 50
    assert named["histogram"]["encoding"]["y"]["title"] == "share of weight"
    assert "90% band" in " ".join(spec["title"]["subtitle"])


@pytest.mark.slow
def test_without_band_summary_and_histogram() -> None:
    curve = make_curve(band=False, weighted=False)
    summary = pl.DataFrame({"brier": [0.2], "mcb": [0.01], "dsc": [0.06], "unc": [0.25]})
    spec = charts.corp(curve, summary=summary, histogram_height=0).to_dict()
    named = layers_by_name(spec)
    assert "band" not in named and "histogram" not in named
    subtitle = spec["title"]["subtitle"]
    assert subtitle == ["Brier 0.2 = MCB 0.01 - DSC 0.06 + UNC 0.25"]
    unweighted = layers_by_name(charts.corp(curve).to_dict())["histogram"]
    assert unweighted["encoding"]["y"]["title"] == "share of rows"


@pytest.mark.slow
def test_long_frames_are_thinned_for_display_only() -> None:
    curve = make_curve(5000)
    spec = charts.corp(curve, max_points=300).to_dict()
    named = layers_by_name(spec)
    assert len(rows(spec, named["band"])) == 300
    assert len(rows(spec, named["fit"])) == 2 * curve["block"].n_unique()


@pytest.mark.slow
def test_from_the_library_renders(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    s = rng.uniform(size=500)
    df = pl.DataFrame({"s": s, "r": (rng.uniform(size=s.size) < s**1.5).astype(float)})
    chart = charts.corp(df.cumdev.corp_curve("s", "r"), summary=df.cumdev.corp("s", "r"))
    svg = charts.save(chart, tmp_path / "corp.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<svg")


def test_errors() -> None:
    curve = make_curve()
    with pytest.raises(ColumnNotFoundError, match="block"):
        charts.corp(curve.drop("block"))
    with pytest.raises(InvalidValuesError, match="several curves"):
        charts.corp(pl.concat([curve, curve]))
    with pytest.raises(InvalidValuesError, match="no rows"):
        charts.corp(curve.head(0))
    with pytest.raises(InvalidValuesError, match="one row"):
        charts.corp(
            curve, summary=pl.DataFrame({k: [0.1, 0.2] for k in ("brier", "mcb", "dsc", "unc")})
        )
    for bad in ({"bins": 0}, {"width": True}, {"max_points": 2}):
        with pytest.raises(InvalidParameterError):
            charts.corp(curve, **bad)
