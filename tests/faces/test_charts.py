"""Tests of polars_cumdev.charts: chart specs built from hand-made tidy frames.

The frames are built here with deterministic numpy, with exactly the columns
the other modules produce, so these tests exercise only the charts. Every
chart is also rendered to SVG with vl-convert, which compiles the Vega-Lite
spec and fails loudly on an invalid one.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

_ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("polars_cumdev") is None:
    sys.path.insert(0, str(_ROOT))
try:
    import polars_cumdev  # noqa: F401
except Exception:  # another module is mid-edit: load the subpackage without the package __init__
    for _name in [m for m in sys.modules if m.startswith("polars_cumdev")]:
        del sys.modules[_name]
    _package = types.ModuleType("polars_cumdev")
    _package.__path__ = [str(_ROOT / "polars_cumdev")]
    sys.modules["polars_cumdev"] = _package

import altair as alt  # noqa: E402
import vl_convert  # noqa: E402

from polars_cumdev.charts import cumulative, reliability, save, screen  # noqa: E402
from polars_cumdev.charts.cumulative import TRIANGLE_APEX  # noqa: E402
from polars_cumdev.charts.screen import KUIPER_NULL_MEAN  # noqa: E402
from polars_cumdev.errors import (  # noqa: E402
    ColumnNotFoundError,
    InvalidParameterError,
    InvalidValuesError,
)

# ---------------------------------------------------------------- frames


def make_curve(
    n: int = 200, *, weighted: bool = False, sigma: float | None = 0.03, seed: int = 0
) -> pl.DataFrame:
    """A curve frame: origin row, then n points with a smooth drift plus noise."""
    rng = np.random.default_rng(seed)
    score = np.sort(rng.uniform(0.0, 1.0, n))
    weight = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    a = np.concatenate([[0.0], np.cumsum(weight) / weight.sum()])
    steps = weight * (0.1 * np.sin(5 * score) + rng.normal(0.0, 0.3, n)) / weight.sum()
    k = np.arange(n + 1)
    return pl.DataFrame(
        {
            "k": k,
            "a": a,
            "k_over_n": k / n,
            "score": [None, *score.tolist()],
            "cumdiff": np.concatenate([[0.0], np.cumsum(steps)]),
            "full_mean": np.concatenate([[0.0], 0.5 + 0.0 * score]),
            "response_mean": np.concatenate([[0.0], 0.5 + 0.0 * score]),
            "weight": np.concatenate([[0.0], weight]),
            "sigma": [sigma] * (n + 1),
        },
        schema_overrides={"k": pl.Int64, "score": pl.Float64, "sigma": pl.Float64},
    )


def make_reliability(*, resamples: int = 0, bins: int = 8) -> pl.DataFrame:
    """A reliability frame for both populations, with optional bootstrap resamples."""
    rng = np.random.default_rng(1)
    rows: list[dict[str, Any]] = []
    for population, offset in (("subpopulation", 0.1), ("full", 0.0)):
        for replicate in [None, *range(resamples)]:
            for b in range(bins):
                s = (b + 0.5) / bins
                noise = 0.0 if replicate is None else rng.normal(0.0, 0.03)
                rows.append(
                    {
                        "population": population,
                        "bin": b,
                        "score_mean": s,
                        "response_mean": s + offset * math.sin(6 * s) + noise,
                        "weight": 50.0,
                        "count": 50,
                        "resample": replicate,
                    }
                )
    frame = pl.DataFrame(rows, schema_overrides={"resample": pl.Int64})
    return frame if resamples else frame.drop("resample")


def make_screen(groups: int, *, nulls: int = 0, seed: int = 2) -> pl.DataFrame:
    """A screen frame: group keys (string and int), statistics, nulls for `nulls` groups."""
    rng = np.random.default_rng(seed)
    z = np.abs(rng.normal(1.6, 0.6, groups))
    z[: max(1, groups // 50)] += 5.0
    p = np.exp(-(z**2) / 2)
    q = np.minimum(1.0, p * groups / (np.argsort(np.argsort(p)) + 1))
    z_list: list[float | None] = z.tolist()
    p_list: list[float | None] = p.tolist()
    q_list: list[float | None] = q.tolist()
    notes: list[str | None] = [None] * groups
    for i in range(groups - nulls, groups):
        z_list[i] = p_list[i] = q_list[i] = None
        notes[i] = "sigma is 0: every response equals the full-population mean"
    return pl.DataFrame(
        {
            "region": [f"R{i:04d}" for i in range(groups)],
            "year": [2000 + i % 3 for i in range(groups)],
            "n": rng.integers(5, 500, groups),
            "kuiper": z * 0.01,
            "ks": z * 0.009,
            "delta": z * 0.001,
            "sigma": np.full(groups, 0.01),
            "kuiper_z": z_list,
            "ks_z": z * 0.9,
            "kuiper_p": p_list,
            "ks_p": p,
            "kuiper_q": q_list,
            "note": notes,
        },
        schema_overrides={"kuiper_z": pl.Float64, "kuiper_p": pl.Float64, "kuiper_q": pl.Float64},
    )


# ---------------------------------------------------------------- spec helpers


def layers(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Layers by name or description (Altair suffixes names ``_0``, ``_1`` inside concats).

    The cumulative chart names only its line (the view its zoom is bound to)
    and describes the other layers.
    """
    return {
        re.sub(r"_\d+$", "", layer.get("name", layer.get("description", ""))): layer
        for layer in spec["layer"]
        if "name" in layer or "description" in layer
    }


def mark_type(layer: dict[str, Any]) -> str:
    mark = layer["mark"]
    return mark if isinstance(mark, str) else mark["type"]


def rows_of(spec: dict[str, Any], layer: dict[str, Any]) -> list[dict[str, Any]]:
    """The data rows a layer draws (from the top-level datasets)."""
    data = layer["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


def tooltip_fields(layer: dict[str, Any]) -> set[str]:
    return {t["field"] for t in layer["encoding"]["tooltip"]}


def render_svg(chart: alt.TopLevelMixin) -> str:
    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    assert svg.lstrip().startswith("<svg")
    return svg


# ---------------------------------------------------------------- cumulative


@pytest.fixture(scope="module")
def curve_spec() -> dict[str, Any]:
    return cumulative(make_curve(200, weighted=True)).to_dict()


@pytest.mark.slow
def test_cumulative_layers(curve_spec: dict[str, Any]) -> None:
    named = layers(curve_spec)
    assert [layer.get("name", layer.get("description")) for layer in curve_spec["layer"]] == [
        "triangle_fill",
        "triangle",
        "curve",
        "points",
        "lower_minor_ticks",
        "upper_axis",
        "upper_minor_ticks",
    ]
    assert mark_type(named["triangle_fill"]) == "area"
    assert mark_type(named["triangle"]) == "line"
    assert mark_type(named["curve"]) == "line"
    assert mark_type(named["points"]) == "point"
    assert named["curve"]["encoding"]["x"]["field"] == "a"
    assert named["curve"]["encoding"]["y"]["field"] == "cumdiff"
    assert curve_spec["resolve"] == {"axis": {"x": "independent"}}


@pytest.mark.slow
def test_cumulative_axes(curve_spec: dict[str, Any]) -> None:
    named = layers(curve_spec)
    lower = named["curve"]["encoding"]["x"]["axis"]
    upper = named["upper_axis"]["encoding"]["x"]["axis"]
    assert lower["orient"] == "bottom" and lower["title"] == "score"
    assert upper["orient"] == "top" and upper["title"] == "k/n"
    # Every horizontal layer shares the same [0, 1] scale.
    assert named["curve"]["encoding"]["x"]["scale"]["domain"] == [0.0, 1.0]
    # Upper labels are k/n at the positions a(k): first 0 at a = 0, last 1 at a = 1.
    assert upper["values"][0] == 0.0 and upper["values"][-1] == pytest.approx(1.0)
    assert upper["labelExpr"].startswith("['0', ") and "'1'][indexof(" in upper["labelExpr"]
    # With weights the major positions differ from k/n but the minor ones are equispaced.
    minor = named["upper_minor_ticks"]["encoding"]["x"]["axis"]
    assert minor["orient"] == "top" and minor["labels"] is False
    assert np.allclose(np.diff(minor["values"]), minor["values"][1])
    assert len(lower["values"]) == len(re.findall(r"'[^']*'", lower["labelExpr"]))
    bottom_minor = named["lower_minor_ticks"]["encoding"]["x"]["axis"]
    assert bottom_minor["orient"] == "bottom" and bottom_minor["values"]


@pytest.mark.slow
def test_cumulative_lower_labels_are_scores() -> None:
    frame = make_curve(10)
    spec = cumulative(frame, major_ticks=11, score_label="probability").to_dict()
    axis = layers(spec)["curve"]["encoding"]["x"]["axis"]
    assert axis["title"] == "probability"
    scores = frame.get_column("score").drop_nulls().to_list()
    labels = re.findall(r"'([^']*)'", axis["labelExpr"])
    assert len(labels) == 10  # one per point for n = 10
    assert labels[0] and labels[-1]  # the ends are always labelled
    # Labels that would crowd a neighbour are blank; the others are the scores.
    kept = [(float(x), s) for x, s in zip(labels, scores, strict=True) if x]
    assert len(kept) >= 5
    assert [x for x, _ in kept] == pytest.approx([s for _, s in kept], abs=5e-3)
    assert axis["values"] == pytest.approx(frame.get_column("a").to_list()[1:])


def test_triangle_height_is_four_sigma(curve_spec: dict[str, Any]) -> None:
    triangle = layers(curve_spec)["triangle"]
    rows = rows_of(curve_spec, triangle)
    y = triangle["encoding"]["y"]["field"]
    x = triangle["encoding"]["x"]["field"]
    ys = [row[y] for row in rows]
    assert max(ys) - min(ys) == pytest.approx(4 * 0.03)
    assert max(ys) == pytest.approx(2 * 0.03) and min(ys) == pytest.approx(-2 * 0.03)
    vertical = [row[y] for row in rows if row[x] == 0.0]
    assert max(vertical) - min(vertical) == pytest.approx(4 * 0.03)
    apex = [row for row in rows if row[x] > 0]
    assert {row[x] for row in apex} == {TRIANGLE_APEX} and apex[0][y] == 0.0
    assert TRIANGLE_APEX == pytest.approx(1 / 40)


@pytest.mark.parametrize(
    ("kind", "weighted", "expected"),
    [
        ("subpopulation", False, "slope against k/n = deviation from the full population"),
        (
            "subpopulation",
            True,
            "slope against cumulative weight = deviation from the full population",
        ),
        ("calibration", True, "slope against cumulative weight = miscalibration"),
        ("calibration", False, "slope against k/n = miscalibration"),
        ("compare", True, "slope against cumulative weight = deviation of first from second"),
    ],
)
@pytest.mark.slow
def test_cumulative_titles(kind: str, weighted: bool, expected: str) -> None:
    # Plain words (no axis is labelled A_k), in lines that fit the chart's width.
    curve = make_curve(30, weighted=weighted)
    if kind == "calibration":  # a probability's calibration curve: the reference is the score
        curve = curve.with_columns(pl.col("score").fill_null(0.0).alias("full_mean"))
    spec = cumulative(curve, kind=kind).to_dict()  # type: ignore[arg-type]
    assert title_text(spec) == expected
    lines = spec["title"]["text"] if isinstance(spec["title"]["text"], list) else [expected]
    assert all(len(line) * 0.62 * 13 <= 420 for line in lines)


def title_text(spec: dict[str, Any]) -> str:
    text = spec["title"]["text"]
    return " ".join(text) if isinstance(text, list) else text


@pytest.mark.slow
def test_cumulative_custom_title_and_subtitle() -> None:
    frame = make_curve(50)
    text = "deviation of group B from group A is the slope as a function of k/n"
    spec = cumulative(frame, kind="compare", title=text).to_dict()
    assert title_text(spec) == text
    c = frame.get_column("cumdiff")
    kuiper = (c.max() - c.min()) / 0.03
    ks = c.abs().max() / 0.03
    subtitle = " ".join(spec["title"]["subtitle"])
    assert f"= {kuiper:.4g}\N{GREEK SMALL LETTER SIGMA}" in subtitle
    assert f"= {ks:.4g}\N{GREEK SMALL LETTER SIGMA}" in subtitle
    assert "n = 50" in subtitle


def test_cumulative_tooltips_and_zoom(curve_spec: dict[str, Any]) -> None:
    points = layers(curve_spec)["points"]
    assert {"score", "k_over_n", "cumdiff"} <= tooltip_fields(points)
    params = curve_spec["params"]
    assert any(
        p.get("select", {}).get("type") == "interval" and p["bind"] == "scales" for p in params
    )


@pytest.mark.parametrize("sigma", [0.0, None])
@pytest.mark.slow
def test_cumulative_without_sigma(sigma: float | None) -> None:
    chart = cumulative(make_curve(40, sigma=sigma))
    spec = chart.to_dict()
    assert "triangle" not in layers(spec)
    assert "sigma is 0 or unavailable" in " ".join(spec["title"]["subtitle"])
    render_svg(chart)


@pytest.mark.slow
def test_cumulative_renders(curve_spec: dict[str, Any]) -> None:
    svg = vl_convert.vegalite_to_svg(curve_spec)
    assert svg.lstrip().startswith("<svg")
    assert "k/n" in svg and "score" in svg


@pytest.mark.slow
def test_cumulative_thins_long_curves() -> None:
    frame = make_curve(30_000, seed=4)
    spec = cumulative(frame, max_points=2000).to_dict()  # no MaxRowsError
    rows = rows_of(spec, layers(spec)["curve"])
    assert len(rows) <= 2000
    drawn = [row["cumdiff"] for row in rows]
    assert max(drawn) == frame.get_column("cumdiff").max()
    assert min(drawn) == frame.get_column("cumdiff").min()
    assert rows[0]["a"] == 0.0 and rows[-1]["a"] == frame.get_column("a")[-1]


@pytest.mark.slow
def test_cumulative_accepts_lazy_frames_and_missing_origin() -> None:
    frame = make_curve(20)
    lazy = cumulative(frame.lazy()).to_dict()
    no_origin = cumulative(frame.filter(pl.col("k") > 0)).to_dict()
    assert lazy["title"] == no_origin["title"]


def test_cumulative_rejects_bad_input() -> None:
    with pytest.raises(ColumnNotFoundError):
        cumulative(make_curve(10).drop("sigma"))
    with pytest.raises(InvalidParameterError):
        cumulative(make_curve(10), kind="other")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        cumulative(make_curve(10), major_ticks=1)
    with pytest.raises(InvalidValuesError):
        cumulative(make_curve(10).filter(pl.col("k") == 0))


# ---------------------------------------------------------------- reliability


@pytest.mark.slow
def test_reliability_layers_and_colours() -> None:
    chart = reliability(make_reliability(), title="reliability diagram: region R1")
    spec = chart.to_dict()
    named = layers(spec)
    assert list(named) == ["observed"]
    observed = named["observed"]
    assert mark_type(observed) == "line" and observed["mark"]["point"]
    colour = observed["encoding"]["color"]["scale"]
    assert colour["domain"] == ["subpopulation", "full"]
    assert colour["range"][0] == "#000000" and colour["range"][1] != "#000000"
    assert tooltip_fields(observed) == {
        "population",
        "bin",
        "score_mean",
        "response_mean",
        "weight",
        "count",
    }
    assert observed["encoding"]["x"]["title"] == "score"
    assert observed["encoding"]["y"]["title"] == "response"
    assert spec["title"]["text"] == "reliability diagram: region R1"
    render_svg(chart)


@pytest.mark.slow
def test_reliability_resamples_and_diagonal() -> None:
    chart = reliability(
        make_reliability(resamples=20), diagonal=True, x_label="probability", y_label="frequency"
    )
    spec = chart.to_dict()
    assert [layer["name"] for layer in spec["layer"]] == ["resamples", "diagonal", "observed"]
    named = layers(spec)
    resamples = named["resamples"]
    assert len({row["resample"] for row in rows_of(spec, resamples)}) == 20
    assert all(row["resample"] is None for row in rows_of(spec, named["observed"]))
    assert {d["field"] for d in resamples["encoding"]["detail"]} == {"population", "resample"}
    diagonal = named["diagonal"]
    assert diagonal["mark"]["strokeDash"]
    assert all(row["d"] == row["d"] for row in rows_of(spec, diagonal))
    assert diagonal["encoding"]["x"]["field"] == diagonal["encoding"]["y"]["field"]
    assert named["observed"]["encoding"]["x"]["title"] == "probability"
    render_svg(chart)


def test_reliability_rejects_unknown_population() -> None:
    frame = make_reliability().with_columns(pl.lit("other").alias("population"))
    with pytest.raises(InvalidValuesError):
        reliability(frame)
    with pytest.raises(ColumnNotFoundError):
        reliability(make_reliability().drop("count"))


# ---------------------------------------------------------------- screen


@pytest.mark.slow
def test_screen_few_groups() -> None:
    frame = make_screen(5)
    chart = screen(frame, by="region")
    assert isinstance(chart, alt.LayerChart)
    spec = chart.to_dict()
    named = layers(spec)
    groups = named["groups"]
    rows = rows_of(spec, groups)
    assert [row["group"] for row in sorted(rows, key=lambda r: r["rank"])] == frame.sort(
        "kuiper_z", descending=True
    ).get_column("region").to_list()
    null_mean = rows_of(spec, named["null_mean"])[0]["null_mean"]
    assert null_mean == pytest.approx(2 * math.sqrt(2 / math.pi)) == KUIPER_NULL_MEAN
    assert {"group", "n", "kuiper_z", "kuiper_p", "kuiper_q"} <= tooltip_fields(groups)
    flagged = {row["group"] for row in rows if row["flag"].startswith("BH q ≤")}
    expected = set(frame.filter(pl.col("kuiper_q") <= 0.05).get_column("region").to_list())
    assert flagged == expected and flagged
    render_svg(chart)


def test_screen_default_keys_and_alpha() -> None:
    spec = screen(make_screen(6), alpha=0.2).to_dict()
    rows = rows_of(spec, layers(spec)["groups"])
    assert all(row["group"].startswith("region=R") and ", year=" in row["group"] for row in rows)
    assert "BH q ≤ 0.2" in " ".join(spec["title"]["subtitle"])


@pytest.mark.slow
def test_screen_thousand_groups_with_nulls() -> None:
    frame = make_screen(1000, nulls=4)
    chart = screen(frame)
    assert isinstance(chart, alt.VConcatChart)
    spec = chart.to_dict()
    top, overview = spec["vconcat"]
    labelled = rows_of(spec, layers(top)["groups"])
    assert len(labelled) == 15
    ranks = rows_of(spec, layers(overview)["ranks"])
    assert len(ranks) == 996
    assert "4 groups without a normalized statistic" in " ".join(spec["title"]["subtitle"])
    assert {"group", "n", "kuiper_z", "kuiper_p", "kuiper_q"} <= tooltip_fields(
        layers(overview)["ranks"]
    )
    render_svg(chart)


@pytest.mark.slow
def test_screen_top_and_errors() -> None:
    frame = make_screen(60)
    spec = screen(frame, top=5).to_dict()
    assert len(rows_of(spec, layers(spec["vconcat"][0])["groups"])) == 5
    assert isinstance(screen(frame, top=60), alt.LayerChart)
    with pytest.raises(InvalidParameterError):
        screen(frame, alpha=1.5)
    with pytest.raises(InvalidParameterError):
        screen(frame, top=0)
    with pytest.raises(ColumnNotFoundError):
        screen(frame, by="missing")
    with pytest.raises(InvalidParameterError):
        screen(frame.select("n", "kuiper_z", "kuiper_p", "kuiper_q", "note"))


@pytest.mark.slow
def test_screen_all_null_statistics() -> None:
    chart = screen(make_screen(3, nulls=3), by="region")
    assert "3 groups without" in " ".join(chart.to_dict()["title"]["subtitle"])
    render_svg(chart)


# ---------------------------------------------------------------- save


@pytest.fixture(scope="module")
def small_chart() -> alt.LayerChart:
    return cumulative(make_curve(60, weighted=True))


@pytest.mark.slow
def test_save_json(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    path = save(small_chart, tmp_path / "chart.json")
    spec = json.loads(path.read_text(encoding="utf-8"))
    assert "vega-lite" in spec["$schema"]
    assert spec["layer"]


@pytest.mark.slow
def test_save_svg(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    text = save(small_chart, tmp_path / "chart.svg").read_text(encoding="utf-8")
    assert text.lstrip().startswith("<svg") and text.rstrip().endswith("</svg>")


@pytest.mark.slow
def test_save_png(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    one = save(small_chart, tmp_path / "chart.png").read_bytes()
    two = save(small_chart, tmp_path / "chart2.PNG", scale=2).read_bytes()
    assert one.startswith(b"\x89PNG\r\n\x1a\n") and two.startswith(b"\x89PNG")
    assert len(two) > len(one)


@pytest.mark.slow
def test_save_pdf(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    data = save(small_chart, tmp_path / "chart.pdf").read_bytes()
    assert data.startswith(b"%PDF") and len(data) > 1000


@pytest.mark.slow
def test_save_html_is_self_contained(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    page = save(small_chart, tmp_path / "chart.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "<script" in page
    assert not re.search(r"<script[^>]*\bsrc\s*=\s*[\"']?\s*(https?:)?//", page, re.IGNORECASE)
    assert not re.search(r"<link[^>]*href\s*=\s*[\"']?https?://", page, re.IGNORECASE)


def test_save_rejects_unknown_suffix(small_chart: alt.LayerChart, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError):
        save(small_chart, tmp_path / "chart.gif")
    with pytest.raises(InvalidParameterError):
        save(small_chart, tmp_path / "chart")
    with pytest.raises(InvalidParameterError):
        save(small_chart, tmp_path / "chart.png", scale=0)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_save_accepts_spec_dict(tmp_path: Path) -> None:
    spec = screen(make_screen(4)).to_dict()
    path = save(spec, tmp_path / "screen.svg")
    assert path.stat().st_size > 0
    assert "background" not in spec  # the caller's dict is not modified
