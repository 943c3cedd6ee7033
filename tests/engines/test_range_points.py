"""The second pass's two routes through a range give the same pieces.

:func:`polars_cumdev.engines.partitioned.range_points` finds the flagged
groups' points either by the compiled walk (the bucket sort, then
:func:`polars_cumdev.kernel.range_cells` listing the points it closes) or by
the Polars stages (sort, tie merge, prefix sums, bins). Both are run here on
the very ranges, plans and flagged cells a partitioned screen hands them
(caught by a spy on the driver), and must give the same points (score,
the weight and the sum of the steps W'_k (R'_k - Rt_k) up to the point, its
place in the cell) and the same best stretches, to 1e-12 of the largest;
and the last stage, compiled and in Polars, must give the same bits on the
same points (each point's A_k, C_k, position, next score, and whether it is
a candidate): on ties, weights, binary and continuous
responses, several keys with nulls, a score of -0.0, and ranges with no
row or no flagged cell. (The located stretches themselves are checked against the one-pass
screen in ``test_partitioned_location.py``.)
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from engine_cases import planted

import polars_cumdev.engines.partitioned.drivers as drivers
from polars_cumdev.engines.partitioned import points, range_points, screen_partitioned
from polars_cumdev.engines.partitioned.locating import FID
from polars_cumdev.method import _names as nm

POINT_COLUMNS = [FID, nm.SCORE, points.RUNNING_WEIGHT, points.STEPS, points.PLACE]
GID = points.GID


def _second_passes(monkeypatch, df, by, weight, ranges):
    """The arguments of every range_points call of one partitioned screen."""
    calls = []

    def spy(rows, plan, cells, **kwargs):
        calls.append((rows, plan, cells))
        return range_points(rows, plan, cells, **kwargs)

    monkeypatch.setattr(drivers, "range_points", spy)
    screen_partitioned(df, by, "s", "r", weight, ranges=ranges, level=1.0)
    return calls


def _assert_close(want: pl.DataFrame, got: pl.DataFrame, order: list[str]) -> None:
    assert want.columns == got.columns
    assert want.height == got.height
    want, got = want.sort(order), got.sort(order)
    for column in want.columns:
        x = want.get_column(column).cast(pl.Float64).to_numpy()
        y = got.get_column(column).cast(pl.Float64).to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)), column
        scale = np.nanmax(np.abs(x), initial=0.0)
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12 * scale, err_msg=column)


def _with_fid(listed) -> pl.DataFrame:
    points, groups = listed
    return points.join(groups.select(GID, FID), on=GID).select(POINT_COLUMNS)


def _assert_same_pieces(listed) -> None:
    """The compiled and the Polars form of the last stage, on the same points: the same bits."""
    starts_k, groups_k, values_k = points._compiled_pieces(listed)
    starts_p, groups_p, values_p = points._polars_pieces(listed, "in-memory")
    assert np.array_equal(starts_k, starts_p)
    assert groups_k.equals(groups_p)
    assert values_k.keys() == values_p.keys()
    for name, value in values_k.items():
        assert value.dtype == values_p[name].dtype or name == "position", name
        np.testing.assert_array_equal(value, values_p[name], err_msg=name)


def _assert_routes_agree(calls) -> int:
    """Both routes on every caught range; returns the number of points compared."""
    compared = 0
    for rows, plan, cells in calls:
        frame = rows.lazy().collect()
        kernel = points._kernel_points(frame, plan, cells)
        stages = points._polars_points(frame, plan, cells, "in-memory")
        _assert_close(_with_fid(stages), _with_fid(kernel), [FID, nm.SCORE])
        _assert_same_pieces(kernel)
        _assert_same_pieces(stages)
        bests_k, _ = range_points(rows, plan, cells, compiled=True)
        bests_p, _ = range_points(rows, plan, cells, compiled=False)
        _assert_close(bests_p, bests_k, [FID])
        compared += kernel[0].height
    return compared


@pytest.mark.slow
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("response", ["binary", "continuous"])
@pytest.mark.parametrize("ranges", [1, 5])
def test_compiled_and_polars_points_agree(monkeypatch, weighted, response, ranges):
    df = planted(21, weighted=weighted, response=response)
    calls = _second_passes(monkeypatch, df, "g", "w" if weighted else None, ranges)
    assert calls, "no range was searched: the data must flag a group"
    assert _assert_routes_agree(calls) > 0


@pytest.mark.slow
def test_several_keys_with_nulls_and_negative_zero(monkeypatch):
    df = planted(22).with_columns(
        pl.when(pl.col("g") == "drop").then(None).otherwise(pl.col("g")).alias("g"),
        (pl.int_range(pl.len()) % 2).alias("h"),
        # -0.0 and 0.0 are one score: the bucket sort gives way to Polars' order
        pl.when(pl.int_range(pl.len()) % 97 == 0).then(-0.0).otherwise(pl.col("s")).alias("s"),
    )
    assert (df["s"].to_numpy().view(np.uint64) == np.uint64(1 << 63)).any()
    calls = _second_passes(monkeypatch, df, ["g", "h"], "w", 4)
    assert any(cells.get_column("g").is_null().any() for _, _, cells in calls)
    assert _assert_routes_agree(calls) > 0


@pytest.mark.slow
def test_a_range_without_rows_or_flagged_points(monkeypatch):
    df = planted(23)
    (rows, plan, cells), *_ = _second_passes(monkeypatch, df, "g", "w", 3)
    for route in (True, False):
        bests, candidates = range_points(rows.head(0), plan, cells, compiled=route)
        assert bests.height == 0
        assert candidates.height == 0
        unflagged = cells.head(0)
        bests, candidates = range_points(rows, plan, unflagged, compiled=route)
        assert bests.height == 0
        assert candidates.height == 0
