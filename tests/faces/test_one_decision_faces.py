"""One decision, every face (issue 36, item 3): charts, reports, sentences and the CLI follow
the table's ``significant`` column.

The tables come from ``tests/analyses/test_one_decision.py``'s planted data (significant and
non-significant rows in each); every face is read back (the chart's spec data and layers, the
report's HTML headings, the sentences, the command line's output) and compared with the
table row by row. Faces may not re-derive the decision from a p- or q-value.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.calibration import calibration, calibration_curve
from polars_cumdev.cli import main
from polars_cumdev.drift import calibration_drift
from polars_cumdev.multicalibration import multicalibration
from polars_cumdev.multicalibration.words import conjunction, describe
from polars_cumdev.report import report
from polars_cumdev.report.calibration import calibration_report
from polars_cumdev.report.multicalibration import multicalibration_report
from polars_cumdev.subpopulation import screen
from tests.analyses.test_one_decision import planted

# Reports and charts of every analysis: minutes, not seconds (the fast subset checks the tables).
pytestmark = pytest.mark.slow


def _data(spec: dict, field: str) -> list[dict]:
    """Every inline or named dataset row of a spec holding ``field``."""
    rows = [r for values in spec.get("datasets", {}).values() for r in values if field in r]
    for layer in spec.get("layer", []):
        values = layer.get("data", {}).get("values", [])
        rows += [r for r in values if isinstance(r, dict) and field in r]
    return rows


def _headings(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(r"<h2>(.*?)</h2>", text[text.rindex("<h1>") :])


def test_screen_chart_and_report(tmp_path: Path) -> None:
    df = planted().collect()
    table = screen(df, "g", "s", "r")
    assert table["significant"].any() and (~table["significant"]).any()
    spec = charts.screen(table).to_dict()
    flags = {r["group"]: r["flag"].startswith("BH q ≤") for r in _data(spec, "flag")}
    assert flags == dict(zip(table["g"], table["significant"], strict=True))
    path = tmp_path / "screen.html"
    report(df, "g", "s", "r", path=path, top=6)
    headings = {
        h.split(":")[0].removeprefix("g = "): h for h in _headings(path) if h.startswith("g = ")
    }
    for row in table.iter_rows(named=True):
        said = "not significant" in headings[row["g"]]
        assert said == (not row["significant"]), (row["g"], headings[row["g"]])


def test_calibration_report_follows_the_table(tmp_path: Path) -> None:
    df = planted().collect()
    table = calibration(df, "s", "r", by="g")
    path = tmp_path / "calibration.html"
    calibration_report(df, "s", "r", path=path, by="g", top=6, resamples=0)
    headings = [h for h in _headings(path) if h.startswith("g = ")]
    for row in table.iter_rows(named=True):
        (heading,) = [h for h in headings if h.startswith(f"g = {row['g']}")]
        assert ("not significant" in heading) == (not row["significant"]), heading


def test_class_wise_chart_shades_only_significant_classes() -> None:
    df = planted().collect()
    scores = ["p0", "p1", "p2"]
    table = calibration(df, scores, "label", kind="class-wise", level=0.01)
    assert table["significant"].any() and (~table["significant"]).any()
    curves = calibration_curve(df, scores, "label", kind="class-wise", level=0.01)
    spec = charts.calibration_classes(curves).to_dict()
    decision = dict(zip(table["class"].cast(pl.String), table["significant"], strict=True))
    for chart, name in zip(spec["hconcat"], scores, strict=True):
        shaded = any(
            (layer.get("name") or layer.get("description") or "").startswith("located")
            for layer in chart["layer"]
        )  # layers other than the curve carry a description, not a name (they compose)
        assert shaded == decision[name], name


def test_drift_chart_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    df = planted().collect()
    table = calibration_drift(df, "s", "r", time="t", every="1w")
    assert (table["flagged"] == table["significant"]).all()
    spec = charts.drift(table).to_dict()
    named = {r["window"] for r in _data(spec, "window") if r.get("flagged")}
    assert len(named) == table["significant"].sum()


@pytest.mark.parametrize("method", ["holm", "bootstrap"])
def test_multicalibration_faces(
    method: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(0)
    n = 3_000
    s = rng.uniform(0.05, 0.95, n)
    a, b, c = (rng.integers(0, 3, n) for _ in range(3))
    p = np.clip(s + 0.12 * ((a == 0) & (b == 0)), 0, 1)
    df = pl.DataFrame(
        {
            "s": s,
            "y": (rng.random(n) < p).astype(float),
            **{k: v.astype(str) for k, v in zip("abc", (a, b, c), strict=True)},
        }
    )
    family = pc.segments(["a", "b", "c"], depth=2, levels=3, min_rows=10)
    level = 0.3
    options = {"method": method, "resamples": 199, "level": level}
    table = multicalibration(df, "s", "y", segments=family, **options)
    assert table["significant"].any() and (~table["significant"]).any()
    features = ["a", "b", "c"]
    for row in table.filter(pl.col("ecce_r_z").is_not_null()).iter_rows(named=True):
        line = describe(row, features, level)
        assert ("not significant" in line) == (not row["significant"]), line
        stated = "exceed" in line or "fall short of" in line
        assert stated == (row["significant"] and row["from_score"] is not None), line
        assert "no single stretch" not in line or row["ecce_r"] <= 2 * row["sigma"], line
    spec = charts.funnel(table, level=level).to_dict()
    filled = {r["segment"]: r["significant"] for r in _data(spec, "significant")}
    for row in table.filter(pl.col("ecce_r_z").is_not_null()).iter_rows(named=True):
        assert filled[conjunction(row, features)] == row["significant"]
    path = tmp_path / "multicalibration.html"
    multicalibration_report(df, "s", "y", segments=family, path=path, top=8, **options)
    text = path.read_text(encoding="utf-8")
    page = text[text.rindex("<h1>") :]
    headings = _headings(path)
    first = 1 + next(i for i, h in enumerate(headings) if h.startswith("Every segment"))
    assert len(headings) > first
    for heading in headings[first:]:
        name = html.unescape(heading).split(" (")[0].split(":")[0]
        row = table.filter(
            pl.Series([conjunction(r, features) == name for r in table.iter_rows(named=True)])
        ).row(0, named=True)
        assert ("not significant" in heading) == (not row["significant"]), heading
    assert "q =" not in page and "q &le;" not in page  # p_family is never called q
    data = tmp_path / "data.parquet"
    df.write_parquet(data)
    args = ["multicalibration", str(data), "--score", "s", "--response", "y"]
    args += ["--categorical", "a,b,c", "--depth", "2", "--levels", "3", "--level", str(level)]
    args += ["--method", method, "--resamples", "199", "--findings", "30"]
    assert main(args) in (0, None)
    out = capsys.readouterr().out
    assert f"; {table['significant'].sum()} significant at family-wise level" in out
    said = [line for line in out.splitlines() if line.startswith("  - ")]
    assert sum("not significant" not in line for line in said) == min(
        30, int(table["significant"].sum())
    )


def test_every_chart_subtitle_is_at_most_three_lines() -> None:
    df = planted().collect()
    table = screen(df, "g", "s", "r")
    specs = [
        charts.screen(table).to_dict(),
        charts.cumulative(pc.curve(df, pl.col("g") == "group0", "s", "r")).to_dict(),
        charts.cumulative(calibration_curve(df, "s", "r"), kind="calibration", band=0.05).to_dict(),
        charts.drift(calibration_drift(df, "s", "r", time="t", every="1w")).to_dict(),
    ]
    curves = calibration_curve(df, ["p0", "p1", "p2"], "label", kind="class-wise")
    specs += charts.calibration_classes(curves, band=0.05).to_dict()["hconcat"]
    family = pc.segments(["g", "h"], depth=2, levels=6)
    specs.append(charts.funnel(multicalibration(df, "s", "r", segments=family)).to_dict())
    for spec in specs:
        subtitle = spec["title"].get("subtitle", [])
        lines = [subtitle] if isinstance(subtitle, str) else subtitle
        assert len(lines) <= 3, json.dumps(spec["title"])
