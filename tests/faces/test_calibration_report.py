"""The calibration report: both views side by side, self-contained, escaped, renderable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import vl_convert
from test_report import _chromium

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.report.calibration import calibration_report

HOSTILE = "</script><script>alert(1)</script>"


@pytest.fixture(scope="module")
def predictions() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    m = 2400
    group = rng.choice(["Alpha", "Beta", HOSTILE], size=m, p=[0.5, 0.3, 0.2])
    score = rng.integers(1, 40, size=m) / 40.0
    truth = np.clip(score + 0.15 * (group == "Beta") * np.sin(6 * score), 0, 1)
    return pl.DataFrame(
        {
            "group": group,
            "score": score,
            "outcome": (rng.uniform(size=m) < truth).astype(np.int64),
            "w": rng.integers(1, 5, size=m),
        }
    )


@pytest.fixture(scope="module")
def page(predictions: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("calibration_report") / "calibration.html"
    written = calibration_report(
        predictions, "score", "outcome", "w", path=path, by="group", top=2, resamples=30
    )
    assert written == path
    return path


def specs(text: str) -> list[dict]:
    found = re.findall(r'<script type="application/json" data-target="[^"]+">(.*?)</script>', text)
    return [json.loads(s) for s in found]


@pytest.mark.slow  # renders the whole page (module fixture)
def test_two_views_side_by_side_for_all_predictions_and_the_top_groups(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    charts = specs(text)
    # All predictions, then the two top groups: a cumulative plot and a CORP diagram each.
    assert len(charts) == 2 * 3
    # A cumulative plot's title is a list of lines (wrapped to fit), the CORP diagram's a string.
    titles = [
        t if isinstance(t, str) else " ".join(t) for t in (c["title"]["text"] for c in charts)
    ]
    assert titles[0].startswith("cumulative miscalibration") and titles[1].startswith("CORP")
    assert "Brier" in " ".join(charts[1]["title"]["subtitle"])
    # The table lists every group with both kinds of statistics.
    assert text.count("<table><thead>") == 1 + 1 + 2
    headers = ("rows", "ECCE-R / sigma", "q (BH-adjusted)", "miscalibration (MCB)")
    for column in (*headers, "discrimination (DSC)", "uncertainty (UNC)"):
        assert f"<th>{column}</th>" in text
    for column in ("n", "ecce_r_z", "ecce_r_q", "mcb"):
        assert f"<th>{column}</th>" not in text  # said in the user's terms
    assert "How to read this page" in text


@pytest.mark.slow  # renders the whole page (module fixture)
def test_every_chart_compiles(page: Path) -> None:
    for spec in specs(page.read_text(encoding="utf-8")):
        assert vl_convert.vegalite_to_svg(spec).lstrip().startswith("<svg")


@pytest.mark.slow  # renders the whole page (module fixture)
def test_names_are_escaped_and_nothing_is_loaded(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert HOSTILE not in text
    assert not re.search(r"<script[^>]*\bsrc=", text)


@pytest.mark.slow
def test_without_groups_and_bad_top(predictions: pl.DataFrame, tmp_path: Path) -> None:
    path = calibration_report(predictions, "score", "outcome", path=tmp_path / "a.html", band=None)
    assert len(specs(path.read_text(encoding="utf-8"))) == 2
    with pytest.raises(InvalidParameterError, match="top"):
        calibration_report(predictions, "score", "outcome", path=tmp_path / "b.html", top=-1)


@pytest.mark.slow  # a real browser / cluster round trip; runs in the full suite
@pytest.mark.skipif(_chromium() is None, reason="no Chromium on this machine (.ci/run installs it)")
def test_renders_in_headless_chromium(page: Path) -> None:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [
                _chromium() or "chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
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
    assert [line for line in run.stderr.splitlines() if ":CONSOLE" in line] == []
    assert len(re.findall(r'<svg[^>]*class="marks"', run.stdout)) == 6


@pytest.mark.slow
def test_the_null_group_is_drawn_and_labelled(predictions: pl.DataFrame, tmp_path: Path) -> None:
    # Beta's predictions are the miscalibrated ones; without a group name they form the null group.
    missing = predictions.with_columns(
        pl.when(pl.col("group") == "Beta").then(None).otherwise(pl.col("group")).alias("group")
    )
    path = calibration_report(
        missing, "score", "outcome", "w", path=tmp_path / "c.html", by="group", top=1, resamples=0
    )
    text = path.read_text(encoding="utf-8")
    assert "<h2>group = (null)" in text  # the heading names the group
    assert len(specs(text)) == 2 * 2
