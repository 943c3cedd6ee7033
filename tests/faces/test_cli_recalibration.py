"""`cumdev recalibrate` and `cumdev apply` (issue 38): the fix from a file, never over its input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_cumdev.cli import main
from polars_cumdev.recalibration import Recalibration


def _planted(n: int, seed: int) -> pl.DataFrame:
    """Log-odds shifted by +0.9 where a = 2 & b = 1 and by -0.6 where c = 0."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n)
    t = rng.normal(size=n)
    truth = t + 0.9 * ((a == 2) & (b == 1)) - 0.6 * (c == 0)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.int64)
    return pl.DataFrame({"a": a, "b": b, "c": c, "p": 1 / (1 + np.exp(-t)), "y": y})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("recalibration")
    train, test = folder / "train.parquet", folder / "test.csv"
    _planted(8000, 1).write_parquet(train)
    _planted(500, 2).write_csv(test)
    fix = folder / "fix.json"
    code = main(
        ["recalibrate", str(train), "--score", "p", "--response", "y",
         "--categorical", "a,b,c", "--output", str(fix)]
    )  # fmt: skip
    assert code in (0, None)
    return train, test, fix


def test_recalibrate_writes_the_fix(files, capsys: pytest.CaptureFixture[str]):
    _, _, fix = files
    read = Recalibration.from_json(fix.read_text())
    conditions = {c.condition for c in read.corrections}
    assert '"c" = 0' in conditions and '"a" = 2 AND "b" = 1' in conditions
    assert json.loads(fix.read_text())["version"] == 1


def test_apply_adds_the_recalibrated_score(files, tmp_path: Path):
    _, test, fix = files
    out = tmp_path / "scored.parquet"
    assert main(["apply", str(fix), str(test), "--output", str(out)]) in (0, None)
    scored = pl.read_parquet(out)
    expected = pl.read_csv(test).select(Recalibration.from_json(fix.read_text()).expr())
    assert scored.columns[-1] == "recalibrated"
    assert scored["recalibrated"].to_numpy().tobytes() == expected.to_series().to_numpy().tobytes()


def test_apply_never_writes_over_its_input(files, capsys: pytest.CaptureFixture[str]):
    train, test, fix = files
    before = test.read_bytes()
    code = main(["apply", str(fix), str(test), "--output", str(test)])
    err = capsys.readouterr().err
    assert code == 2 and "it is the input" in err and "Traceback" not in err
    assert test.read_bytes() == before
    code = main(["apply", str(fix), str(test), "--output", str(fix)])
    assert code == 2 and fix.read_text().startswith("{")
    code = main(["recalibrate", str(train), "--score", "p", "--response", "y",
                 "--output", str(train)])  # fmt: skip
    assert code == 2


def test_apply_missing_column_and_bad_file(files, tmp_path: Path, capsys):
    _, _, fix = files
    data = tmp_path / "d.csv"
    _planted(50, 3).drop("c").write_csv(data)
    code = main(["apply", str(fix), str(data), "--output", str(tmp_path / "o.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and "'c'" in err and "Traceback" not in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**json.loads(fix.read_text()), "version": 99}))
    code = main(["apply", str(other), str(data), "--output", str(tmp_path / "o.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and "version 99" in err


def test_recalibrate_without_features_audits_the_full_population(files, tmp_path: Path, capsys):
    """No --categorical/--numerical: the default family (it failed: segments() needs a feature)."""
    train, test, _ = files
    fix = tmp_path / "global.json"
    code = main(["recalibrate", str(train), "--score", "p", "--response", "y",
                 "--output", str(fix)])  # fmt: skip
    captured = capsys.readouterr()
    assert code in (0, None), captured.err
    assert "Traceback" not in captured.err
    read = Recalibration.from_json(fix.read_text())
    assert read.features == () and read.corrections == ()
    assert dict(read.fitting)["segments"]["categorical"] == []
    out = tmp_path / "scored.parquet"
    assert main(["apply", str(fix), str(test), "--output", str(out)]) in (0, None)
    expected = pl.read_csv(test).select(read.expr()).to_series().to_numpy()
    assert pl.read_parquet(out)["recalibrated"].to_numpy().tobytes() == expected.tobytes()


@pytest.mark.slow
def test_recalibrate_predicted_means_and_apply(tmp_path: Path, capsys):
    """--target mean: a fix of predicted means, applied by `cumdev apply` to the same bits."""
    rng = np.random.default_rng(7)
    n = 6000
    a, m = rng.integers(0, 3, n), rng.normal(size=n)
    y = 0.7 * m + 0.5 + 0.6 * (a == 1) + rng.normal(size=n)
    train, test = tmp_path / "train.parquet", tmp_path / "test.csv"
    pl.DataFrame({"a": a, "m": m, "y": y}).write_parquet(train)
    pl.DataFrame({"a": a[:700], "m": 3 * m[:700], "y": y[:700]}).write_csv(test)
    fix = tmp_path / "means.json"
    code = main(["recalibrate", str(train), "--score", "m", "--response", "y",
                 "--target", "mean", "--categorical", "a", "--output", str(fix)])  # fmt: skip
    assert code in (0, None), capsys.readouterr().err
    read = Recalibration.from_json(fix.read_text())
    assert read.target == "mean" and json.loads(fix.read_text())["target"] == "mean"
    assert any(c.condition == '"a" = 1' for c in read.corrections)
    out = tmp_path / "scored.parquet"
    assert main(["apply", str(fix), str(test), "--output", str(out)]) in (0, None)
    scored = pl.read_parquet(out)["recalibrated"].to_numpy()
    expected = pl.read_csv(test).select(read.expr()).to_series().to_numpy()
    assert scored.tobytes() == expected.tobytes()
    assert np.abs(scored).max() > 1.5  # means, unclipped (not probabilities)
    # the means' audit is Holm's: another method is refused in the user's terms
    code = main(["recalibrate", str(train), "--score", "m", "--response", "y",
                 "--target", "mean", "--method", "bootstrap"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "method='holm'" in err and "Traceback" not in err
