"""Where the deviation is, as shown to a reader (issue 15 item 1, display).

The located stretch (``from_score``, ``to_score``, ``share``, ``deviation``
of the screen; the ``located`` flags of the curve frame) is shaded on the
cumulative chart and printed in its subtitle, said in words in the report's
section headers and shown in the CLI's tables. The chart reads the curve's
flags and recomputes the interval from the curve's points; the table values
come from the screen's own search, so agreement checks both paths.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

pytest.importorskip("altair")

from polars_cumdev import charts
from polars_cumdev.charts.numbers import p_text
from polars_cumdev.cli import main
from polars_cumdev.datasets import census
from polars_cumdev.report.wording import where_words

ARGS = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    return census(n=60_000)


@pytest.fixture(scope="module")
def table(data: pl.DataFrame) -> pl.DataFrame:
    return data.cumdev.screen(by="county", **ARGS)


def _spec(data: pl.DataFrame, county: str, level: float = 0.05) -> dict:
    points = data.cumdev.curve(subpop=pl.col("county") == county, **ARGS, level=level)
    return charts.cumulative(points, subject=f"county = {county}").to_dict()


def _names(spec: dict) -> set[str]:
    return {layer.get("name", layer.get("description")) for layer in spec["layer"]}


@pytest.mark.slow
def test_chart_shades_the_stretch_iff_one_is_located(data: pl.DataFrame) -> None:
    # Level 1 in both: the search alone (the significance rule: tests/faces/test_findings_faces.py).
    table = data.cumdev.screen(by="county", **ARGS, level=1.0)
    located = table.filter(pl.col("from_score").is_not_null())
    unlocated = table.filter(pl.col("from_score").is_null() & pl.col("kuiper_z").is_not_null())
    assert located.height and unlocated.height
    for row in located.head(2).iter_rows(named=True):
        spec = _spec(data, row["county"], level=1.0)
        assert "located" in _names(spec)
        subtitle = " ".join(spec["title"]["subtitle"])
        found = re.search(
            r"located at scores (\S+) to (\S+) \((\S+)% of the weight\): (\S+) on average",
            subtitle,
        )
        assert found, subtitle
        start, end, percent, deviation = (float(x) for x in found.groups())
        assert start == pytest.approx(row["from_score"], rel=1e-3)
        assert end == pytest.approx(row["to_score"], rel=1e-3)
        assert percent == pytest.approx(100 * row["share"], rel=0.06)
        assert deviation == pytest.approx(row["deviation"], rel=6e-3)
        rect = next(
            layer
            for layer in spec["layer"]
            if layer.get("name", layer.get("description")) == "located"
        )
        values = rect["data"]["values"] if "values" in rect.get("data", {}) else None
        if values is None:
            values = spec["datasets"][rect["data"]["name"]]
        assert values[0]["a_to"] - values[0]["a_from"] == pytest.approx(row["share"], rel=1e-9)
        assert " ".join(spec["title"]["text"]).startswith(f"county = {row['county']}: ")
    for row in unlocated.head(2).iter_rows(named=True):
        spec = _spec(data, row["county"], level=1.0)
        assert "located" not in _names(spec)
        assert "located at" not in " ".join(spec["title"]["subtitle"])


@pytest.mark.slow
def test_chart_without_flags_has_no_shading(data: pl.DataFrame, table: pl.DataFrame) -> None:
    top = table.get_column("county")[0]
    points = data.cumdev.curve(subpop=pl.col("county") == top, **ARGS).drop("located")
    assert "located" not in _names(charts.cumulative(points).to_dict())


def test_where_words() -> None:
    row = {"from_score": 4.2, "to_score": 4.6, "share": 0.18, "deviation": 0.13}
    assert where_words(row, ["county"], "log10_income", "has_internet", True) == (
        "log10_income 4.2 to 4.6, 18% of the county's weight: "
        "0.13 more has_internet than rows with the same score overall"
    )
    below = {**row, "deviation": -0.05}
    assert where_words(below, ["a", "b"], "p", "y", False, kind="calibration") == (
        "p 4.2 to 4.6, 18% of the group's rows: y 0.05 below the p on average"
    )
    assert where_words({**row, "from_score": None}, ["county"], "s", "r", True) == "not located"


@pytest.mark.slow
def test_report_headers_say_where(data: pl.DataFrame, table: pl.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    shown = table.filter(pl.col("kuiper_z").is_not_null())
    # Enough groups to include one whose stretch is not located.
    top = int(np.argmax(shown.get_column("from_score").is_null().to_numpy())) + 1
    data.cumdev.report(by="county", **ARGS, path=path, top=top)
    page = path.read_text(encoding="utf-8")
    headers = [html.unescape(h) for h in re.findall(r"<section><h2>(.*?)</h2>", page)]
    for row, header in zip(shown.head(top).iter_rows(named=True), headers[1:], strict=True):
        if row["kuiper_q"] > 0.05:  # no finding: said so, and no stretch
            words = f"not significant: q = {p_text(row['kuiper_q'])} > 0.05"
        else:
            words = where_words(row, ["county"], "log10_income", "has_internet", True)
        assert header == f"county = {row['county']}: {words}"
    assert headers[-1].endswith(" > 0.05")  # the first group without a stated stretch
    rows = shown.head(top).iter_rows(named=True)
    for row, header in zip(rows, headers[1:], strict=True):
        said = "more has_internet" in header or "less has_internet" in header
        assert said == (row["kuiper_q"] <= 0.05), header
    assert "rows, " in page and "distinct scores" in page


@pytest.mark.slow
def test_cli_screen_table_shows_the_location(
    table: pl.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--rows", "3"]) == 0
    out = capsys.readouterr().out
    assert "located" in out.splitlines()[2]
    screen = census().cumdev.screen(by="county", **ARGS)
    first = screen.row(0, named=True)
    cell = (
        f"{first['from_score']:.4g} to {first['to_score']:.4g} "
        f"({100 * first['share']:.2g}%): {first['deviation']:+.3g}"
    )
    assert cell in out


def test_cli_paired_table_shows_the_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from polars_cumdev.datasets import paired_synthetic

    pairs = paired_synthetic()
    pairs.write_parquet(tmp_path / "pairs.parquet")
    args = ["paired", str(tmp_path / "pairs.parquet"), "--score", "score", "--first", "first"]
    assert main([*args, "--second", "second", "--weight", "weight"]) == 0
    out = capsys.readouterr().out
    row = pairs.cumdev.paired("score", "first", "second", "weight").row(0, named=True)
    assert row["from_score"] is not None
    cell = (
        f"{row['from_score']:.4g} to {row['to_score']:.4g} "
        f"({100 * row['share']:.2g}%): {row['deviation']:+.3g}"
    )
    assert "located" in out and cell in out
