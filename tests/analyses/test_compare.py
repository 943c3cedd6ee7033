"""``compare``, ``compare_curve`` and ``compare_all`` against the naive reference.

The yardstick is ``reference.two_subpops``, a loop-by-loop NumPy transcription
of two-subpopulations.md. Scores of the two subpopulations lie on interleaved
grids (one on even multiples of 1/64, the other on odd ones), so each has
ties of its own but none is shared unless a test plants one.
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose
from polars.testing import assert_frame_equal
from reference_location import expected_location

from polars_cumdev.compare import compare, compare_all, compare_curve, dither_scores, permutation
from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CumdevError,
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
    OverlapError,
    TiedScoresError,
)
from polars_cumdev.method.pvalues import ks_pvalue, kuiper_pvalue
from polars_cumdev.method.statistics import NOT_LOCATED

RTOL = 1e-9
TINY = 1e-15

FIRST = pl.col("grp") == "A"
SECOND = pl.col("grp") == "B"


def close(actual, expected, what: str, rtol: float = RTOL) -> None:
    assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=rtol,
        atol=TINY,
        err_msg=what,
    )


def grid_scores(rng, size: int, parity: int) -> np.ndarray:
    """Scores j / 64 with j of the given parity, 0 < j < 64 (plenty of ties)."""
    return (2 * rng.integers(0, 32, size) + parity) / 64.0


def pair_frame(seed: int, *, owner: str = "first", n0: int = 70, n1: int = 55) -> pl.DataFrame:
    """Rows of A (first) and B (second), plus rows of C that neither selects.

    ``owner`` says which subpopulation holds the smallest score: its scores
    are on the even grid and include 0.
    """
    rng = np.random.default_rng(seed)
    even, odd = (0, 1) if owner == "first" else (1, 0)
    s0 = grid_scores(rng, n0, even)
    s1 = grid_scores(rng, n1, odd)
    if owner == "first":
        s0[0] = 0.0
    else:
        s1[0] = 0.0
    s = np.concatenate([s0, s1, [np.nan, 0.5]])
    r = (rng.random(s.size) < np.nan_to_num(s)).astype(np.float64) + rng.normal(0, 0.1, s.size)
    w = rng.lognormal(0.0, 0.7, s.size)
    grp = ["A"] * n0 + ["B"] * n1 + ["C", "C"]
    order = rng.permutation(s.size)
    return pl.DataFrame(
        {"grp": [grp[i] for i in order], "s": s[order], "r": r[order], "w": w[order]}
    )


def columns_of(df: pl.DataFrame, label: str, weight: str | None):
    part = df.filter(pl.col("grp") == label)
    w = None if weight is None else part[weight].to_numpy()
    return part["s"].to_numpy(), part["r"].to_numpy(), w


def expected(df: pl.DataFrame, weight, variance, fraction=1.0, *, first="A", second="B"):
    s0, r0, w0 = columns_of(df, first, weight)
    s1, r1, w1 = columns_of(df, second, weight)
    return ref.two_subpops(s0, r0, w0, s1, r1, w1, variance=variance, fraction=fraction)


def check_row(row: dict, expect: dict, what: str) -> None:
    close(row["kuiper"], expect["kuiper"], f"{what}: kuiper")
    close(row["ks"], expect["ks"], f"{what}: ks")
    close(row["delta"], expect["delta"], f"{what}: delta")
    close(row["sigma"], expect["sigma"], f"{what}: sigma")
    close(row["kuiper_z"], expect["kuiper"] / expect["sigma"], f"{what}: kuiper_z")
    close(row["ks_z"], expect["ks"] / expect["sigma"], f"{what}: ks_z")
    close(row["kuiper_p"], kuiper_pvalue(np.array([row["kuiper_z"]]))[0], f"{what}: kuiper_p")
    close(row["ks_p"], ks_pvalue(np.array([row["ks_z"]]))[0], f"{what}: ks_p")
    close(row["effect"], expect["effect"], f"{what}: effect")
    check_location(row, expect, what)


def check_location(row: dict, expect: dict, what: str) -> None:
    """The located stretch against the naive transcription, on the reference's curve."""
    threshold = expect["kuiper"] - 2.0 * expect["sigma"]
    wanted = expected_location(expect["A"], expect["C"], expect["t"], threshold)
    if wanted is None:  # null, and the note says so unless it already says something else
        assert row["from_score"] is None and row["note"] is not None, what
        return
    for name, value in wanted.items():
        close(row[name], value, f"{what}: {name}")


# --------------------------------------------------------------------------
# Numbers against the reference
# --------------------------------------------------------------------------


@pytest.mark.parametrize("owner", ["first", "second"])
@pytest.mark.parametrize("variance", ["empirical", "score"])
@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.slow
def test_compare_matches_reference(monkeypatch, owner, variance, weight):
    # The spec's asymptotic p-value (70 + 55 rows would take the permuted one).
    monkeypatch.setattr(permutation, "SMALL_ROWS", 0.0)
    df = pair_frame(3 + (owner == "second"), owner=owner)
    out = compare(df.lazy(), FIRST, SECOND, "s", "r", weight, variance=variance, level=1.0)
    assert isinstance(out, pl.LazyFrame)
    got = out.collect(engine="in-memory")
    assert got.height == 1
    row = got.row(0, named=True)
    expect = expected(df, weight, variance)
    assert expect["blocks"][0]["owner"] == (0 if owner == "first" else 1)
    check_row(row, expect, f"{owner}/{variance}/{weight}")
    assert row["n_first"] == 70 and row["n_second"] == 55
    assert row["variance"] == variance
    assert row["note"] in (None, NOT_LOCATED)
    # The streaming engine gives the same numbers.
    streamed = out.collect(engine="streaming").row(0, named=True)
    for name in ("kuiper", "ks", "delta", "sigma", "effect", "kuiper_p"):
        close(streamed[name], row[name], f"streaming {name}", rtol=1e-12)


@pytest.mark.parametrize("fraction", [1.0, 0.77, 0.5, 0.1])
@pytest.mark.parametrize("owner", ["first", "second"])
@pytest.mark.parametrize("variance", ["empirical", "score"])
@pytest.mark.slow
def test_curve_matches_reference(fraction, owner, variance):
    df = pair_frame(11, owner=owner)
    out = compare_curve(
        df.with_columns(is_a=FIRST, is_b=SECOND).lazy(),
        "is_a",
        "is_b",
        "s",
        "r",
        "w",
        variance=variance,
        fraction=fraction,
    )
    assert isinstance(out, pl.LazyFrame)
    got = out.collect(engine="in-memory")
    expect = expected(df, "w", variance, fraction)
    n_all = len(expect["blocks"]) - 2
    kept = math.floor(n_all * fraction)
    assert kept == expect["d"].size
    assert got.height == kept + 1
    assert got["k"].to_list() == list(range(kept + 1))
    close(got["a"], expect["A"], "a (A_k)")
    close(got["cumdiff"], expect["C"], "cumdiff (C_k)")
    close(got["k_over_n"], np.arange(kept + 1) / kept, "k_over_n")
    assert got["score"][0] is None and got["difference"][0] is None
    close(got["score"][1:], expect["t"], "score (block centre)")
    close(got["difference"][1:], expect["d"], "difference (d_k)")
    close(got["v"][1:], expect["v"], "v_k")
    sigma = got["sigma"].to_numpy()
    assert np.all(sigma == sigma[0])
    close(sigma[0], expect["sigma"], "sigma")
    # centre alternates, starting on the block of the subpopulation that does
    # not own the smallest score.
    starts = "second" if owner == "first" else "first"
    other = "first" if starts == "second" else "second"
    assert got["centre"][1:].to_list() == [starts if i % 2 == 0 else other for i in range(kept)]
    streamed = out.collect(engine="streaming")
    close(streamed["cumdiff"], got["cumdiff"], "streaming cumdiff", rtol=1e-12)


def test_curve_end_matches_compare():
    df = pair_frame(5)
    stats = compare(df, FIRST, SECOND, "s", "r", "w").row(0, named=True)
    curve = compare_curve(df, FIRST, SECOND, "s", "r", "w")
    close(curve["cumdiff"][-1], stats["delta"], "delta is C at the end")
    c = curve["cumdiff"].to_numpy()
    close(c.max() - c.min(), stats["kuiper"], "kuiper is the range of C")
    close(np.abs(c).max(), stats["ks"], "ks is max |C|")


def test_swapping_the_subpopulations_negates_the_differences():
    df = pair_frame(8)
    ab = compare(df, FIRST, SECOND, "s", "r", "w").row(0, named=True)
    ba = compare(df, SECOND, FIRST, "s", "r", "w").row(0, named=True)
    close(ba["delta"], -ab["delta"], "delta changes sign")
    close(ba["effect"], -ab["effect"], "effect changes sign")
    for name in ("kuiper", "ks", "sigma", "kuiper_p", "ks_p"):
        close(ba[name], ab[name], name)
    assert (ba["n_first"], ba["n_second"]) == (ab["n_second"], ab["n_first"])


def test_unweighted_equals_unit_weights():
    df = pair_frame(9).with_columns(one=pl.lit(1.0))
    a = compare(df, FIRST, SECOND, "s", "r")
    b = compare(df, FIRST, SECOND, "s", "r", "one")
    for name in ("kuiper", "ks", "delta", "sigma", "effect"):
        close(a[name], b[name], name, rtol=1e-13)


def test_order_of_rows_does_not_matter():
    df = pair_frame(12)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=4)
    a = compare(df, FIRST, SECOND, "s", "r", "w")
    b = compare(shuffled, FIRST, SECOND, "s", "r", "w")
    for name in ("kuiper", "ks", "delta", "sigma", "effect"):
        close(a[name], b[name], name, rtol=1e-12)


def test_scores_that_do_not_interleave_give_null_statistics():
    # A entirely below B: two blocks, no interior block.
    df = pl.DataFrame(
        {
            "grp": ["A"] * 4 + ["B"] * 3,
            "s": [0.1, 0.2, 0.2, 0.3, 0.6, 0.7, 0.8],
            "r": [1.0, 0.0, 2.0, 3.0, 0.5, 1.5, 4.0],
            "w": [1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0],
        }
    )
    row = compare(df, FIRST, SECOND, "s", "r", "w").row(0, named=True)
    for name in ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z", "kuiper_p", "ks_p"):
        assert row[name] is None, name
    assert "do not interleave" in row["note"]
    # Effect by hand: every A entry is compared with B's lowest entry, every
    # B entry with A's highest; averaged within each subpopulation.
    e0 = (1 * 1.0 + 0 * 2.0 + 2 * 1.0 + 3 * 3.0) / 7 - 0.5
    e1 = 3.0 - (0.5 + 1.5 + 2 * 4.0) / 4
    close(row["effect"], (e0 + e1) / 2, "effect")
    curve = compare_curve(df, FIRST, SECOND, "s", "r", "w")
    assert curve.height == 1 and curve["k"][0] == 0


def test_three_blocks_leave_empirical_sigma_zero():
    df = pl.DataFrame(
        {"grp": ["A", "A", "B", "B", "A"], "s": [0.1, 0.2, 0.3, 0.4, 0.9], "r": [1.0, 2, 0, 5, 3]}
    )
    row = compare(df, FIRST, SECOND, "s", "r").row(0, named=True)
    expect = expected(df, None, "empirical")
    close(row["kuiper"], expect["kuiper"], "kuiper")
    assert row["sigma"] == 0.0 and row["kuiper_z"] is None and row["ks_p"] is None
    assert "sigma is 0" in row["note"]


# --------------------------------------------------------------------------
# Ties shared by the two subpopulations
# --------------------------------------------------------------------------


def tied_frame(seed: int = 21) -> pl.DataFrame:
    """pair_frame with three of B's scores moved onto A's grid points (shared)."""
    df = pair_frame(seed)
    a_scores = df.filter(FIRST)["s"].unique().sort().to_list()
    targets = [a_scores[3], a_scores[7], a_scores[-2]]
    b_index = df.with_row_index().filter(SECOND)["index"].to_list()
    s = df["s"].to_list()
    for i, target in zip(b_index[:4], [*targets, targets[0]], strict=True):
        s[i] = target
    return df.with_columns(pl.Series("s", s))


def test_shared_scores_raise_by_default():
    df = tied_frame()
    with pytest.raises(TiedScoresError, match=r"\b3 distinct score\(s\) occur in both"):
        compare(df, FIRST, SECOND, "s", "r", "w")
    with pytest.raises(TiedScoresError):
        compare_curve(df.lazy(), FIRST, SECOND, "s", "r", "w").collect()


@pytest.mark.slow
@pytest.mark.parametrize("variance", ["empirical", "score"])
def test_dither_matches_reference_on_dithered_scores(monkeypatch, variance):
    monkeypatch.setattr(permutation, "SMALL_ROWS", 0.0)  # the spec's asymptotic p-value
    monkeypatch.setattr(permutation, "MIN_PARTIAL", 1.0)  # (a few shared scores: not permuted)
    df = tied_frame()
    seed = 7
    out = compare(
        df, FIRST, SECOND, "s", "r", "w", variance=variance, ties="dither", seed=seed, level=1.0
    )
    row = out.row(0, named=True)
    s0, r0, w0 = columns_of(df, "A", "w")
    s1, r1, w1 = columns_of(df, "B", "w")
    shared = np.isin(s1, s0)
    assert len(set(s1[shared].tolist())) == 3
    s1_moved = np.where(shared, dither_scores(s1, seed), s1)
    expect = ref.two_subpops(s0, r0, w0, s1_moved, r1, w1, variance=variance)
    check_row(row, expect, "dither")
    assert "3 score(s) shared" in row["note"]
    curve = compare_curve(df, FIRST, SECOND, "s", "r", "w", ties="dither", seed=seed)
    if variance == "empirical":
        close(curve["cumdiff"], expect["C"], "dithered curve")
    # Deterministic, independent of row order; the seed matters a little.
    again = compare(
        df.reverse(), FIRST, SECOND, "s", "r", "w", variance=variance, ties="dither", seed=seed
    )
    close(again["kuiper"], row["kuiper"], "same seed, reversed rows", rtol=1e-12)
    other = compare(df, FIRST, SECOND, "s", "r", "w", variance=variance, ties="dither", seed=8)
    assert other["kuiper"][0] is not None


def test_dither_is_a_no_op_without_shared_scores():
    df = pair_frame(13)
    # The same seed: it also seeds the permutation null of a small comparison.
    a = compare(df, FIRST, SECOND, "s", "r", "w", seed=99)
    b = compare(df, FIRST, SECOND, "s", "r", "w", ties="dither", seed=99)
    assert_frame_equal(a, b, rel_tol=1e-13, abs_tol=0.0)


def test_dither_scores_properties():
    x = np.array([0.0, -0.0, 1e-300, 0.25, 0.25, 1.0, -3.5, 1e300])
    y = dither_scores(x, 0)
    assert np.all(y != x)
    rel = np.abs(y - x) / np.maximum(np.abs(x), np.finfo(float).tiny)
    assert np.all((rel >= 0.5e-8 * (1 - 1e-12)) & (rel <= 1e-8 * (1 + 1e-12)))
    assert y[0] == y[1] and y[3] == y[4], "same value, same dither"
    assert np.array_equal(dither_scores(x[::-1], 0), y[::-1]), "element-wise"
    assert not np.array_equal(dither_scores(x, 1), y), "seed matters"
    assert np.array_equal(dither_scores(x, 2**64 + 5), dither_scores(x, 5))


# --------------------------------------------------------------------------
# compare_all
# --------------------------------------------------------------------------


def screen_frame(seed: int = 31) -> pl.DataFrame:
    """Reference R on the odd grid; groups on the even grid; awkward groups too."""
    rng = np.random.default_rng(seed)
    parts = []

    def add(label, s):
        r = rng.normal(2.0 * s, 0.3)
        w = rng.lognormal(0.0, 0.5, s.size)
        parts.append(pl.DataFrame({"g": [label] * s.size, "s": s, "r": r, "w": w}))

    add("R", grid_scores(rng, 80, 1))
    for label, size in (("a", 60), ("b", 25), ("c", 120), ("d", 9)):
        add(label, grid_scores(rng, size, 0))
    add(None, grid_scores(rng, 30, 0))  # null group: a group of its own
    add("single", np.full(5, 10 / 64))  # one distinct score
    add("shared", np.concatenate([grid_scores(rng, 20, 0), [3 / 64, 3 / 64, 9 / 64]]))
    add("apart", np.array([2.0, 3.0, 3.0, 4.0]))  # all above the reference
    df = pl.concat(parts)
    df = df.with_columns(pl.col("s").cast(pl.Float64))
    return df.sample(fraction=1.0, shuffle=True, seed=seed)


def pair_mask(value):
    return pl.col("g").eq_missing(value)


@pytest.mark.parametrize("ties", ["error", "dither"])
@pytest.mark.slow
def test_compare_all_equals_compare_per_pair(ties):
    df = screen_frame()
    out = compare_all(df.lazy(), "g", "R", "s", "r", "w", ties=ties, seed=3)
    assert isinstance(out, pl.LazyFrame)
    got = out.collect(engine="in-memory")
    assert got.columns[0] == "g"
    assert sorted(got["g"].to_list(), key=str) == sorted(
        ["a", "b", "c", "d", None, "single", "shared", "apart"], key=str
    )
    stat_names = ["kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z", "kuiper_p", "ks_p"]
    for row in got.iter_rows(named=True):
        g = row["g"]
        if g == "single":
            assert row["kuiper"] is None and "too few distinct scores" in row["note"]
            assert row["n_first"] == 5
            continue
        if g == "shared" and ties == "error":
            assert row["kuiper"] is None and row["effect"] is None
            assert row["note"].startswith("2 distinct score(s) occur in both")
            continue
        one = compare(df, pair_mask(g), pair_mask("R"), "s", "r", "w", ties=ties, seed=3)
        single = one.row(0, named=True)
        # The notes name the subpopulations differently ("first" / "the group").
        if single["note"] is not None:
            single["note"] = (
                single["note"].replace("first", "the group").replace("second", "the reference")
            )
        # The significance clause differs by design: compare_all judges each group
        # by its BH q over the groups, compare by its own p (method/findings.py).
        for side in (row, single):
            if side["note"] is not None:
                rest = re.sub(r"not significant: [pq] = [^;]*(; )?", "", side["note"])
                side["note"] = rest.strip("; ") or None
        for name in [*stat_names, "effect", "n_first", "n_second", "note"]:
            if single[name] is None or isinstance(single[name], str | int):
                assert row[name] == single[name], (g, name)
            else:
                close(row[name], single[name], f"{g}: {name}", rtol=1e-12)
        if g == "apart":
            assert "do not interleave" in row["note"] and row["effect"] is not None
    # Benjamini-Hochberg across the groups with a p-value.
    p = got["kuiper_p"].to_numpy()
    have = ~np.isnan(p.astype(float))
    close(got["kuiper_q"].to_numpy()[have], ref.bh_qvalues(p[have]), "kuiper_q")
    close(got["ks_q"].drop_nulls(), ref.bh_qvalues(got["ks_p"].drop_nulls().to_numpy()), "ks_q")
    # Sorted by kuiper_z, largest first, nulls last.
    z = got["kuiper_z"].to_list()
    known = [x for x in z if x is not None]
    assert z[: len(known)] == sorted(known, reverse=True)
    assert all(x is None for x in z[len(known) :])
    streamed = out.collect(engine="streaming")
    close(streamed["kuiper"].fill_null(-1.0), got["kuiper"].fill_null(-1.0), "streaming")


def test_compare_all_matches_reference_for_one_group():
    df = screen_frame()
    df = df.filter(pl.col("g") != "apart")  # scores above 1
    got = compare_all(df, "g", "R", "s", "r", "w", variance="score")
    row = got.filter(pl.col("g") == "c").row(0, named=True)
    check_row(row, expected(df.rename({"g": "grp"}), "w", "score", first="c", second="R"), "c")


def test_compare_all_with_integer_groups():
    df = screen_frame().filter(pl.col("g").is_in(["R", "a", "b"]))
    df = df.with_columns(
        pl.col("g").replace_strict({"R": 0, "a": 1, "b": 2}, return_dtype=pl.Int32)
    )
    got = compare_all(df, "g", 0, "s", "r")
    assert got["g"].dtype == pl.Int32 and sorted(got["g"].to_list()) == [1, 2]
    with pytest.raises(ColumnTypeError, match="reference"):
        compare_all(df, "g", "R", "s", "r")


def test_compare_all_reference_must_exist():
    df = screen_frame()
    with pytest.raises(EmptySubpopulationError, match="'nowhere' does not occur"):
        compare_all(df, "g", "nowhere", "s", "r")
    with pytest.raises(EmptySubpopulationError, match="only one distinct score"):
        compare_all(df, "g", "single", "s", "r")
    with pytest.raises(InvalidParameterError):
        compare_all(df, "g", None, "s", "r")
    with pytest.raises(ColumnNotFoundError):
        compare_all(df, "nope", "R", "s", "r")


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_overlapping_selections():
    df = pair_frame(1)
    with pytest.raises(OverlapError, match=r"overlap: 70 row\(s\) are selected by both"):
        compare(df, FIRST, FIRST | SECOND, "s", "r")


@pytest.mark.parametrize("function", [compare, compare_curve])
def test_empty_or_single_score_selection(function):
    df = pair_frame(1)
    with pytest.raises(EmptySubpopulationError, match="selects no rows"):
        function(df, pl.col("grp") == "Z", SECOND, "s", "r")
    one_score = df.with_columns(
        pl.when(FIRST).then(pl.lit(0.5)).otherwise(pl.col("s")).alias("s")
    ).filter(~(SECOND & (pl.col("s") == 0.5)))
    with pytest.raises(EmptySubpopulationError, match="only one distinct score"):
        function(one_score, FIRST, SECOND, "s", "r")


def test_invalid_parameters_raise_at_call_time():
    df = pair_frame(1)
    with pytest.raises(InvalidParameterError, match="variance"):
        compare(df, FIRST, SECOND, "s", "r", variance="bernoulli")
    with pytest.raises(InvalidParameterError, match="ties"):
        compare(df, FIRST, SECOND, "s", "r", ties="jitter")
    with pytest.raises(InvalidParameterError, match="seed"):
        compare(df, FIRST, SECOND, "s", "r", seed=1.5)
    with pytest.raises(InvalidParameterError, match="fraction"):
        compare_curve(df, FIRST, SECOND, "s", "r", fraction=0.0)
    with pytest.raises(ColumnTypeError):
        compare(df, pl.col("s"), SECOND, "s", "r")
    with pytest.raises(ColumnNotFoundError):
        compare(df, FIRST, SECOND, "nope", "r")
    with pytest.raises(InvalidParameterError, match="variance"):
        compare_all(df, "grp", "B", "s", "r", variance="auto")


def test_values_are_checked_in_the_selected_rows_only():
    df = pair_frame(1)  # the C rows hold a NaN score
    compare(df, FIRST, SECOND, "s", "r")
    bad = df.with_columns(
        pl.when(FIRST & (pl.col("s") == 0.0)).then(None).otherwise(pl.col("r")).alias("r")
    )
    with pytest.raises(InvalidValuesError, match="null"):
        compare(bad, FIRST, SECOND, "s", "r")
    above = df.with_columns(pl.when(SECOND).then(pl.col("s") + 0.5).otherwise(pl.col("s")))
    compare(above, FIRST, SECOND, "s", "r")  # fine for the empirical variance
    with pytest.raises(InvalidValuesError, match=r"outside \[0, 1\]"):
        compare(above, FIRST, SECOND, "s", "r", variance="score")


def test_all_errors_are_cumdev_errors():
    for error in (OverlapError, TiedScoresError, EmptySubpopulationError, InvalidParameterError):
        assert issubclass(error, CumdevError)


def test_a_significant_dithered_comparison_warns_about_coarse_scores():
    rng = np.random.default_rng(3)
    n = 2_000
    s = np.round(rng.uniform(size=n), 1)
    g = np.where(rng.uniform(size=n) < 0.5, "a", "b")
    r = s + np.where(g == "a", 0.5, 0.0) + rng.normal(scale=0.1, size=n)
    df = pl.DataFrame({"g": g, "s": s, "r": r})
    out = df.cumdev.compare(pl.col("g") == "a", pl.col("g") == "b", "s", "r", ties="dither")
    row = out.row(0, named=True)
    # 11 distinct scores, all shared: the p-value is permuted (issue 36), at its floor
    # of 1 / 1000 draws, and the note says so instead of warning about the dither's drift.
    assert row["kuiper_p"] <= 0.001 and row["p_method"] == "permutation" and row["significant"]
    assert "11 score(s) shared" in row["note"] and "permutation within each score" in row["note"]
