"""The segment levels of a cluster multicalibration (issue 39, item 1): from value tables.

polars_cumdev.engines.cluster.segment_levels finds each feature's levels from per-part
tables of distinct values and rows added up on the driver, and codes each part's rows with
them: the codes, labels, conditions and pooled counts must be those of the in-process
coded_features on the whole column, however the rows are split into parts. No cluster.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

import polars_cumdev as pc
from polars_cumdev.engines.cluster.segment_levels import (
    feature_codes,
    levels_from_tables,
    merge_tables,
    refuse_unsupported,
    value_tables,
)
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.multicalibration.levels import coded_features


def _frame(seed: int, rows: int = 3000) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cont = rng.normal(size=rows).round(2)  # ties
    cont[rng.random(rows) < 0.02] = np.nan
    few = rng.integers(0, 3, rows).astype(float)
    labels = rng.choice(["u", "v", "w", "rare1", "rare2"], rows, p=[0.4, 0.3, 0.28, 0.01, 0.01])
    return pl.DataFrame(
        {
            "cat": labels,
            "code": rng.integers(0, 60, rows),
            "kind": pl.Series(rng.choice(["p", "q"], rows)).cast(pl.Categorical),
            "cont": cont,
            "few": few,
            "count": rng.integers(-50, 50, rows),
            "flag": rng.random(rows) < 0.3,
        }
    ).with_columns(
        pl.when(pl.int_range(pl.len()) % 17 == 2).then(None).otherwise(pl.col(c)).alias(c)
        for c in ("cat", "cont", "count")
    )


FAMILIES = [
    pc.segments(["cat", "code", "kind"], ["cont", "few", "count", "flag"], min_rows=40),
    pc.segments(["cat", "code"], ["cont", "count"], levels=4, min_rows=1),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cuts", [[], [1, 2, 1500], [700, 2999]])
def test_levels_from_parts_are_the_in_process_levels(family, cuts) -> None:
    frame = _frame(7)
    expected = coded_features(frame, family)
    bounds = [0, *cuts, frame.height]
    parts = [frame.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
    tables = merge_tables([value_tables(p, family) for p in parts], len(family.features))
    levels = levels_from_tables(tables, family, frame.schema)
    coded = [feature_codes(p, levels) for p in parts]
    for f, want in enumerate(expected):
        got = np.concatenate([c[f].codes for c in coded])
        assert np.array_equal(got, want.codes), family.features[f]
        assert coded[0][f].labels == want.labels, family.features[f]
        assert coded[0][f].conditions == want.conditions, family.features[f]
        assert coded[0][f].pooled == want.pooled, family.features[f]


def test_what_the_engines_do_not_run_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="rules='mcgrad'"):
        refuse_unsupported(pc.segments(["a"], rules="mcgrad"), "holm", "Dask")
    with pytest.raises(InvalidParameterError, match="method='bootstrap'"):
        refuse_unsupported(pc.segments(["a"]), "bootstrap", "Spark")
    wide = pl.DataFrame({"n": [0, 1 << 60]})
    with pytest.raises(InvalidParameterError, match="numerical feature 'n'"):
        value_tables(wide, pc.segments(numerical=["n"]))
