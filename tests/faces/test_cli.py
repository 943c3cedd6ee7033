"""The ``cumdev`` command line: every subcommand, outputs, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_cumdev.cli import main
from polars_cumdev.datasets import calibration_linear, census

ROOT = Path(__file__).resolve().parents[2]
DATA_ARGS = ["--score", "log10_income", "--response", "has_internet", "--weight", "WGTP"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small survey as CSV and Parquet, and predictions for calibration."""
    folder = tmp_path_factory.mktemp("cli")
    households = census(n=20_000).with_columns((pl.col("rooms") >= 4).alias("big_home"))
    households.write_parquet(folder / "households.parquet")
    households.write_csv(folder / "households.csv")
    predictions = calibration_linear(2000).with_columns((pl.int_range(pl.len()) % 3).alias("fold"))
    predictions.write_parquet(folder / "predictions.parquet")
    broken = households.with_columns(
        pl.when(pl.int_range(pl.len()) < 5).then(0).otherwise(pl.col("WGTP")).alias("WGTP")
    )
    broken.write_parquet(folder / "broken.parquet")
    return folder


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "polars_cumdev.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# --------------------------------------------------------------------------- demo


@pytest.mark.slow
def test_demo_prints_the_ranked_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["demo", "--rows", "5", "--progress"], capsys)
    assert code == 0
    assert "Screening response 'has_internet'" in out
    first_rows = out.split("Cedar")[0]
    assert "county" in first_rows and "kuiper_z" in first_rows
    assert "Cedar" in out and "Marlow" in out
    assert "screening 41 groups" in err


@pytest.mark.slow
def test_demo_other_response(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["demo", "--response", "vehicles", "--rows", "3"], capsys)
    assert code == 0
    assert "'vehicles'" in out and "Alder" in out


@pytest.mark.slow
def test_demo_out_writes_report_and_charts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("polars_cumdev.report.subpopulation")
    out_dir = tmp_path / "demo"
    code, _, err = run(["demo", "--rows", "3", "--out", str(out_dir), "--progress"], capsys)
    assert code == 0, err
    assert (out_dir / "screen.svg").read_text().lstrip().startswith("<svg")
    curves = sorted(p.name for p in out_dir.glob("cumulative-*.svg"))
    assert curves in (["cumulative-Cedar.svg"], ["cumulative-Marlow.svg"])
    page = (out_dir / "report.html").read_text(encoding="utf-8")
    assert "Cedar" in page and "vegaEmbed" in page
    assert "writing report" in err


# --------------------------------------------------------------------------- screen


@pytest.mark.slow
@pytest.mark.parametrize("name", ["households.parquet", "households.csv"])
def test_screen(data_dir: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["screen", str(data_dir / name), "--by", "county", *DATA_ARGS, "--progress"], capsys
    )
    assert code == 0, err
    assert "Cedar" in out
    assert f"reading {data_dir / name} ..." in err
    assert "screened 41 groups" in err


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_screen_output_formats(
    data_dir: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / f"table.{fmt}"
    args = ["screen", str(data_dir / "households.parquet"), "--by", "county", *DATA_ARGS]
    code, _, err = run([*args, "--format", fmt, "--output", str(target)], capsys)
    assert code == 0, err
    table = {"csv": pl.read_csv, "json": pl.read_json, "parquet": pl.read_parquet}[fmt](target)
    assert table.height == 41
    assert {"county", "kuiper", "kuiper_z", "kuiper_p", "kuiper_q"} <= set(table.columns)


def test_screen_two_keys_and_empirical_variance(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["screen", str(data_dir / "households.parquet"), "--by", "county", "--by", "rooms"]
    args += ["--score", "log10_income", "--response", "vehicles", "--rows", "3"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    assert "rooms" in out


# --------------------------------------------------------------------------- curve / plot


@pytest.mark.parametrize("command", ["curve", "plot"])
@pytest.mark.parametrize("suffix", [".svg", ".json", ".csv"])
@pytest.mark.slow
def test_curve_outputs(
    data_dir: Path,
    tmp_path: Path,
    command: str,
    suffix: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / f"cedar{suffix}"
    args = [command, str(data_dir / "households.parquet"), "--subpop-column", "county"]
    args += ["--subpop-value", "Cedar", *DATA_ARGS, "--out", str(target), "--progress"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    assert "county = Cedar" in out
    assert "kuiper_z" in out
    assert f"wrote {target}" in err
    if suffix == ".svg":
        assert target.read_text().lstrip().startswith("<svg")
    elif suffix == ".json":
        assert "$schema" in json.loads(target.read_text())
    else:
        points = pl.read_csv(target)
        assert points["k"][0] == 0 and points["cumdiff"][0] == 0.0


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".html", ".parquet"])
@pytest.mark.slow
def test_curve_other_formats(
    data_dir: Path, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / f"cedar{suffix}"
    args = ["curve", str(data_dir / "households.parquet"), "--subpop-column", "county"]
    code, _, err = run([*args, "--subpop-value", "Cedar", *DATA_ARGS, "--out", str(target)], capsys)
    assert code == 0, err
    head = target.read_bytes()[:16]
    magic = {".png": b"\x89PNG", ".pdf": b"%PDF", ".html": b"<!DOCTYPE", ".parquet": b"PAR1"}
    assert head.upper().startswith(magic[suffix].upper())


def test_curve_numeric_subpopulation_and_zoom(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["curve", str(data_dir / "households.csv"), "--subpop-column", "rooms"]
    args += ["--subpop-value", "3", *DATA_ARGS, "--fraction", "0.5"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    assert "rooms = 3" in out


def test_curve_boolean_subpopulation(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["curve", str(data_dir / "households.parquet"), "--subpop-column", "big_home"]
    code, out, err = run([*args, "--subpop-value", "True", *DATA_ARGS], capsys)
    assert code == 0, err
    assert "big_home = True" in out
    code, _, err = run([*args, "--subpop-value", "maybe", *DATA_ARGS], capsys)
    assert code == 2 and "not a valid value of column 'big_home'" in err


@pytest.mark.slow
def test_curve_summary_matches_the_screen(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    households = pl.read_parquet(data_dir / "households.parquet")
    row = (
        households.cumdev.screen(
            by="county", score="log10_income", response="has_internet", weight="WGTP"
        )
        .filter(pl.col("county") == "Cedar")
        .row(0, named=True)
    )
    args = ["curve", str(data_dir / "households.parquet"), "--subpop-column", "county"]
    code, out, _ = run([*args, "--subpop-value", "Cedar", *DATA_ARGS], capsys)
    assert code == 0
    printed = dict(line.split() for line in out.splitlines()[1:])
    assert float(printed["kuiper"]) == pytest.approx(row["kuiper"], rel=1e-5)
    assert float(printed["kuiper_z"]) == pytest.approx(row["kuiper_z"], rel=1e-5)


# --------------------------------------------------------------------------- calibration


@pytest.mark.slow
def test_calibration(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(data_dir / "predictions.parquet")
    code, out, err = run(
        ["calibration", path, "--score", "score", "--response", "response"], capsys
    )
    assert code == 0, err
    assert "ecce_r" in out and "ecce_mad" in out
    target = tmp_path / "calibration.svg"
    args = ["calibration", path, "--score", "score", "--response", "response", "--by", "fold"]
    code, out, err = run([*args, "--out", str(target), "--progress"], capsys)
    assert code == 0, err
    assert "fold" in out
    assert target.read_text().lstrip().startswith("<svg")
    assert "largest ECCE-R z" in err


# --------------------------------------------------------------------------- report


@pytest.mark.slow
def test_report(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("polars_cumdev.report.subpopulation")
    target = tmp_path / "report.html"
    args = ["report", str(data_dir / "households.parquet"), "--by", "county", *DATA_ARGS]
    code, _, err = run([*args, "--top", "2", "--out", str(target), "--progress"], capsys)
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Cedar" in page
    assert "writing report" in err and f"wrote {target}" in err


@pytest.mark.slow
def test_report_on_two_covariates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("polars_cumdev.report.subpopulation")
    source = tmp_path / "aged.parquet"
    census(n=20_000, age=True).write_parquet(source)
    target = tmp_path / "report.html"
    data = ["--score", "log10_income", "--score", "age", "--response", "has_internet"]
    args = ["report", str(source), "--by", "county", *data, "--weight", "WGTP", "--top", "1"]
    code, _, err = run([*args, "--out", str(target)], capsys)
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert "along a Hilbert curve" in page and "the points along the curve" in page
    assert "reliability diagram" not in page
    code, _, err = run(["calibration", str(source), *data, "--out", "x.svg"], capsys)
    assert code == 2 and "--score must name one column here" in err


# --------------------------------------------------------------------------- errors


def _error_cases(folder: Path) -> list[tuple[list[str], str]]:
    parquet = str(folder / "households.parquet")
    return [
        (["screen", str(folder / "missing.parquet"), "--by", "county", *DATA_ARGS], "no such file"),
        # a directory is read as its Parquet files, which must all hold the columns
        (["screen", str(folder), "--by", "county", *DATA_ARGS], "not found in"),
        (["screen", parquet, "--by", "nowhere", *DATA_ARGS], "nowhere"),
        (
            ["screen", parquet, "--by", "county", "--score", "county", "--response", "rooms"],
            "dtype",
        ),
        (["screen", str(folder / "broken.parquet"), "--by", "county", *DATA_ARGS], "non-positive"),
        (
            ["curve", parquet, "--subpop-column", "rooms", "--subpop-value", "many", *DATA_ARGS],
            "not a valid value",
        ),
        (
            ["curve", parquet, "--subpop-column", "county", "--subpop-value", "Nowhere",
             *DATA_ARGS],
            "has no row with value 'Nowhere'",
        ),
        (
            ["curve", parquet, "--subpop-column", "county", "--subpop-value", "Cedar", *DATA_ARGS,
             "--out", str(folder / "chart.gif")],
            "suffix",
        ),
        (
            ["calibration", parquet, "--score", "log10_income", "--response", "has_internet"],
            "outside [0, 1]",
        ),
        (["report", parquet, "--by", "county", *DATA_ARGS, "--out", "r.txt"], "suffix"),
    ]  # fmt: skip


def test_errors_exit_2_with_one_line(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, fragment in _error_cases(data_dir):
        code, out, err = run(args, capsys)
        assert code == 2, args
        assert "Traceback" not in out
        lines = [line for line in err.splitlines() if not line.endswith("...")]
        assert len(lines) == 1, (args, err)
        assert lines[0].startswith("cumdev: error: "), (args, err)
        assert fragment in lines[0], (args, err)
        assert "Traceback" not in err


# --------------------------------------------------------------------- errors in the user's terms

SMALL_ARGS = ["--score", "s", "--response", "r"]


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small CSV files: a group column with a null, a header only, bad cells early and late."""
    folder = tmp_path_factory.mktemp("small")
    rows = 300
    groups = ["A", "B", "C", "D"] * (rows // 4)
    groups[5] = None
    frame = pl.DataFrame(
        {
            "g": groups,
            "s": [(7 * i % rows) / rows for i in range(rows)],
            "r": [(i * i) % 3 == 0 for i in range(rows)],
        }
    ).with_columns(pl.col("r").cast(pl.Int64))
    frame.write_csv(folder / "groups.csv")
    (folder / "header.csv").write_text("g,s,r\n")
    lines = (folder / "groups.csv").read_text().splitlines()
    lines[3] = "A,oops,1"  # data row 3
    (folder / "bad.csv").write_text("\n".join(lines) + "\n")
    late = ["g,s,r"] + [f"{'AB'[i % 2]},{i / 20_000},{i % 2}" for i in range(20_000)]
    late[15_000] = "A,1.5x,0"  # beyond the rows Polars infers the dtype from
    (folder / "late.csv").write_text("\n".join(late) + "\n")
    return folder


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("cumdev: error: ")]
    assert len(lines) == 1, err
    return lines[0].removeprefix("cumdev: error: ")


def test_unknown_subpop_value_is_named_with_the_values_the_column_has(
    small_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(small_dir / "groups.csv")
    args = ["curve", path, "--subpop-column", "g", "--subpop-value", "Z", *SMALL_ARGS]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert _error_line(err) == (
        f"column 'g' has no row with value 'Z' in {path} (it has e.g. 'A', 'B', 'C', ...)"
    )


def test_a_null_in_the_selecting_column_is_not_selected(
    small_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = small_dir / "groups.csv"
    args = ["curve", str(path), "--subpop-column", "g", "--subpop-value", "B", *SMALL_ARGS]
    code, out, err = run(args, capsys)
    assert code == 0, err
    printed = dict(line.split() for line in out.splitlines()[1:])
    frame = pl.read_csv(path)
    expected = frame.filter(pl.col("g") == "B")["s"].n_unique()
    assert int(printed["n_scores"]) == expected
    points = frame.cumdev.curve(subpop=pl.col("g").eq_missing("B"), score="s", response="r")
    kuiper = points["cumdiff"].max() - points["cumdiff"].min()
    assert float(printed["kuiper"]) == pytest.approx(kuiper, rel=1e-5)


def test_library_messages_name_the_selection_as_the_user_gave_it(
    small_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(small_dir / "groups.csv")
    args = ["curve", path, "--subpop-column", "g", "--subpop-value", "A", *SMALL_ARGS]
    code, _, err = run([*args, "--fraction", "0.001"], capsys)
    assert code == 2
    message = _error_line(err)
    assert "keeps no point of subpop 'g = A'" in message
    assert "col(" not in message


def test_a_header_only_file_has_no_data_rows(
    small_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(small_dir / "header.csv")
    for args in (
        ["screen", path, "--by", "g", *SMALL_ARGS],
        ["curve", path, "--subpop-column", "g", "--subpop-value", "A", *SMALL_ARGS],
        ["calibration", path, *SMALL_ARGS],
    ):
        code, _, err = run(args, capsys)
        assert code == 2
        assert _error_line(err) == f"{path} has no data rows"


@pytest.mark.parametrize(
    ("name", "cell", "row"), [("bad.csv", "oops", 3), ("late.csv", "1.5x", 15_000)]
)
def test_a_cell_that_is_not_a_number_is_named_with_its_row(
    small_dir: Path, name: str, cell: str, row: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(small_dir / name)
    code, _, err = run(["screen", path, "--by", "g", *SMALL_ARGS], capsys)
    assert code == 2
    assert _error_line(err) == (
        f"column 's' of {path} could not be parsed as numbers: '{cell}' in data row {row}"
    )


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        ("table.xlsx", "the suffix must be one of .csv, .json, .parquet"),
        ("nowhere/t.csv", "no such directory"),
    ],
)
def test_screen_output_is_checked_before_computing(
    small_dir: Path, tmp_path: Path, output: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["screen", str(small_dir / "groups.csv"), "--by", "g", *SMALL_ARGS]
    code, out, err = run([*args, "--output", str(tmp_path / output)], capsys)
    assert code == 2
    assert fragment in _error_line(err)
    assert out == "" and "screening" not in err  # nothing computed, nothing printed
    # An explicit --format accepts any suffix.
    code, _, err = run(
        [*args, "--rows", "0", "--output", str(tmp_path / "t.txt"), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert pl.read_csv(tmp_path / "t.txt").height == 5


def test_rows_zero_prints_only_the_count(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["screen", str(data_dir / "households.parquet"), "--by", "county", *DATA_ARGS]
    code, out, err = run([*args, "--rows", "0"], capsys)
    assert code == 0, err
    assert out == "41 rows not printed (--rows 41 prints them)\n"
    with pytest.raises(SystemExit):
        main(["screen", "--help"])
    assert "0 prints only how many" in " ".join(capsys.readouterr().out.split())


# --------------------------------------------------------------------------- a null group


@pytest.fixture(scope="module")
def null_group_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """CSV files whose group column is sometimes empty; that group deviates most."""
    folder = tmp_path_factory.mktemp("null-group")
    rng = np.random.default_rng(5)
    m = 3000
    group = rng.choice(["north", "south", "east", ""], size=m, p=[0.4, 0.3, 0.2, 0.1])
    score = np.round(rng.uniform(0.05, 0.95, size=m), 3)
    probability = np.where(group == "", 0.5 * score, score)
    frame = pl.DataFrame(
        {
            "region": np.where(group == "", None, group),
            "score": score,
            "response": (rng.uniform(size=m) < probability).astype(np.int64),
        }
    )
    frame.write_csv(folder / "predictions.csv")
    return folder


@pytest.mark.slow
def test_report_drills_into_the_null_group(
    null_group_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("polars_cumdev.report.subpopulation")
    target = tmp_path / "report.html"
    args = ["report", str(null_group_dir / "predictions.csv"), "--by", "region"]
    args += ["--score", "score", "--response", "response", "--top", "2", "--out", str(target)]
    code, _, err = run(args, capsys)
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert "<h2>region = (null)" in page  # the heading names the group


def test_calibration_by_draws_the_null_group(
    null_group_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = null_group_dir / "predictions.csv"
    target = tmp_path / "points.csv"
    args = ["calibration", str(path), "--score", "score", "--response", "response"]
    code, _, err = run([*args, "--by", "region", "--out", str(target), "--progress"], capsys)
    assert code == 0, err
    assert "largest ECCE-R z (region = (null))" in err
    frame = pl.read_csv(path)
    worst = frame.cumdev.calibration(score="score", response="response", by="region")
    assert worst["region"][0] is None  # the null group is the most miscalibrated
    expected = frame.filter(pl.col("region").is_null()).cumdev.calibration_curve(
        score="score", response="response"
    )
    assert_frame_equal(pl.read_csv(target), expected, check_dtypes=False)


@pytest.mark.slow
def test_subprocess_exit_codes(data_dir: Path, tmp_path: Path) -> None:
    ok = _subprocess(
        "screen", str(data_dir / "households.parquet"), "--by", "county", *DATA_ARGS, cwd=tmp_path
    )
    assert ok.returncode == 0, ok.stderr
    assert "Cedar" in ok.stdout and ok.stderr == ""  # stderr is a pipe: no progress

    missing = _subprocess("screen", "nope.csv", "--by", "county", *DATA_ARGS, cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr == "cumdev: error: no such file: nope.csv\n"

    bad = _subprocess(
        "screen", str(data_dir / "broken.parquet"), "--by", "county", *DATA_ARGS, cwd=tmp_path
    )
    assert bad.returncode == 2
    errors = [line for line in bad.stderr.splitlines() if line.startswith("cumdev: error: ")]
    assert len(errors) == 1 and "Traceback" not in bad.stderr
    assert "WGTP" in errors[0]

    usage = _subprocess("screen", cwd=tmp_path)
    assert usage.returncode == 2 and "usage:" in usage.stderr

    version = _subprocess("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("cumdev ")
