"""The significance rule of the located stretch (polars_cumdev.method.findings), everywhere.

A stretch is stated only for a group whose BH-adjusted Kuiper q (p for a
single comparison) is at most ``level``; on pure noise nothing is stated, on
planted data the deviating group keeps its stretch.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference as ref

from polars_cumdev import compare
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.multicalibration import multicalibration, segments
from polars_cumdev.paired import paired
from polars_cumdev.subpopulation import curve, screen


def noise(seed: int = 3, rows: int = 4_000, groups: int = 8) -> pl.DataFrame:
    """No group deviates: the response depends on the score only."""
    rng = np.random.default_rng(seed)
    s = rng.random(rows)
    return pl.DataFrame(
        {
            "g": rng.integers(0, groups, rows),
            "s": s,
            "r": (rng.random(rows) < s).astype(np.float64),
            "q": (rng.random(rows) < s).astype(np.float64),
        }
    )


def planted(seed: int = 4, rows: int = 4_000) -> pl.DataFrame:
    """Group 0 has responses 1 on the middle scores: a clear, located deviation."""
    df = noise(seed, rows)
    middle = (pl.col("g") == 0) & pl.col("s").is_between(0.4, 0.6)
    return df.with_columns(pl.when(middle).then(1.0).otherwise(pl.col("r")).alias("r"))


def assert_not_stated(rows: pl.DataFrame, symbol: str = "q") -> None:
    assert rows.select(LOCATION_COLUMNS).null_count().row(0) == (rows.height,) * 4
    notes = rows["note"].to_list()
    assert all(n.startswith(f"not significant: {symbol} = ") for n in notes), notes


@pytest.mark.parametrize("engine", ["polars", "kernel"])
@pytest.mark.slow
def test_noise_states_no_stretch(engine: str) -> None:
    df = noise()
    out = screen(df, "g", "s", "r", engine=engine)
    assert (out["kuiper_q"] > 0.05).all()  # the data must be noise for the test to mean much
    assert_not_stated(out)
    # The statistics stay: only the stretch is withheld.
    assert out["kuiper_z"].null_count() == 0 and out["kuiper_p"].null_count() == 0
    searched = screen(df, "g", "s", "r", engine=engine, level=1.0)
    assert searched["from_score"].null_count() < searched.height  # the search alone finds some


@pytest.mark.slow
def test_planted_group_keeps_its_stretch() -> None:
    df = planted()
    out = screen(df, "g", "s", "r")
    everything = screen(df, "g", "s", "r", level=1.0)
    top = out.row(0, named=True)
    assert top["g"] == 0 and top["kuiper_q"] <= 0.05 and top["note"] is None
    same = everything.filter(pl.col("g") == 0).row(0, named=True)
    assert [top[c] for c in LOCATION_COLUMNS] == [same[c] for c in LOCATION_COLUMNS]
    assert 0.35 < top["from_score"] < top["to_score"] < 0.65 and top["deviation"] > 0
    assert_not_stated(out.filter(pl.col("kuiper_q") > 0.05))


@pytest.mark.slow
def test_the_rule_reads_an_independent_bh_q() -> None:
    df = planted(5)
    out = screen(df, "g", "s", "r")
    p = out["kuiper_p"].to_numpy()
    q = np.asarray(ref.bh_qvalues(p))
    for level in (0.01, 0.05, 0.5):
        judged = screen(df, "g", "s", "r", level=level)
        stated = judged["from_score"].is_not_null().to_numpy()
        assert (stated <= (q <= level)).all(), level  # never stated above the level
        suffix = f"> {level:g}"
        notes = judged.filter(pl.Series(q > level))["note"].to_list()
        assert all(n.startswith("not significant") and n.endswith(suffix) for n in notes)


@pytest.mark.parametrize("level", [0, -0.1, 1.5, "0.05", True, None])
def test_level_must_be_in_zero_one(level: object) -> None:
    with pytest.raises(InvalidParameterError, match="`level`"):
        screen(noise(), "g", "s", "r", level=level)  # type: ignore[arg-type]


def test_calibration_single_uses_p_and_groups_use_q() -> None:
    df = noise(5)
    overall = calibration(df, "s", "r").row(0, named=True)
    assert overall["ecce_r_p"] > 0.05
    assert overall["from_score"] is None
    assert overall["note"].startswith("not significant: p = ")
    by = calibration(df, "s", "r", by="g")
    assert_not_stated(by)
    miscalibrated = df.with_columns((pl.col("s") * 0.7).alias("s"))
    row = calibration(miscalibrated, "s", "r").row(0, named=True)
    assert row["ecce_r_p"] <= 0.05 and row["from_score"] is not None and row["note"] is None


def test_compare_and_compare_all() -> None:
    df = noise().with_columns(pl.col("s") + pl.col("g") * 1e-9)  # disjoint scores per group
    # variance="score": the responses are Bernoulli(score), as the noise was drawn.
    one = compare.compare(df, pl.col("g") == 1, pl.col("g") == 2, "s", "r", variance="score")
    row = one.row(0, named=True)
    assert row["kuiper_p"] > 0.05 and row["from_score"] is None
    assert row["note"].startswith("not significant: p = ")
    every = compare.compare_all(df, "g", 0, "s", "r", variance="score")
    assert (every["kuiper_q"] > 0.05).all()
    assert_not_stated(every)


def test_paired_rule() -> None:
    df = noise()
    out = paired(df, "s", "q", "r", by="g")
    assert (out["kuiper_q"] > 0.05).all()
    assert_not_stated(out)
    shifted = df.with_columns(pl.when(pl.col("s") > 0.5).then(1.0).otherwise("q").alias("q"))
    row = paired(shifted, "s", "q", "r").row(0, named=True)
    assert row["kuiper_p"] <= 0.05 and row["from_score"] is not None


def test_curves_flag_only_significant_stretches() -> None:
    df = planted()
    assert curve(df, pl.col("g") == 0, "s", "r")["located"].any()
    flat = curve(df, pl.col("g") == 3, "s", "r")
    searched = curve(df, pl.col("g") == 3, "s", "r", level=1.0)
    p = float(ref.kuiper_pvalue_naive(_z(flat)))
    assert p > 0.05, "group 3 must be noise"
    assert not flat["located"].any()
    assert searched["located"].any() == (_z(flat) > 2.0)
    assert not calibration_curve(noise(5), "s", "r")["located"].any()


def _z(points: pl.DataFrame) -> float:
    c = points["cumdiff"].to_numpy()
    return float((max(c.max(), 0.0) - min(c.min(), 0.0)) / points["sigma"][0])


@pytest.mark.parametrize("key", ["to_zone", "from_state"])
@pytest.mark.slow
def test_keys_named_like_a_stretch_keep_their_values(key: str) -> None:
    # The rule nulls the stretch's own columns, not every column named from_* / to_*: a
    # pattern did, and a group keyed "to_zone" lost its key wherever it was not significant.
    df = noise().with_columns(pl.format("zone {}", "g").alias(key))
    keys = sorted(df[key].unique().to_list())
    tables = {
        "screen": screen(df, key, "s", "r"),
        "calibration": calibration(df, "s", "r", by=key),
        "paired": paired(df, "s", "q", "r", by=key),
    }
    for name, out in tables.items():
        assert (out["kuiper_q" if name != "calibration" else "ecce_r_q"] > 0.05).all(), name
        assert sorted(out[key].to_list()) == keys, name
        assert_not_stated(out)
    family = segments([key], depth=1, levels=8, min_rows=1)
    audit = multicalibration(df, "s", "r", segments=family)
    tested = audit.filter(pl.col("p_family").is_not_null())
    assert tested.height and (tested["p_family"] > 0.05).all()
    assert set(tested[key].drop_nulls().to_list()) <= set(keys)
    assert tested[key].null_count() < tested.height
