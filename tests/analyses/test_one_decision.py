"""One decision per row: every analysis table carries ``significant``, and the rest follows it.

Issue 36, item 3. Each analysis runs on seeded data with a planted deviation
(so its table has significant and non-significant rows, both asserted), and
its table must agree with itself: ``significant`` is the stated adjustment's
p-value at most the level (BH q across groups or classes, p for one
comparison, ``p_family`` for a multicalibration family whatever its method,
``fw_p`` across drift windows, where ``flagged`` is the same column); the
located stretch is stated only where ``significant`` is true; the note of a
tested row that is not significant says so and names that p-value; the
``finding`` of a segment is "not significant" exactly there. The faces are
checked on the same tables in ``tests/faces/test_one_decision_faces.py``.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.calibration import calibration
from polars_cumdev.compare import compare, compare_all
from polars_cumdev.drift import calibration_drift
from polars_cumdev.multicalibration import multicalibration
from polars_cumdev.multicalibration.screens import screen_segments
from polars_cumdev.paired import paired
from polars_cumdev.subpopulation import screen

STRETCH = ("from_score", "to_score", "share", "deviation")


def planted(seed: int = 0, rows: int = 4_000) -> pl.LazyFrame:
    """Six groups; group0 deviates strongly in the middle scores, the others follow the scores."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, rows)
    g = rng.integers(0, 6, rows)
    p = np.where((g == 0) & (s > 0.35) & (s < 0.65), np.minimum(s + 0.35, 1.0), s)
    start = dt.datetime(2024, 1, 1)
    week = rng.integers(0, 6, rows)
    p = np.where((week == 2) & (s > 0.3) & (s < 0.7), np.minimum(p + 0.3, 1.0), p)
    probs = rng.dirichlet([2.0, 2.0, 2.0], rows)
    label = np.array([rng.choice(3, p=q) for q in probs])
    label = np.where((label == 1) & (rng.random(rows) < 0.35), 0, label)
    y = (rng.random(rows) < p).astype(np.float64)
    return pl.DataFrame(
        {
            "g": [f"group{k}" for k in g],
            "h": rng.integers(0, 3, rows).astype(str),
            "s": s,
            "r": y,
            "r2": (rng.random(rows) < s).astype(np.float64),
            "y": s + rng.normal(0, 0.3, rows) + np.where(g == 0, 0.2, 0.0),
            "w": rng.uniform(0.5, 2.0, rows),
            "t": [start + dt.timedelta(weeks=int(k)) for k in week],
            "p0": probs[:, 0],
            "p1": probs[:, 1],
            "p2": probs[:, 2],
            "label": label,
        }
    ).lazy()


def check(table: pl.DataFrame, p: str, level: float, symbol: str) -> None:
    """The table agrees with its ``significant`` column (see the module docstring)."""
    assert table.schema["significant"] == pl.Boolean
    decision = table["significant"]
    assert decision.null_count() == 0
    expected = (table[p] <= level).fill_null(False)
    assert (decision == expected).all(), table.select(p, "significant")
    assert decision.any() and (~decision).any(), "the data must give both kinds of rows"
    stated = pl.any_horizontal(pl.col(c).is_not_null() for c in STRETCH if c in table.columns)
    assert table.filter(stated & ~pl.col("significant")).height == 0
    tested = pl.col(p).is_not_null()
    notes = table.filter(tested & ~pl.col("significant"))["note"].to_list()
    assert all(n.startswith(f"not significant: {symbol} = ") for n in notes), notes
    kept = table.filter(pl.col("significant"))["note"].to_list()
    assert not any(n and n.startswith("not significant") for n in kept), kept
    if "finding" in table.columns:
        said = table["finding"] == "not significant"
        assert (said == ~decision).all()
    if "flagged" in table.columns:
        assert (table["flagged"] == decision).all()


@pytest.mark.slow
def test_screen_and_calibration_by_groups() -> None:
    df = planted()
    check(screen(df, "g", "s", "r").collect(), "kuiper_q", 0.05, "q")
    check(calibration(df, "s", "r", by="g").collect(), "ecce_r_q", 0.05, "q")
    check(calibration(df, "s", "r", by="g", level=0.2).collect(), "ecce_r_q", 0.2, "q")


@pytest.mark.slow
def test_single_comparisons_use_p() -> None:
    df = planted()
    both = pl.concat(
        [calibration(df.filter(pl.col("g") == g), "s", "r").collect() for g in ("group0", "group1")]
    )
    check(both, "ecce_r_p", 0.05, "p")
    pairs = pl.concat(
        [
            compare(df, pl.col("g") == "group0", pl.col("g") == "group1", "s", "r").collect(),
            compare(df, pl.col("g") == "group2", pl.col("g") == "group1", "s", "r").collect(),
        ]
    )
    check(pairs, "kuiper_p", 0.05, "p")


@pytest.mark.slow
def test_compare_all_paired_and_targets() -> None:
    df = planted()
    check(compare_all(df, "g", "group5", "s", "r").collect(), "kuiper_q", 0.05, "q")
    check(paired(df, "s", "r", "r2", by="g").collect(), "kuiper_q", 0.05, "q")
    check(calibration(df, "s", "y", by="g", target="mean").collect(), "ecce_r_q", 0.05, "q")
    quantiles = calibration(df, "s", "y", by="g", target="quantile", alpha=0.5).collect()
    check(quantiles, "ecce_r_q", 0.05, "q")


@pytest.mark.slow
def test_multiclass_kinds() -> None:
    df = planted()
    scores = ["p0", "p1", "p2"]
    check(
        calibration(df, scores, "label", by="h", kind="class-wise").collect(),
        "ecce_r_q",
        0.05,
        "q",
    )
    check(
        calibration(df, scores, "label", by="g", kind="top-label", level=0.2).collect(),
        "ecce_r_q",
        0.2,
        "q",
    )


@pytest.mark.slow
@pytest.mark.parametrize("adjustment", ["holm", "bonferroni"])
def test_drift_flags_are_the_decision(adjustment: str) -> None:
    """The stretch follows ``fw_p`` (Holm / Bonferroni across windows), not BH q."""
    df = planted()
    table = calibration_drift(
        df, "s", "r", time="t", every="1w", by="g", adjustment=adjustment
    ).collect()
    check(table, "fw_p", 0.05, "fw_p")
    # rows significant by BH q but not by the family-wise p: no stretch (the old bug)
    between = table.filter((pl.col("ecce_r_q") <= 0.05) & ~pl.col("significant"))
    assert between.height > 0
    assert between["from_score"].null_count() == between.height


@pytest.mark.slow
@pytest.mark.parametrize("method", ["holm", "bootstrap", "stepdown"])
def test_multicalibration_decides_on_p_family(method: str) -> None:
    """Every method: stretch and note follow ``p_family``, never BH q.

    At level 0.3 some segments have ``p_family`` <= 0.3 with BH q above 0.05:
    before the rule read ``p_family``, they had no stretch and the note
    "not significant: q = 0.21 > 0.05".
    """
    rng = np.random.default_rng(0)
    n = 3_000
    s = rng.uniform(0.05, 0.95, n)
    a, b, c, d = (rng.integers(0, 3, n) for _ in range(4))
    p = np.clip(s + 0.12 * ((a == 0) & (b == 0)), 0, 1)
    df = pl.LazyFrame(
        {
            "s": s,
            "y": (rng.random(n) < p).astype(float),
            **{k: v.astype(str) for k, v in zip("abcd", (a, b, c, d), strict=True)},
        }
    )
    family = pc.segments(["a", "b", "c", "d"], depth=2, levels=3, min_rows=10)
    table = multicalibration(df, "s", "y", segments=family, method=method, resamples=199, level=0.3)
    table = table.collect()
    check(table, "p_family", 0.3, "p_family")
    located = table.filter(pl.col("significant") & (pl.col("ecce_r") > 2 * pl.col("sigma")))
    assert located.height > 0 and located["from_score"].null_count() == 0


def test_segment_screen_decides_on_p_family() -> None:
    df = planted()
    family = pc.segments(["g", "h"], depth=2, levels=6, min_rows=10)
    table = screen_segments(df, family, "s", "r", level=0.2).collect()
    check(table, "p_family", 0.2, "p_family")
