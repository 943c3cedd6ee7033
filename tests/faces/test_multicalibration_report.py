"""The multicalibration HTML report: findings only where the family-wise p supports them.

Oracle: data with a miscalibration planted in one depth-2 intersection (the
page must name it, with a located stretch) and perfectly calibrated data
(the page must say no segment is significant and state no direction).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.cli import main
from polars_cumdev.report.multicalibration import multicalibration_report

_DIRECTIONS = re.compile(r"exceed|fall short of")


def _frame(planted: float, n: int = 6000, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, n)
    a = rng.choice(["x", "y", "z"], n)
    b = rng.choice(["1", "2", "3"], n)
    p = np.where((a == "x") & (b == "2"), np.clip(s + planted, 0, 1), s)
    return pl.DataFrame({"p": s, "y": (rng.random(n) < p).astype(np.int8), "a": a, "b": b})


def _text(page: Path) -> str:
    html = page.read_text(encoding="utf-8")
    body = html[html.index("<h1") :]
    return re.sub(r"<script.*?</script>", "", body, flags=re.S)


@pytest.mark.slow
def test_planted_segment_is_named_with_its_stretch(tmp_path: Path):
    family = pc.segments(["a", "b"], depth=2)
    page = multicalibration_report(
        _frame(0.2), "p", "y", segments=family, path=tmp_path / "audit.html", top=2
    )
    text = _text(page)
    assert "significant family-wise (largest z" in text
    assert "a = x &amp; b = 2 (" in text  # the sentence about the planted intersection
    assert re.search(r"a = x &amp; b = 2 \([\d,]+ rows\): responses exceed the scores", text)
    assert "p_family" in text and "How to read this audit" in text
    # its own guide (issue 36, item 6): p_family is a family-wise p-value, never "q"
    assert "How to read this page" not in text and "is the family-wise p-value" in text
    assert "q &le;" not in text and "q =" not in text and "BH-adjusted" not in text
    assert "p_family (family-wise p)" in text
    assert "nothing pooled into (other)" in text  # the summary says what the level rule pooled
    # notes do not repeat the finding column
    assert "<td>not significant: p_family" not in text


@pytest.mark.slow
def test_calibrated_model_gets_no_finding(tmp_path: Path):
    family = pc.segments(["a", "b"], depth=2)
    page = multicalibration_report(
        _frame(0.0, seed=11), "p", "y", segments=family, path=tmp_path / "null.html"
    )
    text = _text(page)
    assert "no segment is significant family-wise" in text
    assert "not significant family-wise" in text
    findings = text[text.index("</ul></div>") :]  # past the guide, which explains the words
    assert not _DIRECTIONS.search(findings)


@pytest.mark.slow
def test_cli_and_namespace_write_the_report(tmp_path: Path):
    data = tmp_path / "data.parquet"
    _frame(0.2).write_parquet(data)
    page = tmp_path / "cli.html"
    code = main(
        ["multicalibration", str(data), "--score", "p", "--response", "y",
         "--categorical", "a,b", "--depth", "2", "--report", str(page)]
    )  # fmt: skip
    assert code in (0, None)
    assert "a = x &amp; b = 2" in _text(page)
    family = pc.segments(["a", "b"], depth=2)
    other = (
        pl.read_parquet(data)
        .lazy()
        .cumdev.multicalibration_report("p", "y", segments=family, path=tmp_path / "ns.html", top=1)
    )
    assert "a = x &amp; b = 2" in _text(other)
