"""Defaults that do not hide (issue 36, item 5): which levels a feature keeps, and what is pooled.

By default (``levels=None``) a categorical feature keeps every value with at
least ``min_rows`` rows (50 at most) and pools the rest into ``(other)``; the
table's ``pooled`` column, the summary, the command line and the report say
what was pooled. Before, ``levels=3`` pooled 39 of the 41 counties of
``census_scored`` (the two planted ones included) and the command printed
"0 significant".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.cli import main
from polars_cumdev.multicalibration import multicalibration, summary
from polars_cumdev.multicalibration.family import MAX_LEVELS


def _frame(rows: int = 3_000, seed: int = 2) -> pl.DataFrame:
    """Levels of 400, 200, ... rows and a tail of rare ones (fewer than 10 rows each)."""
    rng = np.random.default_rng(seed)
    sizes = [1_200, 800, 500, 300, 150, 40, 9, 1]
    county = np.repeat([f"c{i}" for i in range(len(sizes))], sizes)
    rows = county.shape[0]
    s = rng.uniform(0.05, 0.95, rows)
    return pl.DataFrame(
        {
            "s": s,
            "y": (rng.random(rows) < s).astype(float),
            "county": county,
            "x": rng.normal(size=rows),
        }
    )


def test_default_keeps_every_value_with_min_rows() -> None:
    table = multicalibration(_frame(), "s", "y", segments=pc.segments(["county"], depth=1))
    shown = set(table["county"].drop_nulls().to_list())
    assert shown == {"c0", "c1", "c2", "c3", "c4", "c5", "(other)"}
    assert table["pooled"].unique().to_list() == ["county: 2 values, 10 rows"]
    facts = summary(table).row(0, named=True)
    assert facts["pooled"] == "county: 2 values, 10 rows"


def test_explicit_levels_keep_their_old_meaning_and_nothing_pooled_says_so() -> None:
    family = pc.segments(["county"], depth=1, levels=3)
    table = multicalibration(_frame(), "s", "y", segments=family)
    assert set(table["county"].drop_nulls().to_list()) == {"c0", "c1", "(other)"}
    assert table["pooled"][0] == "county: 6 values, 1,000 rows"
    family = pc.segments(["county"], depth=1, levels=20)
    assert multicalibration(_frame(), "s", "y", segments=family)["pooled"].null_count() > 0


def test_the_cap_on_kept_values() -> None:
    rng = np.random.default_rng(0)
    rows = 120 * 20
    s = rng.uniform(0.05, 0.95, rows)
    frame = pl.DataFrame(
        {"s": s, "y": (rng.random(rows) < s).astype(float), "g": np.repeat(np.arange(120), 20)}
    )
    table = multicalibration(frame, "s", "y", segments=pc.segments(["g"], depth=1))
    assert table.filter(pl.col("depth") == 1).height == MAX_LEVELS + 1
    assert table["pooled"][0] == f"g: {120 - MAX_LEVELS} values, {20 * (120 - MAX_LEVELS):,} rows"


def test_cli_says_what_is_pooled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "data.parquet"
    _frame().write_parquet(path)
    args = ["multicalibration", str(path), "--score", "s", "--response", "y"]
    assert main([*args, "--categorical", "county", "--depth", "1"]) in (0, None)
    assert "pooled into (other): county: 2 values, 10 rows" in capsys.readouterr().out
    assert main([*args, "--numerical", "x", "--depth", "1"]) in (0, None)
    assert "pooled into (other): nothing" in capsys.readouterr().out


@pytest.mark.slow
def test_census_defaults_name_the_planted_counties(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command of the issue, default flags: Marlow and Cedar are named (z 6.5 and 5.6)."""
    from polars_cumdev.datasets import census_scored

    path = tmp_path / "census_scored.parquet"
    census_scored().write_parquet(path)
    code = main(
        [
            "multicalibration", str(path), "--score", "score", "--response", "has_internet",
            "--weight", "WGTP", "--categorical", "county", "--numerical", "log10_income",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code in (0, None)
    assert "0 significant" not in out
    assert "county = Marlow (" in out and "county = Cedar (" in out
    assert "pooled into (other): nothing" in out
