"""Selecting a group by its key values: null keys are values like any other."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_cumdev.method.groups import group_label, group_selection

KEYS = st.lists(
    st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from([1, 2, None])),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(rows=KEYS, dtype=st.sampled_from([pl.String, pl.Categorical, pl.Enum(["a", "b"])]))
@pytest.mark.slow
def test_every_group_of_the_screen_is_selected_exactly(rows, dtype):
    frame = pl.DataFrame(
        {"g": [g for g, _ in rows], "h": [h for _, h in rows]},
        schema={"g": dtype, "h": pl.Int8},
    )
    groups = frame.unique(maintain_order=True)
    for row in groups.iter_rows(named=True):
        mask = frame.select(group_selection(["g", "h"], row)).to_series()
        # Naive: a row belongs to the group when both its keys equal the group's, None == None.
        expected = [g == row["g"] and h == row["h"] for g, h in rows]
        assert mask.null_count() == 0
        assert mask.to_list() == expected
        assert mask.name == group_label(["g", "h"], row)


def test_labels_write_null_as_null_in_parentheses():
    assert group_label(["county"], {"county": None}) == "county = (null)"
    assert group_label(["g", "h"], {"g": "x", "h": 3}) == "g = x, h = 3"
