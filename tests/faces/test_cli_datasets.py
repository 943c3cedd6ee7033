"""``cumdev datasets`` (issue 40, item 8): the CLI writes its bundled example data to a file.

Trying the subcommands needed Python first, to write the data they read.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from polars_cumdev.cli.datasets import EXAMPLES
from polars_cumdev.cli.main import main
from polars_cumdev.datasets import census, weekly_predictions


def test_lists_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("census", "weekly_predictions", "calibration_oscillating", "census_scored"):
        assert name in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "suffix", [".csv", pytest.param(".parquet", marks=pytest.mark.slow), ".ndjson", ".ipc"]
)
def test_writes_an_example_the_other_commands_read(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"census{suffix}"
    assert main(["datasets", "census", "--output", str(path)]) == 0
    reader = {".csv": pl.read_csv, ".parquet": pl.read_parquet}.get(suffix)
    if reader is not None:
        back = reader(path)
        want = census()
        assert back.columns == want.columns and back.height == want.height
        assert back.get_column("WGTP").to_list() == want.get_column("WGTP").to_list()
    if suffix in (".csv", ".parquet"):  # what the other subcommands read
        argv = ["screen", str(path), "--by", "county", "--score", "log10_income"]
        assert main([*argv, "--response", "has_internet", "--weight", "WGTP"]) == 0


def test_weekly_predictions_keep_their_times(tmp_path: Path) -> None:
    path = tmp_path / "weekly.parquet"
    assert main(["datasets", "weekly_predictions", "-o", str(path)]) == 0
    assert pl.read_parquet(path).equals(weekly_predictions())


@pytest.mark.slow
def test_every_example_is_written(tmp_path: Path) -> None:
    for name in EXAMPLES:
        assert main(["datasets", name, "-o", str(tmp_path / f"{name}.parquet")]) == 0
        assert pl.read_parquet(tmp_path / f"{name}.parquet").height > 0


def test_bad_names_and_suffixes_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["datasets", "nope", "-o", str(tmp_path / "x.csv")]) == 2
    assert "no example named 'nope'" in capsys.readouterr().err
    assert main(["datasets", "census", "-o", str(tmp_path / "x.txt")]) == 2
    assert "suffix" in capsys.readouterr().err
    assert not (tmp_path / "x.txt").exists()
