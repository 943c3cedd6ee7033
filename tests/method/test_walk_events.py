"""The effective events the compiled walks sum, and the groups they set aside.

The screen's walk (:func:`polars_cumdev.kernel.screen_events`) and calibration's
(:func:`polars_cumdev.kernel.calibration_walk`) add each closed point's terms of a
group's effective number of events E (method/finite_sample.py) as they go;
:func:`polars_cumdev.method.kernel_frames.walk_events` turns the sums into E, and
the finite-sample step no longer joins the rows of a candidate whose E reaches
1.01 times the threshold (:func:`polars_cumdev.method.finite_sample.set_aside`).

Checked here:

- E against a naive transcription of the criterion (the screen: each group's
  merged points, their bins between midpoints, the population's mean over each
  bin by ``math.fsum``; calibration: the scores), then the three sums row by
  row, on continuous and tied scores, unit and log-normal weights: within 1e-12
  relative (1.2e-14 at most when written), far inside the 1% margin;
- NaN (not known) where the responses are not all 0 and 1, and where a weight's
  fourth power underflows;
- the screen's and calibration's tables with the set-aside and without it (the step deciding every
  candidate itself) are equal on groups sized around the threshold, and the
  set-aside did drop candidates; set aside too much (groups at a quarter of
  the threshold) and the tables differ.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("numba")

from reference_events import naive_events, threshold_groups

from polars_cumdev import kernel as k
from polars_cumdev.calibration import calibration
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.kernel_frames import walk_events
from polars_cumdev.subpopulation import screen


def _rows(seed: int, scores: str, weights: str, rows: int = 6000, groups: int = 12):
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1)
    gid = rng.choice(groups, size=rows, p=share / share.sum()).astype(np.int32)
    s = rng.beta(1.0, 6.0, rows)
    if scores == "tied":
        s = np.round(s, 2)
    r = (rng.random(rows) < s + 0.05 * (gid % 2)).astype(np.float64)
    w = np.ones(rows) if weights == "unit" else rng.lognormal(0.0, 1.0, rows)
    return gid, s, r, w


def _walked(gid, s, r, w, groups: int, binary: bool = True, screen: bool = True) -> np.ndarray:
    order = np.lexsort((r, w, s))
    scale = 2.0 ** -int(np.frexp(w.max())[1])
    columns = (gid[order], 0, s[order], r[order], w[order], True, scale)
    if screen:
        out = k.screen_events(*columns, groups, 0.5, False)[0]
    else:
        starts = np.zeros(groups + 1, dtype=np.int64)
        np.cumsum(k.tie_counts(gid[order], 0, s[order], groups), out=starts[1:])
        out = k.calibration_walk(*columns, groups, starts, threads=2)[0]
    return walk_events(out, binary)


@pytest.mark.parametrize("screen", [True, False], ids=["screen", "calibration"])
@pytest.mark.parametrize("scores", ["continuous", "tied"])
@pytest.mark.parametrize("weights", ["unit", "log-normal"])
def test_walk_events_against_a_naive_transcription(scores: str, weights: str, screen) -> None:
    gid, s, r, w = _rows(3, scores, weights)
    got = _walked(gid, s, r, w, 12, screen=screen)
    want = naive_events(gid, s, r, w, 12, screen=screen)
    assert np.isfinite(want).all() and (want > 1.0).all()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_walk_events_not_known() -> None:
    gid, s, r, w = _rows(4, "tied", "log-normal", rows=2000, groups=3)
    assert np.isnan(_walked(gid, s, r, w, 3, binary=False)).all()
    w[gid == 1] = 2.0**-300  # group 1's w^4, rescaled, underflows; the others' do not
    walked = _walked(gid, s, r, w, 3)
    assert np.isnan(walked[1]) and np.isfinite(walked[[0, 2]]).all()


def _screen(frame: pl.DataFrame) -> pl.DataFrame:
    return screen(frame, "g", "s", "y", "w", engine="kernel")


def _calibration(frame: pl.DataFrame) -> pl.DataFrame:
    return calibration(frame, "s", "y", "w", by="g", engine="kernel")


@pytest.mark.parametrize("analysis", [_screen, _calibration], ids=["screen", "calibration"])
@pytest.mark.parametrize("weights", ["unit", "log-normal"])
def test_the_set_aside_changes_no_table(weights: str, analysis, monkeypatch) -> None:
    frame = threshold_groups(7, weights)
    counts = [0, 0]  # candidates' rows reaching the step's own bound, with and without
    real = fs.may_have_few_events

    def spy(picked, keys, sigma_b, population):
        counts[len(runs)] += picked.select(pl.len()).collect().item()
        return real(picked, keys, sigma_b, population)

    monkeypatch.setattr(fs, "may_have_few_events", spy)
    runs = []
    runs.append(analysis(frame))
    monkeypatch.setattr(fs, "set_aside", lambda events: pl.lit(False))
    runs.append(analysis(frame))
    walked, every = runs
    assert counts[0] < counts[1], counts  # (not vacuous: candidates were set aside)
    assert walked.equals(every)
    assert (every["p_method"] == "simulated").any()  # (E < 200 is reached)


@pytest.mark.parametrize("analysis", [_screen, _calibration], ids=["screen", "calibration"])
def test_setting_aside_too_much_changes_the_table(analysis, monkeypatch) -> None:
    frame = threshold_groups(7, "unit")
    right = analysis(frame)
    monkeypatch.setattr(fs, "WALK_MARGIN", 0.25)  # E >= 50 set aside: some simulated group
    assert not analysis(frame).equals(right)
