"""The calibration's located pass: the compiled pieces against a naive transcription.

:func:`polars_cumdev.engines.partitioned.calibration_step.walked_points` places each
flagged group's points of one range on the group's whole curve and marks the
candidates of a stretch crossing ranges, by the compiled
:func:`polars_cumdev.kernel.pieces.calibration_pieces`. Here the arguments of every
call of a partitioned calibration (caught by a spy) are given to a point-by-point
Python transcription of the same arithmetic, A_k = (prior weight + running weight) / W,
C_k = C before the range + running sum / W, the position and next score, and the
candidates: v = sign C_k above every earlier v of the range and above the point before
it, and at least the band's top (``end``); v below every later v of the range and at
most the band's bottom (``start``). The candidates and the best stretches must be the
same bits, on ties, weights, soft labels and several ranges, with groups located.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from calibration_cases import calibration_data

from polars_cumdev.engines.partitioned import calibration_step
from polars_cumdev.engines.partitioned.columns import GID, TOTAL_WEIGHT
from polars_cumdev.engines.partitioned.locating import FID, SIGN
from polars_cumdev.engines.partitioned.points import _bests
from polars_cumdev.partitioned import calibration_partitioned


def _naive(groups: pl.DataFrame, curves: np.ndarray, starts: np.ndarray):
    """The located pass of one range, one point at a time."""
    groups = groups.sort(GID)
    columns = {name: [] for name in ("score", "a", "c", "position", "next", "end", "start", "fid")}
    group_starts = [0]
    for g in groups.iter_rows(named=True):
        rows = range(starts[g[GID]], starts[g[GID] + 1])
        total = float(g[TOTAL_WEIGHT])
        next_score = np.nan if g["next_score"] is None else float(g["next_score"])
        c = [float(g["c_base"]) + curves[i, 1] / total for i in rows]
        v = [g[SIGN] * x for x in c]
        # the largest v before each point (from the point before the range), the
        # smallest after it
        above = [g[SIGN] * float(g["c_base"])]
        for x in v[:-1]:
            above.append(max(above[-1], x))
        below = [np.inf]
        for x in reversed(v[1:]):
            below.append(min(below[-1], x))
        below.reverse()
        for place, i in enumerate(rows, start=1):
            k = place - 1
            columns["score"].append(curves[i, 2])
            columns["a"].append((float(g["prior_w"]) + curves[i, 0]) / total)
            columns["c"].append(c[k])
            columns["position"].append(float(g["prior_n"]) + place)
            columns["next"].append(curves[i + 1, 2] if k + 1 < len(c) else next_score)
            columns["end"].append(bool(v[k] > above[k] and v[k] >= g["hi_level"]))
            columns["start"].append(bool(v[k] < below[k] and v[k] <= g["lo_level"]))
            columns["fid"].append(g[FID])
        group_starts.append(group_starts[-1] + len(c))
    values = {name: np.array(columns[name], dtype=float) for name in ("score", "a", "c")}
    values |= {name: np.array(columns[name], dtype=float) for name in ("position", "next")}
    values |= {name: np.array(columns[name], dtype=bool) for name in ("end", "start")}
    picked = values["end"] | values["start"]
    candidates = pl.DataFrame(
        {
            FID: np.array(columns["fid"])[picked],
            "position": values["position"][picked].astype(np.int64),
            **{name: values[name][picked] for name in ("a", "c", "score", "next")},
        },
        schema_overrides={FID: groups.schema[FID]},
    ).with_columns(pl.col("next").fill_nan(None))
    return _bests(np.array(group_starts, dtype=np.int64), groups, values, True), candidates


def _calls(monkeypatch, df, weight, ranges):
    """The arguments of every walked_points call of one partitioned calibration."""
    calls = []
    original = calibration_step.walked_points

    def spy(groups, curves, starts):
        calls.append((groups, curves, starts))
        return original(groups, curves, starts)

    monkeypatch.setattr(calibration_step, "walked_points", spy)
    calibration_partitioned(df, "s", "r", weight, by="g", ranges=ranges)
    monkeypatch.undo()
    return calls


@pytest.mark.parametrize(
    ("seed", "soft", "weight", "ranges"),
    [
        (2, True, None, 3),  # (0.07 s: the fast subset's case)
        pytest.param(1, False, "w", 7, marks=pytest.mark.slow),  # (about 1 s)
    ],
)
def test_compiled_pieces_equal_a_naive_transcription(monkeypatch, seed, soft, weight, ranges):
    df = calibration_data(seed, soft=soft)
    calls = _calls(monkeypatch, df, weight, ranges)
    points = candidates = 0
    for groups, curves, starts in calls:
        bests, found = calibration_step.walked_points(groups, curves, starts)
        want_bests, want_found = _naive(groups, curves, starts)
        assert found.equals(want_found)
        assert bests.equals(want_bests)
        points += int(np.diff(starts)[groups.get_column(GID).to_numpy()].sum())
        candidates += found.height
    # (the data must exercise it: several ranges with located groups and candidates)
    assert len(calls) >= 2
    assert points > 100
    assert candidates > 0
