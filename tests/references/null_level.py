"""Sizing null-level checks so that they can fail (issue 36, "Tests and speed").

A null simulation counts the data sets (or families) in which a test rejects
at level ``level``. The check passes when the count is at most a bound b. The
bound is the smallest count whose one-sided binomial tail at the level itself
is at most ``false_fail`` (a correct test then fails the check with
probability at most 0.1%), and the number of data sets is chosen so that a
test whose true rate is 1.5 times the level exceeds b with probability at
least 0.9 (:func:`power`). Each test states its size, bound and both chances
in its docstring, computed by the functions here.
"""

from __future__ import annotations

from scipy import stats

FALSE_FAIL = 1e-3


def bound(n: int, level: float, false_fail: float = FALSE_FAIL) -> int:
    """The largest rejection count a correct level-``level`` test passes with (of ``n``)."""
    b = int(stats.binom.ppf(1.0 - false_fail, n, level))
    while stats.binom.sf(b, n, level) > false_fail:
        b += 1
    return b


def false_fail(n: int, level: float) -> float:
    """P(count > bound) when the true rate is the level."""
    return float(stats.binom.sf(bound(n, level), n, level))


def power(n: int, level: float, rate: float) -> float:
    """P(count > bound) when the true rate is ``rate``: the chance that the check fails."""
    return float(stats.binom.sf(bound(n, level), n, rate))


def check(rejections: int, n: int, level: float) -> None:
    """Assert the count of rejections is within the bound, with a message giving the rate."""
    b = bound(n, level)
    assert rejections <= b, (
        f"{rejections} rejections of {n} ({rejections / n:.4f}) at level {level}: "
        f"above the bound {b} ({b / n:.4f})"
    )


def rejects(rejections: int, n: int, level: float) -> bool:
    """Whether the check of :func:`check` fails on this count."""
    return rejections > bound(n, level)
