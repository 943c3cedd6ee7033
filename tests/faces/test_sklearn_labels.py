"""polars_cumdev.sklearn refuses labels it cannot read (issue 37, item 4).

A mistyped ``pos_label`` ("Yes" for labels "yes"/"no") used to make every
outcome 0 and report a confident ECCE-R; NaN in ``y_true`` was answered with
"pass pos_label". Each case is refused naming the problem, and a single-class
test set still works through ``from_estimator`` (the estimator's classes count
as labels).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.linear_model import LogisticRegression

import polars_cumdev
from polars_cumdev.sklearn import CumulativeCalibrationDisplay, ecce_r_score

RNG = np.random.default_rng(37)
P = RNG.uniform(size=300)
Y = np.where(RNG.uniform(size=300) < P, "yes", "no")


def test_a_pos_label_not_among_the_labels_is_refused() -> None:
    with pytest.raises(polars_cumdev.InvalidParameterError, match=r"'Yes' is not among.*'yes'"):
        ecce_r_score(Y, P, pos_label="Yes")
    with pytest.raises(polars_cumdev.InvalidParameterError, match=r"'Yes' is not among"):
        CumulativeCalibrationDisplay.from_predictions(Y, P, pos_label="Yes")
    with pytest.raises(polars_cumdev.InvalidParameterError, match=r"'1' is not among"):
        ecce_r_score((Y == "yes").astype(int), P, pos_label="1")
    # The right label still works, and equals the 0/1 coding.
    assert ecce_r_score(Y, P, pos_label="yes") == ecce_r_score((Y == "yes").astype(int), P)


def test_nan_or_none_in_y_true_is_named() -> None:
    y = (Y == "yes").astype(float)
    y[7] = np.nan
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"NaN.*row 7"):
        ecce_r_score(y, P)
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"NaN.*row 7"):
        ecce_r_score(y, P, pos_label=1.0)
    labels = Y.astype(object)
    labels[3] = None
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"missing.*row 3"):
        CumulativeCalibrationDisplay.from_predictions(labels, P, pos_label="yes")


def test_more_than_two_labels_are_refused() -> None:
    with pytest.raises(polars_cumdev.InvalidValuesError, match="3 labels"):
        ecce_r_score(np.arange(300) % 3, P, pos_label=1)


def test_a_single_class_test_set_through_the_estimator() -> None:
    x = P[:, None]
    model = LogisticRegression().fit(x, Y)
    only_no = Y == "no"
    display = CumulativeCalibrationDisplay.from_estimator(model, x[only_no], Y[only_no])
    assert display.statistics_.item(0, "n") == only_no.sum()
