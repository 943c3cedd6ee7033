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

import polars_cumdev
from polars_cumdev.report import report

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


def test_report_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc=", text), "a script is loaded from elsewhere"
    assert not re.search(r"<link[^>]*\bhref=", text), "a stylesheet is loaded from elsewhere"
    assert "vegaEmbed" in text


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
