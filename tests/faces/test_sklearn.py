"""polars_cumdev.sklearn (issue 24, item 3): the Display, the metric and the scorer.

With a real scikit-learn pipeline (standardize, then logistic regression) on
scikit-learn's bundled breast-cancer data: the scorer inside cross_val_score
and GridSearchCV equals minus the ECCE-R of :func:`polars_cumdev.calibration`
computed fold by fold, sample weights routed by metadata routing change it
exactly as weighting the calibration does, and the Display holds the same
frames as the package's functions.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import make_scorer  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import polars_cumdev  # noqa: E402
from polars_cumdev.calibration import calibration, calibration_curve  # noqa: E402
from polars_cumdev.sklearn import (  # noqa: E402
    CumulativeCalibrationDisplay,
    ecce_r_score,
    ecce_r_scorer,
)

CV = KFold(n_splits=4, shuffle=True, random_state=0)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = load_breast_cancer(return_X_y=True)
    weight = np.random.default_rng(0).lognormal(0.0, 1.0, size=y.size)
    return x, y, weight


def pipeline(c: float = 1.0):
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))


def by_hand(x, y, weight=None, c: float = 1.0) -> list[float]:
    """Minus the package's ECCE-R of each fold's held-out probabilities."""
    out = []
    for train, test in CV.split(x, y):
        model = clone(pipeline(c)).fit(x[train], y[train])
        frame = pl.DataFrame({"p": model.predict_proba(x[test])[:, 1], "y": y[test]})
        w = None
        if weight is not None:
            frame = frame.with_columns(w=weight[test])
            w = "w"
        out.append(-calibration(frame, "p", "y", w).item(0, "ecce_r"))
    return out


@pytest.mark.slow
def test_scorer_in_cross_val_score_is_minus_the_ecce_r(data) -> None:
    x, y, _ = data
    got = cross_val_score(pipeline(), x, y, scoring=ecce_r_scorer, cv=CV)
    want = by_hand(x, y)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert (got < 0).all()


@pytest.mark.slow
def test_sample_weights_are_routed_to_the_scorer(data) -> None:
    x, y, weight = data
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer(
            ecce_r_score, greater_is_better=False, response_method="predict_proba"
        ).set_score_request(sample_weight=True)
        model = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=False),
            LogisticRegression(max_iter=2000).set_fit_request(sample_weight=False),
        )
        got = cross_val_score(model, x, y, scoring=scorer, cv=CV, params={"sample_weight": weight})
    weighted, unweighted = by_hand(x, y, weight), by_hand(x, y)
    np.testing.assert_allclose(got, weighted, rtol=1e-12)
    assert np.abs(np.asarray(weighted) - np.asarray(unweighted)).max() > 1e-4


@pytest.mark.slow
def test_scorer_called_directly_takes_sample_weight(data) -> None:
    x, y, weight = data
    model = pipeline().fit(x, y)
    p = model.predict_proba(x)[:, 1]
    frame = pl.DataFrame({"p": p, "y": y, "w": weight})
    want = calibration(frame, "p", "y", "w").item(0, "ecce_r")
    assert ecce_r_scorer(model, x, y, sample_weight=weight) == pytest.approx(-want, rel=1e-12)
    # Doubling every weight changes nothing; weighting a few rows heavily does.
    assert ecce_r_score(y, p, sample_weight=2 * weight) == pytest.approx(want, rel=1e-12)
    assert ecce_r_score(y, p) != pytest.approx(want, rel=1e-3)


@pytest.mark.slow
def test_grid_search_ranks_by_the_scorer(data) -> None:
    x, y, _ = data
    grid = GridSearchCV(
        pipeline(), {"logisticregression__C": [0.01, 1.0]}, scoring=ecce_r_scorer, cv=CV
    ).fit(x, y)
    means = grid.cv_results_["mean_test_score"]
    for c, mean in zip([0.01, 1.0], means, strict=True):
        assert mean == pytest.approx(np.mean(by_hand(x, y, c=c)), rel=1e-12)
    assert grid.best_params_["logisticregression__C"] == [0.01, 1.0][int(np.argmax(means))]


@pytest.mark.slow
def test_display_from_estimator_holds_the_package_frames(data) -> None:
    x, y, weight = data
    model = pipeline().fit(x[::2], y[::2])
    display = CumulativeCalibrationDisplay.from_estimator(
        model, x[1::2], y[1::2], sample_weight=weight[1::2]
    )
    frame = pl.DataFrame({"p": model.predict_proba(x[1::2])[:, 1], "y": y[1::2], "w": weight[1::2]})
    assert display.curve_.equals(calibration_curve(frame, "p", "y", "w"))
    assert display.statistics_.equals(calibration(frame, "p", "y", "w"))
    assert display.estimator_name == "Pipeline"
    chart = display.plot(band=0.05)
    spec = chart.to_dict()
    assert display.chart_ is chart
    assert "Pipeline" in str(spec["title"])


def test_display_from_predictions_with_string_labels() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(size=400)
    y = np.where(rng.uniform(size=400) < p, "spam", "ham")
    display = CumulativeCalibrationDisplay.from_predictions(y, p, pos_label="spam")
    frame = pl.DataFrame({"p": p, "y": (y == "spam").astype(np.int64)})
    assert display.statistics_.equals(calibration(frame, "p", "y"))
    with pytest.raises(polars_cumdev.CumdevError, match="pos_label"):
        CumulativeCalibrationDisplay.from_predictions(y, p)
    # Flipping the positive class mirrors the probabilities: the same ECCE-R.
    flipped = ecce_r_score(y, 1 - p, pos_label="ham")
    assert flipped == pytest.approx(display.statistics_.item(0, "ecce_r"), rel=1e-9)


@pytest.mark.slow
def test_bad_inputs_are_refused_clearly(data) -> None:
    x, y, _ = data
    with pytest.raises(polars_cumdev.InvalidValuesError, match="outside"):
        ecce_r_score([0, 1, 1], [0.2, 1.3, 0.5])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ecce_r_score([0, 1, 1], [0.2, 0.5])
    with pytest.raises(polars_cumdev.CumdevError, match="binary"):
        iris_y = np.arange(30) % 3
        CumulativeCalibrationDisplay.from_estimator(
            LogisticRegression().fit(x[:30, :3], iris_y), x[:30, :3], iris_y
        )
    with pytest.raises(polars_cumdev.CumdevError, match="classifier"):
        CumulativeCalibrationDisplay.from_estimator(StandardScaler().fit(x), x, y)
