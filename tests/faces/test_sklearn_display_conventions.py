"""The scikit-learn display in scikit-learn's conventions (issue 40, item 3).

``name=`` labels the model, displays add up to one chart of several models
(``display_a + display_b``), ``kind=`` draws multiclass estimators,
``pos_label=`` picks the positive class, and ``ax=`` draws into a matplotlib
Axes (matplotlib imported only then; a clear error without it).
"""

from __future__ import annotations

import sys

import altair as alt
import numpy as np
import polars as pl
import pytest

pytest.importorskip("sklearn")

from sklearn.linear_model import LogisticRegression

import polars_cumdev
from polars_cumdev import charts
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.sklearn import (
    CumulativeCalibrationDisplay,
    CumulativeCalibrationDisplays,
)


def _binary(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p).astype(np.int64), p


def _three(seed: int = 5, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), size=n)
    labels = np.array([rng.choice(3, p=row) for row in proba])
    return labels, proba


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_two_models_on_one_chart_named_in_the_legend(tmp_path) -> None:
    y, p = _binary(0)
    a = CumulativeCalibrationDisplay.from_predictions(y, p, name="model A")
    b = CumulativeCalibrationDisplay.from_predictions(y, np.clip(p * 1.3, 0, 1), name="model B")
    both = a + b
    assert isinstance(both, CumulativeCalibrationDisplays)
    chart = both.plot()
    spec = chart.to_dict()
    assert spec["layer"][-1]["encoding"]["color"]["scale"]["domain"] == ["model A", "model B"]
    subtitle = " ".join(spec["title"]["subtitle"])
    for name, display in (("model A", a), ("model B", b)):
        assert f"{name}: ECCE-R {display.statistics_.item(0, 'ecce_r'):.4g}" in subtitle
    charts.save(chart | a.plot(), tmp_path / "both.svg")
    with pytest.raises(polars_cumdev.InvalidParameterError, match="name="):
        (a + a).plot()


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
def test_multiclass_estimators_through_kind() -> None:
    labels, proba = _three()
    frame = pl.DataFrame({"p": proba, "label": labels})
    for kind in ("top-label", "class-wise"):
        display = CumulativeCalibrationDisplay.from_predictions(labels, proba, kind=kind)
        assert display.statistics_.equals(calibration(frame, "p", "label", kind=kind))
        assert display.curve_.equals(calibration_curve(frame, "p", "label", kind=kind))
        assert isinstance(display.plot(), alt.TopLevelMixin)
    x = np.random.default_rng(1).normal(size=(400, 2)) + labels[:, None]
    model = LogisticRegression().fit(x, labels)
    with pytest.raises(polars_cumdev.InvalidParameterError, match="kind="):
        CumulativeCalibrationDisplay.from_estimator(model, x, labels)
    top = CumulativeCalibrationDisplay.from_estimator(model, x, labels, kind="top-label")
    frame = pl.DataFrame({"p": model.predict_proba(x), "label": labels})
    assert top.statistics_.equals(calibration(frame, "p", "label", kind="top-label"))
    assert top.estimator_name == "LogisticRegression"


def test_pos_label_picks_the_positive_class() -> None:
    y, p = _binary(2)
    labels = np.where(y == 1, "spam", "ham")
    x = np.column_stack([p, np.random.default_rng(3).normal(size=p.size)])
    model = LogisticRegression().fit(x, labels)
    ham = CumulativeCalibrationDisplay.from_estimator(model, x, labels, pos_label="ham")
    frame = pl.DataFrame(
        {"p": model.predict_proba(x)[:, 0], "y": (labels == "ham").astype(np.int64)}
    )
    assert ham.statistics_.equals(calibration(frame, "p", "y"))
    with pytest.raises(polars_cumdev.InvalidParameterError, match="pos_label"):
        CumulativeCalibrationDisplay.from_predictions(*_three(), kind="top-label", pos_label=1)


def test_ax_without_matplotlib_is_a_clear_error(monkeypatch) -> None:
    y, p = _binary(4)
    display = CumulativeCalibrationDisplay.from_predictions(y, p, name="m")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.axes", None)
    with pytest.raises(polars_cumdev.InvalidParameterError, match="matplotlib is not installed"):
        display.plot(ax=object())


@pytest.mark.slow
def test_ax_that_is_not_an_axes_points_to_adding_displays() -> None:
    pytest.importorskip("matplotlib")
    y, p = _binary(4)
    display = CumulativeCalibrationDisplay.from_predictions(y, p, name="m")
    with pytest.raises(polars_cumdev.InvalidParameterError, match="display_a \\+ display_b"):
        display.plot(ax=display.plot())


def test_ax_draws_into_a_matplotlib_axes() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y, p = _binary(6)
    a = CumulativeCalibrationDisplay.from_predictions(y, p, name="A")
    b = CumulativeCalibrationDisplay.from_predictions(y, p**1.5, name="B")
    fig, ax = plt.subplots()
    try:
        assert a.plot(ax=ax) is a
        b.plot(ax=a.ax_)
        assert a.figure_ is fig and b.ax_ is ax
        assert [line.get_label() for line in (a.line_, b.line_)] == ["A", "B"]
        np.testing.assert_array_equal(a.line_.get_ydata(), a.curve_["cumdiff"].to_numpy())
        np.testing.assert_array_equal(b.line_.get_xdata(), b.curve_["a"].to_numpy())
        both = (a + b).plot(ax=plt.subplots()[1])
        assert len(both.displays) == 2
    finally:
        plt.close("all")
