"""Issue 37, item 11: a CumdevError naming the problem where a raw traceback came out.

Each case raised a Polars, scikit-learn, Dask or Python exception on main (said
per test). scikit-learn's own conventional exceptions stay as they are (an
unfitted estimator's NotFittedError), as docs/workflows/scikit-learn-and-pandas.md says.
"""

from __future__ import annotations

import inspect
from datetime import datetime, timedelta

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev import binned, compare, corp, drift, paired, report, subpopulation
from polars_cumdev import calibration as cal
from polars_cumdev.errors import CumdevError, InvalidParameterError
from polars_cumdev.multicalibration import api as multicalibration_api
from polars_cumdev.namespace import CumdevFrame, CumdevLazyFrame


def _binary(n: int = 300, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    return pl.DataFrame(
        {"a": rng.integers(0, 3, n), "p": p, "y": (rng.random(n) < p).astype(float)}
    )


def test_segments_without_features_is_refused():
    """On main: segments() was accepted, and multicalibration then raised Polars'
    OutOfBoundsError ("gather indices are out of bounds")."""
    with pytest.raises(InvalidParameterError, match="at least one feature"):
        _binary().cumdev.multicalibration("p", "y", segments=pc.segments())
    with pytest.raises(InvalidParameterError, match="at least one feature"):
        pc.segments(categorical=[], numerical=None, depth=0)


@pytest.mark.parametrize("kind", ["top-label", "class-wise"])
@pytest.mark.parametrize("dtype", [pl.UInt64, pl.Int128])
def test_multiclass_labels_beyond_int64(kind, dtype):
    """On main: UInt64 labels from 2^63 raised Polars' InvalidOperationError (a
    strict cast to Int64); now they are labels that match no class."""
    rng = np.random.default_rng(1)
    probs = rng.dirichlet([1, 1, 1], 200)
    frame = pl.DataFrame(
        {
            "label": pl.Series([2**63 + int(k) for k in rng.integers(0, 3, 200)], dtype=dtype),
            **{f"p{c}": probs[:, c] for c in range(3)},
        }
    )
    with pytest.raises(CumdevError, match=r"response column 'label' has 200 label\(s\).*no class"):
        frame.cumdev.calibration(["p0", "p1", "p2"], "label", kind=kind)
    small = frame.with_columns(pl.Series("label", rng.integers(0, 3, 200), dtype=dtype))
    assert small.cumdev.calibration(["p0", "p1", "p2"], "label", kind=kind).height >= 1


def test_scorer_needs_predict_proba():
    """On main: AttributeError ("LinearSVC has none of the following attributes:
    predict_proba") from inside scikit-learn; an unfitted classifier raised
    AttributeError 'classes_' and now raises scikit-learn's NotFittedError."""
    pytest.importorskip("sklearn")
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.svm import LinearSVC

    from polars_cumdev.sklearn import ecce_r_score, ecce_r_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))  # noqa: N806
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    for model in (LinearSVC().fit(X, y), LinearRegression().fit(X, y)):
        with pytest.raises(InvalidParameterError, match="not a classifier with predict_proba"):
            ecce_r_scorer(model, X, y)
    with pytest.raises(NotFittedError):
        ecce_r_scorer(LogisticRegression(), X, y)
    fitted = LogisticRegression().fit(X, y)
    expected = -ecce_r_score(y, fitted.predict_proba(X)[:, 1])
    assert ecce_r_scorer(fitted, X, y) == expected
    assert repr(ecce_r_scorer).startswith("make_scorer(ecce_r_score")


@pytest.mark.parametrize("scheduler", ["synchronous", "threads", "localhost"])
def test_dask_scheduler_names(scheduler):
    """On main: scheduler="synchronous" raised ValueError "missing port number in
    address" from distributed (Dask's local schedulers are not addresses)."""
    pytest.importorskip("distributed")
    import polars_cumdev.dask as cluster

    with pytest.raises(InvalidParameterError, match=f"`scheduler`='{scheduler}'"):
        cluster.screen(_binary().to_pandas(), "a", "p", "y", scheduler=scheduler)


_FUNCTIONS = {
    "calibration": cal.calibration,
    "calibration_curve": cal.calibration_curve,
    "calibration_drift": drift.calibration_drift,
    "compare": compare.compare,
    "compare_all": compare.compare_all,
    "compare_curve": compare.compare_curve,
    "corp": corp.corp,
    "corp_curve": corp.corp_curve,
    "curve": subpopulation.curve,
    "screen": subpopulation.screen,
    "ece": binned.ece,
    "ece_sweep": binned.ece_sweep,
    "reliability": binned.reliability,
    "multicalibration": multicalibration_api.multicalibration,
    "paired": paired.paired,
    "paired_curve": paired.paired_curve,
    "report": report.report,
}


@pytest.mark.parametrize("namespace", [CumdevFrame, CumdevLazyFrame])
@pytest.mark.parametrize("name", list(_FUNCTIONS))
def test_namespace_takes_what_the_function_takes(namespace, name):
    """On main: df.cumdev.calibration_drift(engine=...) raised TypeError while
    drift.calibration_drift takes engine. Every method takes its function's
    arguments, by the same names and defaults."""
    function = inspect.signature(_FUNCTIONS[name]).parameters
    method = inspect.signature(getattr(namespace, name)).parameters
    for argument, parameter in function.items():
        if argument == "frame" or argument.startswith("_"):
            continue  # private switches (e.g. _finite_sample) are the function's own
        assert argument in method, (name, argument)
        assert method[argument].default == parameter.default, (name, argument)


@pytest.mark.slow
def test_calibration_drift_engine_through_the_namespace():
    rng = np.random.default_rng(3)
    start = datetime(2024, 1, 1)
    frame = _binary(400).with_columns(
        pl.Series("t", [start + timedelta(days=int(d)) for d in rng.integers(0, 28, 400)])
    )
    for engine in ("polars", "kernel"):
        method = frame.cumdev.calibration_drift("p", "y", time="t", engine=engine)
        function = drift.calibration_drift(frame, "p", "y", time="t", engine=engine)
        assert method.equals(function)


def test_pandas_mixed_column_is_named():
    """On main: "'int' object is not an instance of 'str'", no column named."""
    pd = pytest.importorskip("pandas")
    frame = _binary(50).to_pandas()
    frame["g"] = ["a", 1] * 25
    with pytest.raises(InvalidParameterError, match=r"column 'g' \(object\) mixes.*'int', 'str'"):
        pc.screen(frame, "g", "p", "y")
    assert isinstance(frame, pd.DataFrame)


@pytest.mark.parametrize("column", ["p", "y"])
def test_pandas_nan_is_called_nan(column):
    """On main: a pandas NaN became a null, and the message spoke of a "null value"."""
    pytest.importorskip("pandas")
    frame = _binary(50).to_pandas()
    frame.loc[3, column] = np.nan
    with pytest.raises(CumdevError, match=f"column '{column}' has 1 NaN value"):
        pc.screen(frame.assign(g=frame["a"]), "g", "p", "y")
    with pytest.raises(CumdevError, match=f"column '{column}' has 1 NaN value"):
        cal.calibration(frame, "p", "y")
