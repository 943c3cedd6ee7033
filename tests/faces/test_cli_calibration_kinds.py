"""``cumdev calibration --kind``, ``--target mean`` and ``--quantile``: tables, charts, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_cumdev.cli import main

PROBS = ["p_cat", "p_dog", "p_eel"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kinds")
    rng = np.random.default_rng(7)
    m = 3000
    raw = rng.gamma(1.0, size=(m, 3)).round(1) + 0.05
    p = raw / raw.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(3, p=np.roll(row, int(i % 5 == 0))) for i, row in enumerate(p)])
    classes = pl.DataFrame(
        {
            **{c: p[:, i] for i, c in enumerate(PROBS)},
            "animal": np.array(PROBS)[labels],
            "fold": np.arange(m) % 2,
        }
    )
    x = rng.uniform(-2, 2, size=m).round(2)
    y = x + 0.4 * (x > 1) + (0.5 + 0.3 * np.abs(x)) * rng.normal(size=m)
    numbers = pl.DataFrame({"m": x, "q90": x + 1.2816 * (0.5 + 0.3 * np.abs(x)), "y": y})
    paths = {"classes": folder / "classes.csv", "numbers": folder / "numbers.parquet"}
    classes.write_csv(paths["classes"])
    numbers.write_parquet(paths["numbers"])
    return paths


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_top_label_prints_the_table_and_saves_the_curve(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = tmp_path / "top.csv"
    args = ["calibration", str(files["classes"]), "--score", ",".join(PROBS)]
    code, out, err = run(
        [*args, "--response", "animal", "--kind", "top-label", "--out", str(points)], capsys
    )
    assert code == 0, err
    frame = pl.read_csv(files["classes"])
    want = frame.cumdev.calibration(PROBS, "animal", kind="top-label").row(0, named=True)
    assert "ecce_r" in out and f"{want['ecce_r']:.4f}" in out
    curve = frame.cumdev.calibration_curve(PROBS, "animal", kind="top-label")
    assert_frame_equal(pl.read_csv(points), curve, check_dtypes=False, rel_tol=1e-12)


@pytest.mark.slow
def test_class_wise_per_fold_ranks_classes_and_draws_the_worst(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "worst.svg"
    args = ["calibration", str(files["classes"]), "--response", "animal", "--kind", "class-wise"]
    args += ["--score", PROBS[0], "--score", ",".join(PROBS[1:]), "--by", "fold"]
    code, out, err = run([*args, "--out", str(chart), "--progress"], capsys)
    assert code == 0, err
    table = pl.read_csv(files["classes"]).cumdev.calibration(
        PROBS, "animal", kind="class-wise", by="fold"
    )
    assert table.height == 6 and "ecce_r_holm" in out and "class" in out
    worst = table.row(0, named=True)
    assert f"fold = {worst['fold']}, class = {worst['class']}" in err
    assert chart.read_text().startswith("<svg")


@pytest.mark.parametrize(
    ("flags", "score", "options"),
    [
        (["--quantile", "0.9"], "q90", {"target": "quantile", "alpha": 0.9}),
        (["--target", "mean"], "m", {"target": "mean"}),
    ],
)
@pytest.mark.slow
def test_means_and_quantiles(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    score: str,
    options: dict,
) -> None:
    points = tmp_path / "points.parquet"
    args = ["calibration", str(files["numbers"]), "--score", score, "--response", "y", *flags]
    code, out, err = run([*args, "--out", str(points)], capsys)
    assert code == 0, err
    frame = pl.read_parquet(files["numbers"])
    want = frame.cumdev.calibration(score, "y", **options).row(0, named=True)
    assert f"{want['ecce_r']:.4f}" in out
    curve = frame.cumdev.calibration_curve(score, "y", **options)
    assert_frame_equal(pl.read_parquet(points), curve)
    code, _, err = run([*args, "--out", str(tmp_path / "chart.svg")], capsys)
    assert code == 0, err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--kind top-label or --kind class-wise"),
        (["--kind", "top-label", "--corp"], "--corp decomposes"),
        (["--kind", "class-wise", "--report", "r.html"], "--report is not yet written"),
        (["--kind", "top-label", "--target", "mean"], "calibrates probabilities"),
    ],
)
def test_contradictions_get_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    args = ["calibration", str(files["classes"]), "--score", ",".join(PROBS)]
    code, _, err = run([*args, "--response", "animal", *extra], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_quantile_level_is_checked(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibration", str(files["numbers"]), "--score", "q90", "--response", "y"]
    with pytest.raises(SystemExit):
        main([*args, "--quantile", "1.5"])
    assert "must lie in (0, 1)" in capsys.readouterr().err
    code, _, err = run([*args, "--target", "quantile"], capsys)
    assert code == 2 and "--quantile ALPHA" in err


@pytest.mark.slow
def test_quantile_report_has_the_cumulative_views_alone(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "q.html"
    args = ["calibration", str(files["numbers"]), "--score", "q90", "--response", "y"]
    code, _, err = run([*args, "--quantile", "0.9", "--report", str(page)], capsys)
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert "minus 0.9" in text  # the cumulative plot's axis
    assert "CORP" not in text and "brier" not in text and "Brier score" not in text
    assert "<th>ECCE-R</th>" in text  # the table, headed in the user's terms


@pytest.mark.slow
def test_report_per_group_words_a_quantile_as_a_share(tmp_path: Path) -> None:
    from polars_cumdev.report.calibration import calibration_report

    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, size=4000).round(2)
    spread = 0.5 + 0.3 * np.abs(x)
    y = x + 0.6 * (x > 1) + spread * rng.normal(size=x.size)  # too few below q where x > 1
    frame = pl.DataFrame({"q90": x + 1.2816 * spread, "m": x, "y": y, "g": np.arange(x.size) % 2})
    page = calibration_report(
        frame, "q90", "y", path=tmp_path / "q.html", by="g", target="quantile", alpha=0.9
    )
    text = page.read_text(encoding="utf-8")
    assert "the share of y at or below the q90 is" in text and "below the level 0.9" in text
    assert "CORP" not in text
    page = calibration_report(frame, "m", "y", path=tmp_path / "m.html", by="g", target="mean")
    text = page.read_text(encoding="utf-8")
    assert "above the m on average" in text and "CORP" not in text


def _one_group_off(seed: int, shift: float, groups: int = 20, per: int = 150) -> pl.DataFrame:
    """Predicted means per group; group 0 is ``shift`` too low above m = 0.5."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), per)
    m = rng.uniform(-2, 2, groups * per).round(3)
    y = m + rng.normal(size=groups * per)
    return pl.DataFrame({"m": m, "y": np.where((g == 0) & (m > 0.5), y + shift, y), "g": g})


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "shift", "shaded"), [(0, 0.4, False), (5, 0.6, True)])
def test_the_drawn_group_is_judged_by_its_row_q(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, shift: float, shaded: bool
) -> None:
    # (0, 0.4): the group's own p is under 0.05, its BH q over the 20 groups is not;
    # (5, 0.6): both are, and the stretch stays. (Groups of 150 rows get the sign-flip
    # p-value, whose redraws end at p = 0.001 here: with 0.5, p was 0.003 and q 0.06.)
    frame = _one_group_off(seed, shift)
    path = tmp_path / "means.parquet"
    frame.write_parquet(path)
    table = frame.cumdev.calibration("m", "y", by="g", target="mean")
    worst = table.row(0, named=True)
    own = frame.filter(pl.col("g") == worst["g"]).cumdev.calibration_curve("m", "y", target="mean")
    assert worst["ecce_r_p"] <= 0.05 and own["located"].any()  # the curve alone would shade
    assert (worst["ecce_r_q"] <= 0.05) is shaded
    args = ["calibration", str(path), "--score", "m", "--response", "y", "--target", "mean"]
    args += ["--by", "g"]
    points = tmp_path / "points.csv"
    code, _, err = run([*args, "--out", str(points)], capsys)
    assert code == 0, err
    assert pl.read_csv(points)["located"].any() is shaded
    chart = tmp_path / "chart.svg"
    code, _, err = run([*args, "--out", str(chart)], capsys)
    assert code == 0, err
    assert ("no stretch shaded" in chart.read_text()) is not shaded
