"""One overall calibration of a frame in memory, without a plan (issue 40, item 7).

``calibration(frame, ...)`` of a small DataFrame with ``engine="auto"`` and
no ``by`` runs the Polars stages' arithmetic on NumPy arrays read once, then
the one normalization every analysis shares
(:func:`polars_cumdev.method.statistics.normalize`: notes, resolution, p-
and q-values, the decision) on the one-row summary, handed over as a DataFrame
(normalize then calls its two Python functions, the finiteness check and the
p-values, directly on it, and collects its other steps without the optimizer).
The lazy plan of
:func:`polars_cumdev.calibration.cumulative.calibration` builds and
optimizes some 130 nodes and runs about a dozen Python functions inside
them, a fixed cost of about 15 ms whatever the number of rows, which is five
times scikit-learn's ``calibration_curve`` + ``brier_score_loss`` at 10,000
rows (``benchmarks/small_calibration.py``).

The numbers are the plan's, bit for bit (``tests/analyses/test_calibration_in_memory.py``):
the same checks (:func:`polars_cumdev.method.checks.counted`, its query running
while the arrays are sorted; the numbers are used only once they pass), the rows in
the canonical order (:func:`polars_cumdev.method.numpy_order.canonical_sort`),
the ties merged by the plan's own sums
(:func:`polars_cumdev.method.ties.tie_points`), then the accumulation and the
summary of :func:`polars_cumdev.method.accumulate.accumulate`,
:meth:`~polars_cumdev.calibration.targets.Target.with_term` and
:func:`polars_cumdev.method.statistics.summarize` as running sums in row
order (Polars' ``cum_sum`` adds in row order, as ``np.cumsum`` does; the
``ordered_sum`` of a column is the last running sum), and the located stretch
by the plan's search (:func:`polars_cumdev.method.location.located`), run
only where the p-value can pass (:func:`polars_cumdev.method.location.searched`,
as the compiled engine does). Finite-sample p-values are computed only when
the summary is a candidate (:func:`polars_cumdev.method.finite_groups.any_candidate`).
Where those formulas meet known values (a weight of 2^-e in every row, a tie
factor of 1 where no score repeats), the same numbers come without the arrays
that would hold them: each new array of 134,094 doubles costs its pages' faults.
"""

from __future__ import annotations

import threading

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import counted
from polars_cumdev.method.findings import check_level
from polars_cumdev.method.finite_groups import SIMULATED, any_candidate, with_simulated
from polars_cumdev.method.location import located, searched
from polars_cumdev.method.node_columns import numbers
from polars_cumdev.method.numpy_order import Sorted, canonical_sort
from polars_cumdev.method.prepare import Prepared
from polars_cumdev.method.summary_columns import (
    C_ERROR,
    FACTS_SCHEMA,
    OVERFLOWS,
    RMAX,
    SIGMA_B,
    SIGMA_B_ERROR,
    SIGMA_E,
    SIGMA_E_ERROR,
    SUMMARY_SCHEMA,
)
from polars_cumdev.method.ties import tie_points
from polars_cumdev.method.weights import scale_factor

__all__ = ["overall_summary"]


def _columns(frame: pl.DataFrame, prepared: Prepared) -> tuple[np.ndarray, ...]:
    """The score (without -0.0), weight (None without) and response as float64, as they are
    (not yet checked): the arguments of :func:`canonical_sort`."""
    score, response, weight = prepared.names
    # (as the plan's standardized score: -0.0 becomes 0.0, every other value stays; one
    # pass: the others are read as they are when they are doubles already)
    s = np.add(numbers(frame.get_column(score)), 0.0, dtype=np.float64)
    r = np.asarray(numbers(frame.get_column(response)), dtype=np.float64)
    w = None if weight is None else np.asarray(numbers(frame.get_column(weight)), np.float64)
    return s, w, r


def _sorted(frame: pl.DataFrame, prepared: Prepared) -> tuple[Sorted, float]:
    """The rows in canonical order and the rescaling's 2^-e, once the plan's checks pass.

    The checks' query (:func:`polars_cumdev.method.checks.counted`, which
    also finds 2^-e) runs on Polars' threads while the arrays are read and
    sorted here (NumPy sorts without the interpreter's lock), when called on
    the main thread. Where rows the checks refuse break the sort, the check's
    error is the one raised.
    """
    weight = prepared.names[2]
    largest = pl.lit(1.0) if weight is None else pl.col(weight).cast(pl.Float64).max()
    main = threading.current_thread() is threading.main_thread()  # (see counted)
    verdict = counted(frame, prepared.checks, [scale_factor(largest)], background=main)
    try:
        ordered = canonical_sort(*_columns(frame, prepared))
    except Exception:  # (raised again below unless a check fails first)
        ordered = None
    (scale,) = verdict()
    if ordered is None:
        ordered = canonical_sort(*_columns(frame, prepared))
    return ordered, float(scale)


def overall_summary(
    frame: pl.DataFrame, prepared: Prepared, level: float, finite_sample: bool
) -> pl.DataFrame:
    """The one-row summary :func:`normalize` takes, with the columns of its ``binary`` frame.

    With the simulated p-value columns, and ``weight`` in the user's units
    (divided by the rescaling's power of two, as normalize would).
    ``prepared`` is the probability calibration's, without keys; ``frame``
    its source, in memory.
    """
    level = check_level(level)
    (_, s, w, r, first, distinct), scale = _sorted(frame, prepared)
    rows = s.shape[0]
    if w is not None:
        w *= scale
    if distinct:  # every row its own point: the merged points are the rows, each f = 1
        n, score, weight, response, tie = rows, s, w, r, None
    else:
        w = np.full(rows, scale) if w is None else w
        _, counts, points = tie_points(first, w, {nm.RESPONSE: r})
        n, score = int(counts.sum()), s[first]
        weight, response, tie = points[nm.WEIGHT], points[nm.RESPONSE], points[nm.TIE]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # The plan's expressions, in its order of operations, into few arrays (each new
        # array of 134,094 doubles costs its pages' faults again).
        if weight is None:  # every weight 2^-e: the running sums k 2^-e are exact
            running, total = None, rows * scale
        else:
            running = np.cumsum(weight)
            total = running[-1]
        inverse = 1.0 / total  # (Polars divides a column by a scalar as a product by 1 / x)
        step = scale * inverse if weight is None else weight * inverse  # (one step: W' / W)
        c = np.subtract(response, score)
        c *= step  # step * (R' - S'), the product of the same two numbers
        np.cumsum(c, out=c)
        if weight is None:
            term = np.multiply(score, step * step)  # (step**2 of an array is step * step)
        else:
            term = step**2
        if tie is not None:  # (times f = 1 leaves a number as it is)
            term *= tie
        if weight is not None:
            term *= score
        term *= np.subtract(1.0, score, out=None if weight is None else step)  # (not read again)
        sigma2 = np.cumsum(term, out=term)[-1]
        top, bottom = c.max(), c.min()
        kuiper = max(top, 0.0) - min(bottom, 0.0)
        # max |C_k|: at the largest or the smallest C_k (NaN: NumPy's own answer)
        ks = np.abs(c).max() if np.isnan(top) else max(abs(top), abs(bottom))
        sigma = np.sqrt(max(sigma2, 0.0))
        threshold = kuiper - 2.0 * sigma
    location = dict.fromkeys(("from_score", "to_score", "share", "deviation"), np.full(1, np.nan))
    if searched(*(np.array([x]) for x in (kuiper, ks, sigma, threshold)), level)[0]:
        starts = np.array([0, score.shape[0]], dtype=np.int64)
        a = (np.cumsum(np.full(rows, scale)) if running is None else running) * inverse
        location = located(starts, a, c, score, np.array([threshold]))
    with np.errstate(over="ignore"):  # (beyond the largest double: normalize's check says so)
        weight_total = total / scale  # (in the user's units: exact, a power of two)
    values = {
        "n": n,
        "n_scores": int(score.shape[0]),
        "weight": weight_total,
        "kuiper": kuiper,
        "ks": ks,
        "delta": c[-1],
        SIGMA_B: sigma2,
        SIGMA_E: None,
        C_ERROR: 0.0,
        SIGMA_B_ERROR: 0.0,
        SIGMA_E_ERROR: 0.0,
        OVERFLOWS: 0,
        **{
            name: None if np.isnan(found[0]) else float(found[0])
            for name, found in location.items()
        },
        nm.BINARY: True,  # (Bernoulli's sigma, and C's scale: responses in [0, 1])
        RMAX: 1.0,
        **dict.fromkeys(SIMULATED),  # (no finite-sample p-value unless a candidate)
    }
    schema = {**SUMMARY_SCHEMA, **FACTS_SCHEMA, **dict.fromkeys(SIMULATED, pl.Float64())}
    summary = pl.DataFrame([values], schema=schema)
    if finite_sample and any_candidate(summary, level):
        weights = np.ones(rows) if w is None else w / scale  # (2^-e / 2^-e is 1)
        points = pl.LazyFrame({nm.SCORE: s, nm.RESPONSE: r, nm.WEIGHT: weights})
        found = with_simulated(summary.drop(SIMULATED).lazy(), points, [], {}, level)
        summary = found.collect(engine="in-memory")
    return summary
