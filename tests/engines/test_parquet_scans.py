"""Issue 25, item 12: a query the user built on ``pl.scan_parquet`` over files that disagree.

``pl.scan_parquet(glob).cumdev.screen(...)`` reads the files only when the
result is collected; before, a file with another dtype, a missing used
column, an extra column, a corrupt footer or a path naming nothing failed
there with a raw Polars ``SchemaError``, ``ColumnNotFoundError``,
``ComputeError`` or ``FileNotFoundError``. The files' footers are now checked
when the analysis is planned, with the message of the in-process Parquet
screen (tests/engines/test_parquet_files.py), identically on both engines.
Only what Polars' own scan would refuse is refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_parquet_files import CASES, _expected, _part, _write

from polars_cumdev.errors import CumdevError

# A data page damaged behind a sound footer is found only by reading the data, in
# the user's collect (the module docstring of polars_cumdev/engines/scans.py).
LAZY_CASES = [c for c in CASES if c != "damaged data page"]


def _screen(path: str, engine: str, **scan: object) -> pl.DataFrame:
    query = pl.scan_parquet(path, **scan).cumdev.screen("g", "s", "r", "w", engine=engine)
    return query.collect()


@pytest.mark.slow
@pytest.mark.parametrize("case", LAZY_CASES)
def test_user_built_scan(tmp_path: Path, case: str) -> None:
    path, words = _write(tmp_path / "data", case)
    if Path(path).is_dir():
        path = str(Path(path) / "*.parquet")
    if case == "extra column":  # Polars' scan refuses it unless told to ignore it
        words = "extra_columns='ignore'"
    messages = []
    for engine in ("polars", "kernel"):
        if words is None:
            table = _screen(path, engine).sort("g")
            np.testing.assert_allclose(table["kuiper"], _expected(tmp_path)["kuiper"], rtol=1e-9)
            continue
        with pytest.raises(CumdevError) as caught:
            _screen(path, engine)
        messages.append(str(caught.value))
    if words is not None:
        assert messages[0] == messages[1], messages
        assert words in messages[0], messages[0]
        if words.endswith(" in") or case in ("extra column", "corrupt file"):
            assert "b.parquet" in messages[0], messages[0]


@pytest.mark.slow
def test_only_what_polars_refuses_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    first = _part(1).with_columns(pl.lit(1).alias("unused"))
    first.write_parquet(folder / "a.parquet")
    # The second file lacks a column the screen does not use, and has one extra.
    _part(2).with_columns(pl.lit("x").alias("extra")).write_parquet(folder / "b.parquet")
    expected = pl.concat([_part(1), _part(2)]).cumdev.screen("g", "s", "r", "w").sort("g")
    table = _screen(str(folder / "*.parquet"), "polars", extra_columns="ignore").sort("g")
    np.testing.assert_allclose(table["kuiper"], expected["kuiper"], rtol=1e-9)
    # A used column of another dtype, when the scan is told to upcast it, is Polars' to read.
    _part(2).with_columns(pl.col("s").cast(pl.Float32)).write_parquet(folder / "b.parquet")
    upcast = pl.ScanCastOptions(float_cast="upcast")
    table = _screen(str(folder / "*.parquet"), "kernel", cast_options=upcast).sort("g")
    assert table.height == 3 and table["kuiper"].is_finite().all()


def test_a_frame_of_memory_is_not_serialized(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serializing a plan holds its in-memory data (57 MB of JSON for 2M floats): not done."""
    calls: list[object] = []
    original = pl.LazyFrame.serialize

    def counted(self: pl.LazyFrame, *args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "serialize", counted)
    table = _part(3).lazy().cumdev.screen("g", "s", "r", "w").collect()
    assert table.height == 3 and not calls
