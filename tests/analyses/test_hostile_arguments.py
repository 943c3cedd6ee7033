"""Hostile arguments get a clear CumdevError (or a sensible result), never a raw error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from polars_cumdev import hilbert_index, ks_pvalue, kuiper_pvalue
from polars_cumdev.cli import main
from polars_cumdev.errors import CumdevError
from polars_cumdev.partitioned import screen_partitioned

HUGE = 10**30


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    n = 400
    score = rng.uniform(size=n)
    return pl.DataFrame(
        {
            "g": rng.choice(["a", "b"], n),
            "s": score,
            "r": (rng.uniform(size=n) < score).astype(float),
            "w": rng.uniform(0.5, 2.0, n),
            "kuiper": rng.choice(["x", "y"], n),
            "_cd_member": rng.uniform(size=n),
        }
    )


REFUSED: dict[str, tuple[Callable[[pl.DataFrame], Any], str]] = {
    "calibration by an output name": (
        lambda f: f.cumdev.calibration("s", "r", by="kuiper"),
        "'kuiper' clashes with an output column",
    ),
    "screen by an int": (lambda f: f.cumdev.screen(1, "s", "r"), "`by` must be a column name"),
    "reliability resamples": (
        lambda f: f.cumdev.reliability("s", "r", resamples=HUGE),
        "`resamples` must be an int from 0 to",
    ),
    "reliability bins": (lambda f: f.cumdev.reliability("s", "r", bins=HUGE), "`bins` must be"),
    "ece bins": (lambda f: f.cumdev.ece("s", "r", bins=HUGE), "`bins` must be"),
    "ece_sweep bins": (lambda f: f.cumdev.ece_sweep("s", "r", bins=[2, HUGE]), "`bins` must be"),
    "corp resamples": (
        lambda f: f.cumdev.corp_curve("s", "r", resamples=HUGE),
        "`resamples` must be",
    ),
    "curve of an internal name, kernel": (
        lambda f: f.cumdev.curve(pl.col("g") == "a", "_cd_member", "r", engine="kernel"),
        "'_cd_member' starts with '_cd_'",
    ),
    "curve of an internal name, polars": (
        lambda f: f.cumdev.curve(pl.col("g") == "a", "_cd_member", "r", engine="polars"),
        "'_cd_member' starts with '_cd_'",
    ),
    "screen weighted by an internal name": (
        lambda f: f.cumdev.screen("g", "s", "r", "_cd_member"),
        "'_cd_member' starts with '_cd_'",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_a_clear_message(frame: pl.DataFrame, case: str) -> None:
    call, words = REFUSED[case]
    with pytest.raises(CumdevError) as caught:
        result = call(frame)
        if isinstance(result, pl.LazyFrame):
            result.collect()
    assert words in str(caught.value), str(caught.value)


@pytest.mark.parametrize("function", [ks_pvalue, kuiper_pvalue])
def test_pvalue_of_text(function: Callable[[Any], Any]) -> None:
    with pytest.raises(CumdevError, match="must be a number"):
        function("a")
    assert function(2.0) == function(np.float64(2.0))


def test_hilbert_index_of_too_many_columns() -> None:
    data = pl.DataFrame({f"c{i}": [1.0, 2.0, 3.0] for i in range(70)})
    with pytest.raises(CumdevError, match=r"at most 63 covariate columns.*got 70"):
        data.select(hilbert_index(*data.columns))
    sixty_three = data.select(hilbert_index(*data.columns[:63]).alias("h"))["h"]
    assert sixty_three.n_unique() == 2  # one bit per column: two cells


@pytest.mark.slow
def test_report_top_beyond_the_groups_draws_them_all(frame: pl.DataFrame, tmp_path: Path) -> None:
    path = frame.cumdev.report("g", "s", "r", "w", path=tmp_path / "r.html", top=HUGE)
    every = frame.cumdev.report("g", "s", "r", "w", path=tmp_path / "two.html", top=2)
    sections = path.read_text(encoding="utf-8").count("<section>")
    assert sections == every.read_text(encoding="utf-8").count("<section>") >= 3


@pytest.mark.slow
def test_partitioned_ranges_beyond_the_rows_give_the_screen(frame: pl.DataFrame) -> None:
    many = screen_partitioned(frame.lazy(), "g", "s", "r", "w", ranges=HUGE).sort("g")
    whole = frame.cumdev.screen("g", "s", "r", "w").sort("g")
    for name in ("kuiper", "ks", "sigma"):
        np.testing.assert_allclose(many[name], whole[name], rtol=1e-9)


def test_cli_reads_a_directory_of_parquet(
    frame: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    frame.head(150).write_parquet(folder / "a.parquet")
    frame.tail(250).write_parquet(folder / "b.parquet")
    args = ["--by", "g", "--score", "s", "--response", "r", "--rows", "0"]
    table = tmp_path / "t.csv"
    assert main(["screen", str(folder), *args, "--output", str(table)]) == 0
    whole = frame.cumdev.screen("g", "s", "r").sort("g")
    np.testing.assert_allclose(pl.read_csv(table).sort("g")["kuiper"], whole["kuiper"], 1e-12)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["screen", str(empty), *args]) == 2
    assert "without .parquet files" in capsys.readouterr().err
