"""Issue 15, part 1: where the deviation is (the located stretch)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from reference_location import shortest_stretch

from polars_cumdev.kernel.location import stretches
from polars_cumdev.method import location as location_module
from polars_cumdev.method.location import _searched, stretches_numpy


def _search(curves, thresholds, function=stretches):
    starts = np.cumsum([0, *[len(a) for a, _ in curves]])
    a = np.concatenate([np.asarray(a, float) for a, _ in curves] or [np.empty(0)])
    c = np.concatenate([np.asarray(c, float) for _, c in curves] or [np.empty(0)])
    lower, upper = function(starts.astype(np.int64), a, c, np.asarray(thresholds, float))
    return [None if u < 0 else (lo + 1, u + 1) for lo, u in zip(lower, upper, strict=True)]


def _compiled(curves, thresholds):
    found = _search(curves, thresholds)
    assert _search(curves, thresholds, stretches_numpy) == found  # the NumPy search agrees
    return found


@settings(
    deadline=None, max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=st.lists(
        st.tuples(st.floats(0.01, 1.0), st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])),
        min_size=1,
        max_size=30,
    ),
    share=st.floats(0.0, 1.2),
)
@pytest.mark.slow
def test_compiled_stretch_equals_the_naive_transcription(steps, share):
    weights = np.array([w for w, _ in steps])
    a = np.cumsum(weights) / weights.sum()
    c = np.cumsum([w * d for w, d in steps]) / weights.sum()
    values = np.concatenate([[0.0], c])
    threshold = share * (values.max() - values.min())
    assert _compiled([(a, c)], [threshold]) == [shortest_stretch(a, c, threshold)]


def test_several_groups_at_once_and_no_threshold():
    rng = np.random.default_rng(0)
    curves, thresholds = [], []
    for g in range(40):
        n = int(rng.integers(1, 60))
        w = rng.uniform(0.1, 1.0, n)
        a = np.cumsum(w) / w.sum()
        c = np.cumsum(w * rng.normal(0.0, 1.0, n)) / w.sum()
        curves.append((a, c))
        thresholds.append([0.0, np.nan, -1.0, 0.5 * (np.ptp(np.r_[0, c]))][g % 4])
    expected = [shortest_stretch(a, c, t) for (a, c), t in zip(curves, thresholds, strict=True)]
    assert _compiled(curves, thresholds) == expected
    assert expected[3] is not None and expected[0] is None
    # The screens' NumPy search leaves the groups with T <= 0 or NaN out (issue 22).
    assert _search(curves, thresholds, _searched_numpy) == expected


def _searched_numpy(starts, a, c, thresholds):
    return _searched(starts, a, c, thresholds, False)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_whole_rise_is_found_when_the_threshold_is_d(sign):
    a = np.linspace(0.1, 1.0, 10)
    c = sign * np.array([0.0, -0.1, 0.2, 0.5, 0.4, 0.9, 0.8, 0.85, 0.3, 0.3])
    d = np.ptp(np.r_[0.0, c])
    ((i, j),) = _compiled([(a, c)], [d])
    assert (i, j) == (2, 6)  # from the minimum after point 1 to the maximum at point 6


# --------------------------------------------------------------------------
# The location in the screens
# --------------------------------------------------------------------------


import polars_cumdev  # noqa: E402, F401  (registers the namespace)


def _planted(rows: int, seed: int) -> pl.DataFrame:
    """Group "a" answers 0.25 more often than everyone else on scores in (0.3, 0.6]."""
    rng = np.random.default_rng(seed)
    s = rng.random(rows)
    g = np.where(rng.random(rows) < 0.2, "a", np.where(rng.random(rows) < 0.5, "b", "c"))
    p = 0.4 + 0.25 * ((g == "a") & (s > 0.3) & (s <= 0.6))
    return pl.DataFrame({"g": g, "s": s, "r": (rng.random(rows) < p).astype(np.int8)})


@pytest.mark.parametrize("engine", ["polars", "kernel"])
@pytest.mark.slow
def test_a_planted_deviation_is_located_where_it_was_planted(engine):
    errors = {}
    for rows in (2_000, 20_000, 200_000):
        misses = []
        for seed in range(3):
            out = _planted(rows, seed).cumdev.screen(by="g", score="s", response="r", engine=engine)
            a = out.filter(pl.col("g") == "a").row(0, named=True)
            assert a["kuiper_z"] > 3.0
            misses.append(abs(a["from_score"] - 0.3) + abs(a["to_score"] - 0.6))
            assert a["deviation"] > 0.0  # a rise: "a" answers more often
        errors[rows] = float(np.median(misses))
    assert errors[200_000] < errors[20_000] < errors[2_000]
    assert errors[200_000] < 0.05
    assert 0.15 < np.median([a for a in [0.25]]) < 0.35  # the planted size, for the reader


@pytest.mark.slow
def test_flat_noise_is_located_rarely():
    rng = np.random.default_rng(7)
    rows, groups = 60_000, 60
    s = rng.random(rows)
    df = pl.DataFrame(
        {
            "g": rng.integers(0, groups, rows),
            "s": s,
            "r": (rng.random(rows) < 0.2 + 0.6 * s).astype(np.int8),
        }
    )
    out = df.cumdev.screen(by="g", score="s", response="r", level=1.0)  # the search alone
    located = out["from_score"].is_not_null()
    # Under no deviation, D > 2 sigma with probability kuiper_p(2) ~ 0.29.
    assert located.mean() < 0.45
    assert (out.filter(~located)["note"] == "D <= 2 sigma: not located").all()


@pytest.mark.slow
def test_the_curve_flags_the_stretch_the_screen_reports():
    df = _planted(20_000, 4)
    row = (
        df.cumdev.screen(by="g", score="s", response="r")
        .filter(pl.col("g") == "a")
        .row(0, named=True)
    )
    curve = df.cumdev.curve(pl.col("g") == "a", "s", "r")
    inside = curve.filter(pl.col("located"))
    assert inside["score"].min() == row["from_score"]
    assert inside["score"].max() == row["to_score"]
    before = curve.filter(pl.col("k") == inside["k"].min() - 1).row(0, named=True)
    last = inside.row(-1, named=True)
    assert last["a"] - before["a"] == pytest.approx(row["share"], rel=1e-12)
    assert inside["k"].diff().drop_nulls().eq(1).all()  # one contiguous stretch


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["polars", "kernel"])
def test_calibration_by_group_locates_against_the_naive_transcription(engine):
    rng = np.random.default_rng(9)
    rows = 6_000
    p = rng.random(rows)
    g = rng.integers(0, 4, rows)
    truth = np.where((g == 1) & (p > 0.5), np.clip(p - 0.2, 0, 1), p)
    df = pl.DataFrame({"g": g, "p": np.round(p, 3), "y": (rng.random(rows) < truth) * 1.0})
    out = df.cumdev.calibration("p", "y", by="g", engine=engine)
    for row in out.iter_rows(named=True):
        curve = df.filter(pl.col("g") == row["g"]).cumdev.calibration_curve("p", "y")
        points = curve.filter(pl.col("k") > 0)
        c = points["cumdiff"].to_numpy()
        threshold = row["ecce_r"] - 2.0 * row["sigma"]
        found = shortest_stretch(points["a"].to_numpy(), c, threshold)
        if found is None:
            assert row["from_score"] is None
            continue
        i, j = found
        assert row["from_score"] == points["score"][i]
        assert row["to_score"] == points["score"][j - 1]
    assert out.filter(pl.col("g") == 1)["from_score"][0] is not None


@st.composite
def _deviating(draw):
    """Frames whose group "a" answers 1 above a cut score and 0 below: D well above 2 sigma."""
    n = draw(st.integers(40, 120))
    scores = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    groups = draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n))
    noise = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    weights = draw(st.lists(st.floats(0.25, 4.0, allow_nan=False), min_size=n, max_size=n))
    cut = draw(st.integers(5, 25))
    responses = [
        (1.0 if s > cut else 0.0) if g == "a" else r
        for s, g, r in zip(scores, groups, noise, strict=True)
    ]
    return pl.DataFrame(
        {"g": ["a", *groups[1:]], "s": [s / 30 for s in scores], "r": responses, "w": weights}
    )


_LOCATION = ("from_score", "to_score", "share", "deviation")


def _assert_same_location(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """The same groups in the same order, their location columns equal to 1e-9."""
    assert got["g"].to_list() == want["g"].to_list()
    for name in _LOCATION:
        assert_allclose(
            got[name].fill_null(np.nan).to_numpy(),
            want[name].fill_null(np.nan).to_numpy(),
            rtol=1e-9,
            atol=1e-12,
            err_msg=name,
        )


def _located(frame: pl.DataFrame, engine: str) -> pl.DataFrame:
    out = frame.cumdev.screen(by="g", score="s", response="r", weight="w", engine=engine)
    return out.sort("g").select("g", *_LOCATION)


@pytest.mark.slow
@settings(deadline=None, max_examples=40, database=None)
@given(frame=_deviating(), seed=st.integers(0, 2**32 - 1), factor=st.sampled_from([0.37, 8.0]))
def test_the_stretch_ignores_row_order_and_the_unit_of_weight(frame, seed, factor):
    before = _located(frame, "polars")
    permuted = frame[np.random.default_rng(seed).permutation(frame.height).tolist()]
    scaled = frame.with_columns(pl.col("w") * factor)
    for other in (
        _located(permuted, "polars"),
        _located(frame, "kernel"),
        _located(permuted, "kernel"),
        _located(scaled, "polars"),
    ):
        _assert_same_location(other, before)


@pytest.mark.parametrize("flagged", [False, True])
def test_a_group_keyed_nan_is_located_whatever_its_key_column_carries(flagged):
    """The location joins its thresholds to the points with NaN equal to NaN.

    Polars 2.1's eager join misses a NaN key when the key columns carry a
    sorted flag (one row per side is enough); the lazy join matched it in
    every case tried, but the location now joins through
    ``method.keys.join_on_keys`` (NaN as the pair (is NaN, 0)), as the rest
    of the library does, rather than rely on that.
    """
    from polars_cumdev.method import _names as nm
    from polars_cumdev.method.location import THRESHOLD, locate

    a = np.linspace(0.1, 1.0, 10)
    c = np.r_[np.zeros(3), np.linspace(0.1, 0.7, 7)]
    points = pl.DataFrame(
        {
            "g": [1.0] * 10 + [float("nan")] * 10,  # sorted: NaN sorts last
            nm.SCORE: np.r_[np.arange(10.0), np.arange(10.0)],
            nm.A: np.r_[a, a],
            nm.CUMDIFF: np.r_[-c, c],
        }
    )
    thresholds = pl.DataFrame({"g": [1.0, float("nan")], THRESHOLD: [0.3, 0.3]})
    if flagged:
        points = points.with_columns(pl.col("g").set_sorted())
        thresholds = thresholds.with_columns(pl.col("g").set_sorted())
    found = locate(points.lazy(), ["g"], thresholds.lazy()).collect()
    assert found.height == 2
    assert found.filter(pl.col("g").is_nan())["from_score"].is_not_null().all()
    assert found["from_score"].is_not_null().all()


# The kernel searches stretches only in groups whose own p-value reaches the level.
#
# The screen and ``calibration(by=)`` state a located stretch only where the
# group's Benjamini-Hochberg q-value is at most ``level``; q is never below p,
# so the compiled node leaves the other groups unsearched
# (:func:`polars_cumdev.method.kernel_frames.location`). The Polars plan
# searches every group with T > 0 and blanks the stretches afterwards: the two
# must state the same stretches at every level, while the kernel searches fewer
# groups.


def _graded(seed: int) -> pl.DataFrame:
    """60 groups; group g's responses shifted up by g / 200 on the upper half of the scores.

    Their p-values spread from far below 0.05 to near 1, and many groups
    without a significant q still have D > 2 sigma.
    """
    rng = np.random.default_rng(seed)
    rows = 30_000
    g = rng.integers(0, 60, rows)
    s = rng.random(rows)
    p = 0.3 + 0.4 * s + np.where(s > 0.5, g / 200.0, 0.0)
    return pl.DataFrame(
        {
            "g": g,
            "s": s,
            "r": (rng.random(rows) < p).astype(np.int8),
            "w": rng.uniform(0.5, 2.0, rows),
        }
    )


def _searched_groups(monkeypatch) -> list[int]:
    """Counts, call by call, the groups the kernel's node hands to the search."""
    counts: list[int] = []
    original = location_module.located

    def counting(starts, a, c, s, thresholds, compiled_search=False):
        counts.append(int(np.sum(np.asarray(thresholds) > 0.0)))
        return original(starts, a, c, s, thresholds, compiled_search)

    monkeypatch.setattr(location_module, "located", counting)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("level", [0.01, 0.05, 0.3, 1.0])
def test_the_screen_states_the_plans_stretches_searching_fewer_groups(level, monkeypatch):
    df = _graded(1)
    plan = df.cumdev.screen(
        by="g", score="s", response="r", weight="w", engine="polars", level=level
    )
    counts = _searched_groups(monkeypatch)
    kernel = df.cumdev.screen(
        by="g", score="s", response="r", weight="w", engine="kernel", level=level
    )
    _assert_same_location(kernel.sort("g"), plan.sort("g"))
    stated = int(kernel["from_score"].is_not_null().sum())
    beyond = int((kernel["kuiper"] > 2.0 * kernel["sigma"]).sum())  # T > 0
    assert 0 < stated <= beyond
    (searched,) = counts
    assert stated <= searched <= beyond
    if level <= 0.05:
        assert searched < beyond  # some groups with T > 0 were left out of the search
    else:  # T > 0 means z > 2, so p < 0.29: from there on no group can be left out
        assert searched == beyond


@pytest.mark.slow
@pytest.mark.parametrize("level", [0.05, 1.0])
def test_calibration_by_group_states_the_plans_stretches(level, monkeypatch):
    df = _graded(2).with_columns((0.3 + 0.4 * pl.col("s")).alias("p"))
    args = {"by": "g", "level": level}
    plan = df.cumdev.calibration("p", "r", "w", engine="polars", **args)
    counts = _searched_groups(monkeypatch)
    kernel = df.cumdev.calibration("p", "r", "w", engine="kernel", **args)
    _assert_same_location(kernel.sort("g"), plan.sort("g"))
    stated = int(kernel["from_score"].is_not_null().sum())
    (searched,) = counts
    assert 0 < stated <= searched
    if level < 1.0:
        assert searched < kernel.height
