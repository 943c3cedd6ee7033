"""The HTML report: self-contained, escaped, and rendered by a real browser."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_cumdev
from polars_cumdev.report.subpopulation import report

HOSTILE = "</script><script>alert(1)</script>"


@pytest.fixture(scope="module")
def households() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    m = 3000
    county = rng.choice(["Alpha", "Beta", HOSTILE, 'Q"&<b>'], size=m, p=[0.4, 0.3, 0.2, 0.1])
    score = np.round(rng.normal(4.7, 0.3, size=m), 2)
    p = 1 / (1 + np.exp(-3 * (score - 4.5))) - 0.15 * (county == HOSTILE)
    return pl.DataFrame(
        {
            "county": county,
            "log_income": score,
            "has_internet": (rng.uniform(size=m) < np.clip(p, 0, 1)).astype(np.int64),
            "w": rng.integers(1, 50, size=m),
        }
    )


@pytest.fixture(scope="module")
def page(households: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    written = households.cumdev.report(
        by="county", score="log_income", response="has_internet", weight="w", path=path, top=3
    )
    assert written == path
    return path


@pytest.mark.slow
def test_report_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc=", text), "a script is loaded from elsewhere"
    assert not re.search(r"<link[^>]*\bhref=", text), "a stylesheet is loaded from elsewhere"
    assert "vegaEmbed" in text


@pytest.mark.slow
def test_group_names_are_escaped_everywhere(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    # The hostile name never appears raw; in HTML it is entity-escaped ...
    assert HOSTILE not in text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text
    # ... and inside the embedded JSON, < and > are unicode-escaped.
    assert "\\u003c/script\\u003e" in text
    # Exactly our own script elements: the bundle, one per chart spec, and the boot code.
    charts = len(re.findall(r'<div id="chart-\d+"></div>', text))
    assert charts == 1 + 2 * 3
    assert len(re.findall(r"<script\b", text)) == 1 + charts + 1


def test_report_rejects_bad_top(households: pl.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(polars_cumdev.InvalidParameterError, match="top"):
        report(households, "county", "log_income", "has_internet", path=tmp_path / "r.html", top=-1)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.slow  # a real browser / cluster round trip; runs in the full suite
@pytest.mark.skipif(_chromium() is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_report_renders_in_headless_chromium_without_console_errors(page: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [
                _chromium() or "chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=10000",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "\n".join(console)
    dom = run.stdout
    # Every chart box got an SVG drawn by Vega, and no alert() ran as a script.
    assert len(re.findall(r'<svg[^>]*class="marks"', dom)) == 7
    assert "<script>alert(1)</script>" not in dom


@pytest.fixture(scope="module")
def with_null_county() -> pl.DataFrame:
    """Households whose county is sometimes missing; those deviate most."""
    rng = np.random.default_rng(11)
    m = 4000
    county = rng.choice(["Alpha", "Beta", "Gamma", "(none)"], size=m, p=[0.4, 0.3, 0.2, 0.1])
    score = np.round(rng.normal(4.7, 0.3, size=m), 2)
    p = 1 / (1 + np.exp(-3 * (score - 4.5))) - 0.3 * (county == "(none)")
    return pl.DataFrame(
        {
            "county": np.where(county == "(none)", None, county),
            "log_income": score,
            "has_internet": (rng.uniform(size=m) < np.clip(p, 0, 1)).astype(np.int64),
            "w": rng.integers(1, 50, size=m),
        }
    )


@pytest.mark.slow
def test_report_drills_into_the_null_group(
    with_null_county: pl.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from polars_cumdev.method.groups import selection_label
    from polars_cumdev.report import subpopulation as report_module

    args = {"score": "log_income", "response": "has_internet", "weight": "w"}
    table = with_null_county.cumdev.screen(by="county", **args)
    assert table["county"][0] is None  # the null group is the most significant
    drawn: dict[str, pl.DataFrame] = {}
    real_curve = report_module.curve

    def spy(frame, subpop, *positional, **keywords):
        points = real_curve(frame, subpop, *positional, **keywords)
        drawn[selection_label(subpop)] = points.collect()
        return points

    monkeypatch.setattr(report_module, "curve", spy)
    path = report(with_null_county, "county", **args, path=tmp_path / "r.html", top=3)
    text = path.read_text(encoding="utf-8")
    assert "<h2>county = (null)" in text  # the heading names the group
    assert len(re.findall(r'<div id="chart-\d+"></div>', text)) == 1 + 2 * 3
    assert sorted(drawn) == sorted(
        f"subpop 'county = {name}'" for name in ["(null)", *table["county"][1:3]]
    )
    expected = with_null_county.cumdev.curve(subpop=pl.col("county").is_null(), **args)
    assert_frame_equal(drawn["subpop 'county = (null)'"], expected)
    second = with_null_county.cumdev.curve(
        subpop=pl.col("county").fill_null("") == table["county"][1], **args
    )
    assert_frame_equal(drawn[f"subpop 'county = {table['county'][1]}'"], second)


@pytest.mark.slow
def test_report_on_several_covariates_names_them_and_maps_the_points(tmp_path: Path) -> None:
    """score=[...]: headers in covariate terms, the map beside each curve, every spec renders."""
    import json

    import vl_convert

    rng = np.random.default_rng(11)
    m = 4000
    age = rng.integers(20, 80, size=m).astype(np.float64)
    income = np.round(rng.normal(4.7, 0.3, size=m), 2)
    county = rng.choice(["North", "South", "East"], size=m)
    # North falls short only among the old and rich: a corner of covariate space.
    corner = (county == "North") & (age > 60) & (income > 4.8)
    p = np.clip(0.6 - 0.5 * corner, 0.0, 1.0)
    frame = pl.DataFrame(
        {"county": county, "age": age, "income": income, "y": (rng.uniform(size=m) < p) * 1.0}
    )
    path = report(frame, "county", ["income", "age"], "y", path=tmp_path / "r.html", top=2)
    text = path.read_text(encoding="utf-8")
    table = frame.cumdev.screen(by="county", score=["income", "age"], response="y")
    top = table.row(0, named=True)
    assert top["county"] == "North"
    headers = [h for h in re.findall(r"<h2>(.*?)</h2>", text) if h != "How to read this page"]
    assert "covariates &#x27;income&#x27;, &#x27;age&#x27; along a Hilbert curve" in headers[1]
    ends = [f"({top[f'{side}_income']:.4g}, {top[f'{side}_age']:.4g})" for side in ("from", "to")]
    assert headers[2].startswith(f"county = North: (income, age) from {ends[0]} to {ends[1]}, ")
    assert "less y than rows with the same covariates overall" in headers[2]
    specs = [
        json.loads(block)
        for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', text)
    ]
    assert len(specs) == 1 + 2 * 2
    for spec in specs[1:]:  # each drill-down: the curve, then the map (no reliability diagram)
        assert "reliability" not in json.dumps(spec.get("title", ""))
    maps = [s for s in specs if "points along the curve" in json.dumps(s.get("title", ""))]
    assert len(maps) == 2
    assert {"income", "age"} <= set(re.findall(r'"field": "(\w+)"', json.dumps(maps[0])))
    for spec in specs:
        assert vl_convert.vegalite_to_svg(spec).startswith("<svg")
