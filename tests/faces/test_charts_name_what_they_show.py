"""Charts say what they show (issue 40, item 4).

* the drift chart's time axis is ticked at the windows' starts (weekly
  windows start on Mondays; Vega's own weekly ticks fell on Sundays, so the
  flagged week's point sat above "2024-02-25" while the window is 2024-02-26);
* the cumulative chart of a quantile's calibration names the quantile's level;
* the funnel chart has a legend for its colours (the depth).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.datasets import census_scored, weekly_predictions
from polars_cumdev.drift import calibration_drift


def _texts(svg: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", svg)


@pytest.mark.slow
def test_drift_ticks_fall_on_the_windows_starts(tmp_path: Path) -> None:
    table = calibration_drift(weekly_predictions(seed=0), "score", "response", time="ts")
    starts = {str(t.date()) for t in table.get_column("ts").to_list()}
    assert {date.fromisoformat(s).weekday() for s in starts} == {0}  # Mondays
    svg = charts.save(charts.drift(table), tmp_path / "drift.svg").read_text(encoding="utf-8")
    dates = [t for t in _texts(svg) if re.fullmatch(r"\d{4}-\d\d-\d\d", t)]
    assert len(set(dates)) >= 4
    assert set(dates) <= starts, sorted(set(dates) - starts)
    flagged = table.filter(pl.col("flagged")).get_column("ts").dt.strftime("%Y-%m-%d").to_list()
    assert flagged and set(flagged) <= set(dates)


@pytest.mark.slow
def test_drift_ticks_thin_out_when_windows_crowd(tmp_path: Path) -> None:
    table = calibration_drift(
        weekly_predictions(weeks=60, per_week=50, drift_week=None), "score", "response", time="ts"
    )
    svg = charts.save(charts.drift(table, width=400), tmp_path / "d.svg").read_text("utf-8")
    dates = [t for t in _texts(svg) if re.fullmatch(r"\d{4}-\d\d-\d\d", t)]
    starts = set(table.get_column("ts").dt.strftime("%Y-%m-%d").to_list())
    assert 3 <= len(dates) <= 8
    assert set(dates) <= starts


@pytest.mark.slow
def test_quantile_chart_names_its_level() -> None:
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({"q": rng.normal(size=300), "y": rng.normal(size=300)})
    curve = frame.cumdev.calibration_curve("q", "y", target="quantile", alpha=0.9)
    title = " ".join(charts.cumulative(curve, kind="calibration").to_dict()["title"]["text"])
    assert "0.9-quantile" in title
    probabilities = pl.DataFrame({"p": rng.uniform(size=300), "y": rng.integers(0, 2, 300)})
    curve = probabilities.cumdev.calibration_curve("p", "y")
    title = " ".join(charts.cumulative(curve, kind="calibration").to_dict()["title"]["text"])
    assert "quantile" not in title


@pytest.mark.slow
def test_funnel_has_a_depth_legend(tmp_path: Path) -> None:
    family = pc.segments(["county"], ["vehicles"], depth=1)
    table = (
        census_scored()
        .head(3000)
        .cumdev.multicalibration("score", "has_internet", "WGTP", segments=family)
    )
    svg = charts.save(charts.funnel(table), tmp_path / "f.svg").read_text(encoding="utf-8")
    assert 'class="mark-group role-legend"' in svg
    texts = _texts(svg)
    assert "depth" in texts and "0" in texts and "1" in texts


@pytest.mark.slow
def test_ece_sweep_chart_names_its_weighting() -> None:
    from polars_cumdev.datasets import calibration_oscillating

    frame = calibration_oscillating(n=400)
    for weighting, words in (("width", "by their width"), ("count", "by their count")):
        sweep = frame.cumdev.ece_sweep("score", "response", weighting=weighting)
        subtitle = " ".join(charts.ece_sweep(sweep).to_dict()["title"]["subtitle"])
        assert words in subtitle
