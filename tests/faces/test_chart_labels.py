"""Labels of the charts (issue 12 item 6): names, counts, uncrowded ticks, nothing clipped."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

import vl_convert

from polars_cumdev import charts
from polars_cumdev.charts._ticks import _CHAR, _GAP, uncrowd
from polars_cumdev.cli import main
from polars_cumdev.datasets import census

ARGS = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    return census(n=30_000)


def _layer(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(
        layer for layer in spec["layer"] if layer.get("name", layer.get("description")) == name
    )


@pytest.mark.slow
def test_largest_dot_of_the_screen_is_inside_the_frame() -> None:
    width = 460
    # z values that a nice domain would end exactly on (6.5, 4) or just below.
    for top in (6.4875, 6.5, 4.0, 9.99):
        table = pl.DataFrame(
            {
                "county": ["a", "b", "c"],
                "n": [100, 100, 100],
                "kuiper_z": [top, 2.0, 0.5],
                "kuiper_p": [1e-9, 0.1, 0.9],
                "kuiper_q": [1e-9, 0.1, 0.9],
            }
        )
        svg = vl_convert.vegalite_to_svg(charts.screen(table, width=width).to_dict())
        marks = svg[re.search(r"groups(_0)?_marks", svg).start() :]  # type: ignore[union-attr]
        marks = marks[: marks.index("</g>")]
        dots = re.findall(r'transform="translate\(([-\d.e]+),[-\d.e]+\)" d="M([\d.]+),0', marks)
        assert len(dots) == 3
        right = max(float(x) + float(r) + 0.625 for x, r in dots)  # centre + radius + stroke/2
        assert right <= width, (top, right)


def _extents(values: list[float], labels: list[str], width: float) -> list[tuple[float, float]]:
    out = []
    for v, text in zip(values, labels, strict=True):
        if not text:
            continue
        x, w = v * width, _CHAR * 10 * len(text)
        out.append((x, x + w) if x <= 1.0 else (x - w, x) if x >= width - 1.0 else
                   (x - w / 2, x + w / 2))  # fmt: skip
    return out


@pytest.mark.parametrize("seed", range(5))
def test_crowding_tick_labels_are_dropped_keeping_the_ends(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = sorted({0.0, 1.0, *rng.random(12).round(4).tolist(), 0.97, 0.99})
    labels = [f"{v * 1e3:.4g}" for v in values]
    shown = uncrowd(values, labels, 420, 10)
    assert shown[0] == labels[0] and shown[-1] == labels[-1]
    assert all(s in ("", t) for s, t in zip(shown, labels, strict=True))
    spans = _extents(values, shown, 420)
    assert all(b[0] >= a[1] + _GAP for a, b in itertools.pairwise(spans))
    assert "" in shown  # 0.97, 0.99 and 1.0 cannot all be labelled


def _drawn_labels(svg: str, title: str) -> list[tuple[float, float, str]]:
    """The (left, right, text) of each label the SVG draws on the axis with this title."""
    segment = svg[svg.index(f"X-axis titled '{title}'") :]
    segment = segment[: segment.index("role-axis-title")]
    spans = []
    pattern = r'<text text-anchor="(\w+)" transform="translate\(([-\d.]+),[-\d.]+\)"[^>]*>([^<]+)<'
    for anchor, x, text in re.findall(pattern, segment):
        w = _CHAR * 10 * len(text)
        left = {"start": 0.0, "middle": w / 2, "end": w}[anchor]
        spans.append((float(x) - left, float(x) - left + w, text))
    return spans


@pytest.mark.parametrize("county", ["Marlow", "Oakridge"])
@pytest.mark.slow
def test_rendered_tick_labels_do_not_crowd(data: pl.DataFrame, county: str) -> None:
    points = data.cumdev.curve(subpop=pl.col("county") == county, **ARGS)
    spec = charts.cumulative(points, score_label="log10_income").to_dict()
    svg = vl_convert.vegalite_to_svg(spec)
    for title in ("log10_income", "k/n"):
        axis_spec = _layer(spec, "curve" if title != "k/n" else "upper_axis")
        labels = [
            t for t in re.findall(r"'([^']*)'", axis_spec["encoding"]["x"]["axis"]["labelExpr"])
        ]
        drawn = _drawn_labels(svg, title)
        texts = [text.replace("\N{MINUS SIGN}", "-") for _, _, text in drawn]
        assert texts[0] == labels[0] and texts[-1] == labels[-1]  # the ends stay labelled
        for (_, right, _), (left, _, _) in itertools.pairwise(drawn):
            assert left >= right + 2.0, (title, drawn)


@pytest.mark.slow
def test_subject_counts_and_column_names(data: pl.DataFrame) -> None:
    points = data.cumdev.curve(subpop=pl.col("county") == "Marlow", **ARGS)
    n_scores = points.height - 1
    spec = charts.cumulative(
        points,
        subject="county = Marlow",
        score_label="log10_income",
        y_label="cumulative difference in has_internet",
    ).to_dict()
    assert " ".join(spec["title"]["text"]).startswith("county = Marlow: ")
    assert f"n = {n_scores:,} distinct scores" in " ".join(spec["title"]["subtitle"])
    curve = _layer(spec, "curve")["encoding"]
    assert curve["x"]["axis"]["title"] == "log10_income"
    assert curve["y"]["axis"]["title"] == "cumulative difference in has_internet"


@pytest.mark.slow
def test_cli_curve_names_the_group_and_the_columns(
    data: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "households.parquet"
    data.write_parquet(source)
    target = tmp_path / "marlow.json"
    args = ["curve", str(source), "--subpop-column", "county", "--subpop-value", "Marlow"]
    args += ["--score", "log10_income", "--response", "has_internet", "--weight", "WGTP"]
    assert main([*args, "--out", str(target)]) == 0
    capsys.readouterr()
    spec = json.loads(target.read_text())
    assert " ".join(spec["title"]["text"]).startswith("county = Marlow: ")
    curve = _layer(spec, "curve")["encoding"]
    assert curve["x"]["axis"]["title"] == "log10_income"
    assert "has_internet" in curve["y"]["axis"]["title"]


@pytest.mark.slow
def test_report_tables_say_rows_and_distinct_scores(data: pl.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    data.cumdev.report(by="county", **ARGS, path=path, top=1)
    page = path.read_text(encoding="utf-8")
    assert "<th>rows</th>" in page and "<th>distinct scores</th>" in page
    assert re.search(r"[\d,]+ rows, [\d,]+ distinct scores; Kuiper", page)
    specs = [
        json.loads(text.replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u0026", "&"))
        for text in re.findall(r'data-target="chart-\d+">(.*?)</script>', page)
    ]
    cumulative = specs[1]
    assert " ".join(cumulative["title"]["text"]).startswith("county = ")
    assert _layer(cumulative, "curve")["encoding"]["x"]["axis"]["title"] == "log10_income"
    assert "has_internet" in _layer(cumulative, "curve")["encoding"]["y"]["axis"]["title"]
