"""``polars_cumdev.sklearn.RecalibratedClassifier`` (issue 38): a fitted model, recalibrated."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import Pipeline

import polars_cumdev as pc
from polars_cumdev.sklearn import RecalibratedClassifier


def _rows(n: int, seed: int) -> pl.DataFrame:
    """The outcome depends on x and (+1.2 in log-odds) on group g = 1, which the model ignores."""
    rng = np.random.default_rng(seed)
    x, g = rng.normal(size=n), rng.integers(0, 3, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(x + 1.2 * (g == 1) - 0.4)))).astype(np.int64)
    return pl.DataFrame({"x": x, "g": g, "y": y})


class OnlyX(LogisticRegression):
    """A logistic regression that sees column x only (so it misses the group)."""

    def fit(self, X, y, sample_weight=None):  # noqa: N803
        return super().fit(X[["x"]].to_numpy(), y, sample_weight)

    def predict_proba(self, X):  # noqa: N803
        return super().predict_proba(X[["x"]].to_numpy())


@pytest.fixture(scope="module")
def model():
    train = _rows(4000, 1)
    return OnlyX().fit(train.drop("y"), train["y"])


@pytest.mark.slow
def test_recalibrated_classifier_corrects_the_missed_group(model):
    calibration, test = _rows(6000, 2), _rows(6000, 3)
    wrapped = RecalibratedClassifier(model, pc.segments(["g"], depth=1))
    wrapped.fit(calibration.drop("y"), calibration["y"])
    assert next(c.condition for c in wrapped.fix_.corrections) == '"g" = 1'
    before = model.predict_proba(test.drop("y"))
    after = wrapped.predict_proba(test.drop("y"))
    assert after.shape == (6000, 2) and np.allclose(after.sum(axis=1), 1.0)
    assert log_loss(test["y"], after) < log_loss(test["y"], before)
    assert set(wrapped.predict(test.drop("y")).tolist()) <= {0, 1}
    # in a pipeline (cloned: the fitted model is kept by scikit-learn's FrozenEstimator)
    frozen = RecalibratedClassifier(FrozenEstimator(model), pc.segments(["g"], depth=1))
    piped = Pipeline([("recalibrated", clone(frozen))])
    piped.fit(calibration.drop("y"), calibration["y"])
    assert np.array_equal(piped.predict_proba(test.drop("y")), after)


def test_weights_and_errors(model):
    calibration = _rows(3000, 4)
    wrapped = RecalibratedClassifier(model, pc.segments(["g"], depth=1))
    wrapped.fit(calibration.drop("y"), calibration["y"], sample_weight=np.ones(3000))
    with pytest.raises(NotFittedError, match="fit it first"):
        RecalibratedClassifier(OnlyX()).fit(calibration.drop("y"), calibration["y"])
    with pytest.raises(pc.CumdevError, match="unknown"):
        wrapped.fit(calibration.drop("y"), calibration["y"] + 5)
