"""charts.calibration_classes: one cumulative calibration plot per class, exportable."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev
from polars_cumdev import charts


def curves() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    p = rng.dirichlet([2.0, 2.0, 2.0], size=800).round(2)
    p /= p.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(3, p=row) for row in p])
    frame = pl.DataFrame({"a": p[:, 0], "b": p[:, 1], "c": p[:, 2], "y": labels})
    return frame.cumdev.calibration_curve(["a", "b", "c"], "y", kind="class-wise")


@pytest.mark.slow
def test_one_chart_per_class_renders_to_svg() -> None:
    chart = charts.calibration_classes(curves(), band=0.05)
    spec = chart.to_dict()
    assert len(spec["hconcat"]) == 3
    # A cumulative plot's title is a list of lines, wrapped to fit the chart's width.
    titles = [" ".join(part["title"]["text"]) for part in spec["hconcat"]]
    assert [t.split(":")[0] for t in titles] == ["class a", "class b", "class c"]
    import vl_convert

    svg = vl_convert.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "probability of b" in svg


def test_a_frame_without_classes_is_refused() -> None:
    plain = curves().drop("class")
    with pytest.raises(polars_cumdev.ColumnNotFoundError, match="class"):
        charts.calibration_classes(plain)
