"""The recalibration's faces (issue 38): before/after chart, held-out evaluation, HTML report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev import charts
from polars_cumdev.errors import CumdevError
from polars_cumdev.recalibration import Recalibration, before_after_audits, evaluate


def _planted(n: int, seed: int) -> pl.DataFrame:
    """Log-odds shifted by +0.9 where a = 2 & b = 1 and by -0.6 where c = 0; weights."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n)
    t = rng.normal(size=n)
    truth = t + 0.9 * ((a == 2) & (b == 1)) - 0.6 * (c == 0)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.int64)
    w = rng.uniform(0.5, 2.0, n)
    return pl.DataFrame({"a": a, "b": b, "c": c, "p": 1 / (1 + np.exp(-t)), "y": y, "w": w})


@pytest.fixture(scope="module")
def fitted() -> tuple[Recalibration, pl.DataFrame]:
    family = pc.segments(["a", "b", "c"], depth=2)
    fix = _planted(8000, 1).cumdev.recalibrate("p", "y", "w", segments=family)
    return fix, _planted(8000, 2)


@pytest.mark.slow
def test_evaluate_before_and_after(fitted):
    fix, holdout = fitted
    table = evaluate(fix, holdout)
    before, after = table.rows(named=True)
    assert (before["scores"], after["scores"]) == ("before", "after")
    assert before["significant"] > 0 and after["significant"] == 0
    assert after["log_loss"] < before["log_loss"] and after["brier"] < before["brier"]
    y, w = holdout["y"].to_numpy(), holdout["w"].to_numpy()
    p = holdout["p"].to_numpy()
    assert before["brier"] == pytest.approx(np.sum(w * (p - y) ** 2) / np.sum(w), rel=1e-12)


@pytest.mark.slow
def test_before_after_chart(fitted):
    fix, holdout = fitted
    before, after = before_after_audits(fix, holdout)
    spec = charts.before_after(before, after).to_dict()
    assert len(spec["hconcat"]) == 2
    assert spec["resolve"]["scale"]["y"] == "shared"


@pytest.mark.slow
def test_report(fitted, tmp_path: Path):
    fix, holdout = fitted
    path = holdout.cumdev.recalibration_report(fix, path=tmp_path / "r.html")
    page = path.read_text(encoding="utf-8")
    assert "The held-out audit, before and after" in page
    assert "a = 2 &amp; b = 1" in page and "no stretch shaded" in page
    with pytest.raises(CumdevError, match="Recalibration"):
        pc.report.recalibration_report("fix", holdout, path=tmp_path / "x.html")  # type: ignore[arg-type]
