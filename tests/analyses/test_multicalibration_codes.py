"""Issue 37, items 1-3: the segment features' level codes, at the edges of their types.

Every segment must hold exactly the rows its own condition selects, and the
full population all of them, whatever the feature's values: unsigned integers
from 2^63 on, signed ones at the ends of Int64, more than 2^16 levels, and
integers a double cannot tell apart (beyond 2^53). The oracle is Polars
itself: the condition of each row, applied to the frame with
:func:`~polars_cumdev.multicalibration.subpop`, and the value counts.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.multicalibration import subpop
from polars_cumdev.multicalibration.family import coded_features, layout


def _frame(values: pl.Series, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, values.len())
    return pl.DataFrame({"v": values, "p": p, "y": (rng.random(values.len()) < p).astype(float)})


def _audit(frame: pl.DataFrame, **family: object) -> pl.DataFrame:
    return frame.cumdev.multicalibration("p", "y", segments=pc.segments(**family))


def _each_segment_holds_its_rows(frame: pl.DataFrame, table: pl.DataFrame) -> None:
    full = table.filter(pl.col("depth") == 0)
    assert full.get_column("n").to_list() == [frame.height]
    for row in table.iter_rows(named=True):
        assert frame.filter(subpop(row)).height == row["n"], row["condition"]
    assert table.filter(pl.col("depth") == 1).get_column("n").sum() == frame.height


EDGES = {
    "UInt64 from 2^63": pl.Series("v", np.uint64(2**63) + np.arange(20, dtype=np.uint64)),
    "UInt64 to 2^64-1": pl.Series("v", np.uint64(2**64 - 1) - np.arange(20, dtype=np.uint64)),
    "Int64 to 2^63-1": pl.Series("v", np.int64(2**63 - 1) - np.arange(20, dtype=np.int64)),
    "Int64 from -2^63": pl.Series("v", np.int64(-(2**63)) + np.arange(20, dtype=np.int64)),
}


@pytest.mark.parametrize("rows", [20, 5000])
@pytest.mark.parametrize("edge", list(EDGES))
def test_categorical_integers_at_the_ends_of_their_type(edge, rows):
    """Item 1: on main, UInt64 from 2^63 crashed the process, corrupted the heap or
    gave the full population n = 10 of 20 (the compiled count subtracted 2^63 as
    an unsigned number); Int64 at 2^63 - 1 raised Polars' raw cast error."""
    levels = EDGES[edge]
    values = levels.gather(np.random.default_rng(rows).integers(0, 20, rows))
    frame = _frame(values)
    table = _audit(frame, categorical=["v"], depth=1, levels=30, min_rows=1)
    _each_segment_holds_its_rows(frame, table)
    counts = frame.get_column("v").value_counts()
    assert table.filter(pl.col("depth") == 1).height == counts.height
    by_label = dict(zip(*table.select("v", "n").to_dict().values(), strict=True))
    for value, n in counts.iter_rows():
        assert by_label[str(value)] == n


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
@pytest.mark.parametrize("engine", ["kernel", "polars"])
@pytest.mark.parametrize("analysis", ["screen", "calibration"])
def test_group_keys_from_two_to_the_63(analysis, engine):
    """Item 1, the group numbers of ``by``: UInt64 keys from 2^63 on reached the
    compiled walk of ``calibration`` as an offset Numba cannot type (a raw
    TypingError on main). The same statistics as the keys written as text."""
    values = EDGES["UInt64 from 2^63"].gather(np.arange(3000) % 20)
    frame = _frame(values)
    if analysis == "screen":
        out = frame.cumdev.screen("v", "p", "y", engine=engine)
        expected = frame.cumdev.screen(pl.col("v").cast(pl.String), "p", "y", engine=engine)
    else:
        out = frame.cumdev.calibration("p", "y", by="v", engine=engine)
        text = frame.with_columns(pl.col("v").cast(pl.String))
        expected = text.cumdev.calibration("p", "y", by="v", engine=engine)
    assert out.height == 20 and out.get_column("n").sum() == 3000
    out = out.with_columns(pl.col("v").cast(pl.String)).sort("v")
    assert out.drop("v").equals(expected.sort("v").drop("v"))


@pytest.mark.slow
def test_level_codes_wider_than_16_bits():
    """Item 2 (fast): 70,001 levels keep 70,001 distinct codes in the walk's code
    matrix (on main it was 16-bit, so code 65,536 read as 0)."""
    values = pl.Series("v", [str(k) for k in range(70_001)])
    family = pc.segments(categorical=["v"], depth=1, levels=70_001, min_rows=1)
    coded = coded_features(values.to_frame(), family)
    codes, *_ = layout(coded, family.subsets())
    assert np.unique(codes[0]).shape[0] == 70_001
    assert np.array_equal(codes[0].astype(np.int64), coded[0].codes)


@pytest.mark.slow
def test_seventy_thousand_levels():
    """Item 2, the issue's case: 70,000 distinct strings on 140,000 rows give
    70,001 segments (the full population and one a value), each of 2 rows (on
    main: 65,537 segments, distinct values pooled under one label). About 3 s:
    the family is large, as the case requires."""
    values = pl.Series("v", [str(k % 70_000) for k in range(140_000)])
    frame = _frame(values)
    table = _audit(frame, categorical=["v"], depth=1, levels=70_000, min_rows=1)
    assert table.height == 70_001 and table.get_column("dropped").to_list()[0] == 0
    single = table.filter(pl.col("depth") == 1)
    assert single.get_column("n").unique().to_list() == [2]
    assert single.get_column("v").n_unique() == 70_000
    for row in single.sample(50, seed=1).iter_rows(named=True):
        assert frame.filter(subpop(row)).height == 2


def test_integers_beyond_two_to_the_53_stay_apart():
    """Item 3, the issue's case: 2^60 + 1 and 2^60 + 3 are one double; on main they
    became one level labelled 2^60 whose condition selected no row."""
    values = pl.Series("v", [2**60 + 1, 2**60 + 3] * 10, dtype=pl.Int64)
    frame = _frame(values)
    table = _audit(frame, numerical=["v"], depth=1, levels=3, min_rows=1)
    assert sorted(table.filter(pl.col("depth") == 1).get_column("v").to_list()) == [
        str(2**60 + 1),
        str(2**60 + 3),
    ]
    _each_segment_holds_its_rows(frame, table)


@pytest.mark.slow  # over a second: the full suite runs it, the fast subset not
@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64, pl.Int128])
@pytest.mark.parametrize("nulls", [False, True])
def test_quantile_bins_of_wide_integers_are_shifted_bins(dtype, nulls):
    """Item 3, many distinct values: integers k + 2^60 (or + 2^63, or + 2^100) fall
    into the bins k alone falls into, since the cuts move with the values (and for
    integers a cut and its floor select the same rows); on main the shifted values
    became a few doubles and their bins' conditions selected other rows."""
    rng = np.random.default_rng(5)
    small = rng.integers(0, 500, 400)
    shift = {pl.Int64: 2**60, pl.UInt64: 2**63, pl.Int128: 2**100}[dtype]
    wide = [shift + int(k) for k in small]
    if nulls:
        wide[:30] = [None] * 30
    frame = _frame(pl.Series("v", wide, dtype=dtype), seed=3)
    narrow = frame.with_columns(
        pl.Series("v", [None] * 30 + small[30:].tolist()) if nulls else pl.Series("v", small)
    )
    table = _audit(frame, numerical=["v"], depth=1, levels=4, min_rows=1)
    plain = _audit(narrow, numerical=["v"], depth=1, levels=4, min_rows=1)
    _each_segment_holds_its_rows(frame, table)
    for kind in (table, plain):
        assert kind.filter(pl.col("depth") == 1).height == 4 + nulls
    # the same partition of the rows: each segment has the same rows and statistics
    key = ["n", "ecce_r"]
    assert table.sort(key).select(key).equals(plain.sort(key).select(key))
