"""A deployed model's predictions week by week, with calibration drift planted in one week."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

__all__ = ["FIRST_WEEK", "weekly_predictions"]

#: Monday 1 January 2024, the start of the first week (``dt.truncate("1w")`` starts weeks
#: on Mondays, so every planted week is one window of ``by=pl.col("ts").dt.truncate("1w")``).
FIRST_WEEK = dt.datetime(2024, 1, 1)
_WEEK_SECONDS = 7 * 24 * 3600


def _check_count(value: object, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"`{what}` must be an int >= {low}, got {value!r}")
    return int(value)


def weekly_predictions(
    weeks: int = 12,
    per_week: int = 2000,
    *,
    drift_week: int | None = 8,
    shift: float = 0.3,
    seed: int = 0,
) -> pl.DataFrame:
    """Predicted probabilities of a model in service, with the outcomes seen, week by week.

    Parameters
    ----------
    weeks
        Number of weeks, starting on Monday 1 January 2024 (:data:`FIRST_WEEK`).
    per_week
        Predictions per week.
    drift_week
        The week (0-based) in which the model is miscalibrated; ``None`` for
        a model calibrated every week.
    shift
        Size of the drift on the log-odds scale: in ``drift_week`` the true
        log-odds are the predicted log-odds plus ``shift`` (the model
        under-predicts, most where the scores are near 1/2).
    seed
        Seed of the generator.

    Returns
    -------
    pl.DataFrame
        ``ts`` (the time of the prediction, uniform within its week,
        microseconds), ``score`` (the predicted probability), ``response``
        (the 0/1 outcome), ``expected`` (the true probability) and ``week``
        (0-based, for checking; a monitor finds the weeks from ``ts``).
        Sorted by ``ts``.

    Notes
    -----
    Scores are Beta(2, 3) draws; outside ``drift_week`` the true
    probability equals the score, so any window flagged there is a false
    alarm. Responses are Bernoulli(expected).
    """
    weeks = _check_count(weeks, "weeks", 1)
    per_week = _check_count(per_week, "per_week", 2)
    if drift_week is not None and not 0 <= _check_count(drift_week, "drift_week", 0) < weeks:
        raise ValueError(f"`drift_week` must be in [0, {weeks}), got {drift_week!r}")
    rng = np.random.default_rng(seed)
    n = weeks * per_week
    week = np.repeat(np.arange(weeks), per_week)
    seconds = week * _WEEK_SECONDS + rng.integers(0, _WEEK_SECONDS, size=n)
    score = rng.beta(2.0, 3.0, size=n)
    logit = np.log(score) - np.log1p(-score)
    drifted = week == drift_week if drift_week is not None else np.zeros(n, dtype=bool)
    expected = np.where(drifted, 1.0 / (1.0 + np.exp(-(logit + shift))), score)
    response = (rng.uniform(size=n) < expected).astype(np.int64)
    ts = np.datetime64(FIRST_WEEK, "us") + seconds.astype("timedelta64[s]")
    frame = pl.DataFrame(
        {"ts": ts, "score": score, "response": response, "expected": expected, "week": week}
    )
    return frame.sort("ts")
