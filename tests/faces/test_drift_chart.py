"""charts.drift: the drift chart drawn from hand-made per-window frames."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest
import vl_convert

import polars_cumdev
from polars_cumdev.charts import drift


def windows(z: list[float], critical: list[float], flagged: list[bool], adjustment: str):
    starts = [dt.datetime(2024, 1, 1) + dt.timedelta(weeks=k) for k in range(len(z))]
    return pl.DataFrame(
        {
            "week": starts,
            "n": [500] * len(z),
            "ecce_r_z": z,
            "critical_z": critical,
            "fw_p": [0.001 if f else 1.0 for f in flagged],
            "flagged": flagged,
            "alpha": [0.05] * len(z),
            "adjustment": [adjustment] * len(z),
        }
    )


def layers(chart) -> dict[str, dict]:
    spec = chart.to_dict()
    return {layer["name"]: layer for layer in spec["layer"]}, spec


def data_of(spec: dict, layer: dict) -> list[dict]:
    return spec["datasets"][layer["data"]["name"]]


@pytest.mark.slow
def test_flagged_windows_are_named_and_the_line_is_the_strictest_threshold() -> None:
    frame = windows([1.0, 5.2, 3.1, 1.4], [2.9, 3.3, 3.1, 2.6], [False, True, True, False], "holm")
    chart = drift(frame)
    named, spec = layers(chart)
    assert data_of(spec, named["critical_line"]) == [{"critical": 3.3}]
    texts = [row["window"] for row in data_of(spec, named["flagged_names"])]
    assert texts == ["2024-01-08", "2024-01-15"]
    assert "holm_thresholds" in named
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "flagged (2): 2024-01-08, 2024-01-15" in subtitle and "Holm" in subtitle
    assert "critical z = 3.300 (level 0.05 / 4)" in subtitle
    vl_convert.vegalite_to_svg(json.dumps(spec))  # a valid Vega-Lite spec


def test_nothing_flagged_says_so_and_names_nothing() -> None:
    frame = windows([1.0, 2.0, 1.5], [3.0, 3.0, 3.0], [False] * 3, "bonferroni")
    named, spec = layers(drift(frame.lazy()))
    assert "flagged_names" not in named and "holm_thresholds" not in named
    assert "no window flagged" in " ".join(spec["title"]["subtitle"])
    vl_convert.vegalite_to_svg(json.dumps(spec))


def test_times_of_day_are_kept_in_names() -> None:
    frame = windows([4.0, 1.0], [3.0, 2.5], [True, False], "holm").with_columns(
        pl.col("week") + pl.duration(hours=6)
    )
    named, spec = layers(drift(frame, time="week"))
    assert data_of(spec, named["flagged_names"])[0]["window"] == "2024-01-01 06:00"


def test_bad_frames_are_refused() -> None:
    frame = windows([1.0, 2.0], [3.0, 3.0], [False, False], "holm")
    with pytest.raises(polars_cumdev.CumdevError, match="several rows per window"):
        drift(pl.concat([frame, frame]))
    with pytest.raises(polars_cumdev.ColumnNotFoundError, match="critical_z"):
        drift(frame.drop("critical_z"))
    with pytest.raises(polars_cumdev.CumdevError, match="2 date/time columns"):
        drift(frame.with_columns(other=pl.col("week")))
    with pytest.raises(polars_cumdev.CumdevError, match="neither"):
        drift(frame.drop("ecce_r_z"))
