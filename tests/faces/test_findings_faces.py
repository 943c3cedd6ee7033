"""No claim without evidence in the faces: the report, the command line, the charts; progress.

On pure noise (seeded, no group deviates) neither the report nor the command
line states a finding (no "more"/"less" sentence, no stretch, no shading); on
planted data the deviating group still gets its stretch. Progress is off by
default in the API and when stderr is not a terminal, and on when asked.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_cumdev import charts, progress
from polars_cumdev.cli.main import main
from polars_cumdev.report import report
from polars_cumdev.subpopulation import curve, screen

FINDING = re.compile(r"\b(more|less)\b [^<]* than rows with the same")
SHADED = re.compile(r'"(?:name|description)":\s*"located"')  # layers but the curve: a description


def noise(seed: int = 3, rows: int = 3_000, groups: int = 6) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.random(rows)
    return pl.DataFrame(
        {
            "g": [f"group{k}" for k in rng.integers(0, groups, rows)],
            "s": s,
            "r": (rng.random(rows) < s).astype(np.float64),
        }
    )


def planted() -> pl.DataFrame:
    df = noise(4)
    middle = (pl.col("g") == "group0") & pl.col("s").is_between(0.4, 0.6)
    return df.with_columns(pl.when(middle).then(1.0).otherwise(pl.col("r")).alias("r"))


def page(path: Path) -> str:
    """The report's own HTML, without the inlined JavaScript libraries."""
    text = path.read_text(encoding="utf-8")
    return text[text.rindex("<h1>") :]


@pytest.fixture(scope="module")
def noise_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("findings") / "noise.html"
    report(noise(), "g", "s", "r", path=path, top=3)
    return page(path)


@pytest.mark.slow
def test_report_on_noise_states_no_finding(noise_report: str) -> None:
    headings = re.findall(r"<h2>(.*?)</h2>", noise_report)
    drills = [h for h in headings if h.startswith("g = ")]
    assert len(drills) == 3
    assert all(re.search(r": not significant: q = [0-9.]+ &gt; 0\.05$", h) for h in drills), drills
    assert not FINDING.search(noise_report)
    assert not SHADED.search(noise_report)
    assert "no stretch shaded" in noise_report


@pytest.mark.slow
def test_report_reads_for_people(noise_report: str) -> None:
    assert "How to read this page" in noise_report
    for words in ("slope", "triangle", "band", "Benjamini-Hochberg"):
        assert words in noise_report
    assert "<th>q (BH-adjusted)</th>" in noise_report and "<th>kuiper_q</th>" not in noise_report
    # p- and q-values in one notation: two significant digits, never an exponent.
    cells = re.findall(r"<td>([^<]*)</td>", noise_report)
    assert not any(re.fullmatch(r"-?[0-9.]+e[-+][0-9]+", c) for c in cells), cells


@pytest.mark.slow
def test_report_on_planted_data_names_the_stretch(tmp_path: Path) -> None:
    path = report(planted(), "g", "s", "r", path=tmp_path / "planted.html", top=2)
    html = page(path)
    assert re.search(r"<h2>g = group0: s 0\.[3-6]\d* to 0\.[4-7]\d*, [0-9.]+% of", html)
    assert re.search(r"more r than rows with the same score", html)
    assert SHADED.search(html)


@pytest.mark.slow
def test_chart_of_a_curve_that_is_not_significant() -> None:
    df = noise()
    calm = screen(df, "g", "s", "r").row(-1, named=True)  # the largest p
    assert calm["kuiper_p"] > 0.05
    points = curve(df, pl.col("g") == calm["g"], "s", "r")
    assert not points["located"].any()
    spec = charts.cumulative(points).to_dict()
    text = str(spec)
    assert "no stretch shaded (not significant)" in text
    assert "'located'" not in text
    given = charts.cumulative(points, significance="not significant: q = 0.72 > 0.05")
    assert "not significant: q = 0.72 > 0.05" in str(given.to_dict())


@pytest.mark.slow
def test_titles_are_plain_words_that_fit() -> None:
    points = curve(planted(), pl.col("g") == "group0", "s", "r")
    spec = charts.cumulative(points, subject="a rather long group name = something", width=300)
    title = spec.to_dict()["title"]
    lines = title["text"] if isinstance(title["text"], list) else [title["text"]]
    assert not any("A_k" in line for line in lines)
    assert all(len(line) * 0.62 * 13 <= 300 for line in lines)
    # Subtitles: at most three lines (issue 36), which at this narrow width may run
    # wider than the chart (charts._style.fit_subtitle: nothing is left out).
    assert 1 <= len(title["subtitle"]) <= 3


@pytest.fixture(scope="module")
def noise_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("findings_cli") / "noise.csv"
    noise().write_csv(path)
    return path


@pytest.mark.slow
def test_cli_on_noise_states_no_finding(
    noise_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["screen", str(noise_csv), "--by", "g", "--score", "s", "--response", "r"]
    code = main(args)
    out = capsys.readouterr().out
    assert code == 0
    assert "not significant" in out
    assert not re.search(r"\d to \d.*%\)", out)  # no "0.41 to 0.58 (12%): +0.2" cell
    assert not re.search(r"\b(more|less)\b", out)
    code = main([*args, "--level", "1"])
    assert code == 0 and re.search(r"\d to \d.*%\)", capsys.readouterr().out)


@pytest.mark.slow
def test_cli_progress_switch(noise_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    args = ["report", str(noise_csv), "--by", "g", "--score", "s", "--response", "r"]
    target = tmp_path / "r.html"
    assert main([*args, "--top", "1", "--out", str(target)]) == 0
    assert "[cumdev" not in capsys.readouterr().err  # stderr is not a terminal here
    assert main([*args, "--top", "1", "--out", str(target), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "report: screening every group" in err and "report: drill-down 1/1" in err
    assert main([*args, "--top", "1", "--out", str(target), "--no-progress"]) == 0
    assert "[cumdev" not in capsys.readouterr().err


@pytest.mark.slow
def test_api_progress_is_off_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    df = noise()
    report(df, "g", "s", "r", path=tmp_path / "a.html", top=1)
    assert capsys.readouterr().err == ""
    report(df, "g", "s", "r", path=tmp_path / "b.html", top=1, progress=True)
    err = capsys.readouterr().err
    assert re.search(r"^\[cumdev +[0-9.]+ s\] report: screening every group$", err, re.M), err
    lines: list[str] = []
    report(df, "g", "s", "r", path=tmp_path / "c.html", top=1, progress=lines.append)
    assert any("report: wrote" in line for line in lines) and capsys.readouterr().err == ""


def test_progress_argument_is_checked() -> None:
    from polars_cumdev.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="`progress`"):
        with progress.reporting("yes"):  # type: ignore[arg-type]
            pass


@pytest.mark.slow
def test_calibration_report_on_calibrated_predictions_states_nothing(tmp_path: Path) -> None:
    from polars_cumdev.report.calibration import calibration_report

    df = noise(5)  # the outcomes are Bernoulli(score): perfectly calibrated
    path = calibration_report(df, "s", "r", path=tmp_path / "c.html", by="g", top=2, resamples=10)
    html = page(path)
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    drawn = [h for h in headings if h.startswith("g = ")]
    assert len(drawn) == 2
    assert all(": not significant: q = " in h for h in drawn), drawn
    assert headings[1].startswith("All predictions") and "not significant: p = " in headings[1]
    assert "on average" not in " ".join(headings)
    assert not SHADED.search(html)
    assert "How to read this page" in html
