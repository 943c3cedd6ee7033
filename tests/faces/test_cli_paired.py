"""The command line: ``cumdev paired``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_cumdev  # noqa: F401
from polars_cumdev.cli import main
from polars_cumdev.datasets import paired_models, paired_synthetic

MODELS = ["--score", "log10_income", "--first", "model_a", "--second", "model_b"]


@pytest.fixture(scope="module")
def households(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_paired") / "households.parquet"
    paired_models().write_parquet(path)
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_paired_by_group_prints_the_ranked_table(households: Path, tmp_path: Path, capsys) -> None:
    saved = tmp_path / "table.csv"
    args = ["paired", str(households), *MODELS, "--weight", "WGTP", "--by", "county"]
    code, out, err = run([*args, "--variance", "bernoulli", "-o", str(saved)], capsys)
    assert code == 0, err
    assert "model_a minus model_b" in out
    want = pl.read_parquet(households).cumdev.paired(
        "log10_income", "model_a", "model_b", "WGTP", by="county", variance="bernoulli"
    )
    first_line = next(line for line in out.splitlines() if "Cedar" in line)
    assert f"{want['kuiper_z'][0]:.4f}" in first_line
    assert out.index("Cedar") < out.index(want["county"][1])
    assert pl.read_csv(saved).height == want.height == 41


@pytest.mark.slow
def test_paired_overall_chart_and_points(tmp_path: Path, capsys) -> None:
    path = tmp_path / "pairs.csv"
    paired_synthetic().write_csv(path)
    base = ["paired", str(path), "--score", "score", "--first", "first", "--second", "second"]
    chart = tmp_path / "paired.svg"
    code, out, err = run([*base, "--weight", "weight", "--out", str(chart)], capsys)
    assert code == 0, err
    assert chart.read_text().lstrip().startswith("<svg")
    row = pl.read_csv(path).cumdev.paired("score", "first", "second", "weight").row(0, named=True)
    assert f"{row['kuiper_z']:.4f}" in out
    points = tmp_path / "points.parquet"
    code, _, err = run([*base, "--out", str(points), "--fraction", "0.5"], capsys)
    assert code == 0, err
    assert pl.read_parquet(points).height == 501


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--second", "missing"], "second response column 'missing' not found"),
        (["--variance", "bernoulli", "--first", "score"], "outside [0, 1]"),
    ],
)
def test_paired_errors_are_one_line(tmp_path: Path, capsys, extra: list[str], words: str) -> None:
    path = tmp_path / "pairs.parquet"
    paired_synthetic().with_columns(pl.col("score") * 3).write_parquet(path)
    args = ["paired", str(path), "--score", "score", "--first", "first", "--second", "second"]
    code, _, err = run([*args, *extra], capsys)
    assert code == 2
    assert words in err and "Traceback" not in err
    assert err.count("cumdev: error:") == 1


def test_paired_checks_its_input_and_output_in_the_users_terms(tmp_path: Path, capsys) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("score,first,second\n0.1,1,0\n0.2,oops,1\n")
    base = ["paired", str(path), "--score", "score", "--first", "first", "--second", "second"]
    code, out, err = run(base, capsys)
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        f"cumdev: error: column 'first' of {path} could not be parsed as numbers: "
        "'oops' in data row 2"
    )
    code, out, err = run([*base, "-o", str(tmp_path / "table.xlsx")], capsys)
    assert code == 2 and out == "" and "comparing" not in err  # checked before computing
    assert "the suffix must be one of .csv, .json, .parquet" in err


def test_no_group_with_a_z_is_an_error_not_a_traceback(tmp_path: Path, capsys) -> None:
    # Every group has one distinct score, so no z is defined and no chart can be drawn.
    path = tmp_path / "single.csv"
    pl.DataFrame(
        {"g": ["a", "a", "b"], "s": [0.5, 0.5, 0.2], "q": [1.0, 0.0, 1.0], "r": [0.0, 0.0, 1.0]}
    ).write_csv(path)
    args = ["paired", str(path), "--score", "s", "--first", "q", "--second", "r", "--by", "g"]
    code, _, err = run([*args, "--out", str(tmp_path / "chart.svg")], capsys)
    assert code == 2
    assert "no group has a defined kuiper_z" in err


@pytest.mark.slow
def test_paired_on_two_covariates_draws_the_curve_the_table_ranked(tmp_path: Path, capsys) -> None:
    from polars_cumdev.datasets import census

    frame = paired_models().with_columns(census(age=True)["age"])
    path = tmp_path / "pairs.parquet"
    frame.write_parquet(path)
    points = tmp_path / "points.parquet"
    models = ["--first", "model_a", "--second", "model_b", "--weight", "WGTP"]
    args = ["paired", str(path), "--score", "log10_income,age", *models, "--by", "county"]
    code, out, err = run([*args, "--out", str(points)], capsys)
    assert code == 0, err
    assert "at the same log10_income, age" in out
    assert "hilbert(log10_income, age)" in err
    table = frame.cumdev.paired(["log10_income", "age"], "model_a", "model_b", "WGTP", by="county")
    top = table.row(0, named=True)
    c = pl.read_parquet(points)["cumdiff"].to_numpy()
    assert abs((c.max() - c.min()) - top["kuiper"]) <= 1e-12 * top["kuiper"]
    chart = tmp_path / "paired.svg"
    code, _, err = run([*args, "--score", "log10_income", "--out", str(chart)], capsys)
    assert code == 2 and "names a covariate twice" in err
    code, _, err = run([*args, "--out", str(chart)], capsys)
    assert code == 0, err
    assert "along a Hilbert curve" in chart.read_text()
