"""How many shuffle partitions the Spark screen gives its score ranges (no Spark needed).

Each range lies whole in one partition whatever the count (the bits do not
depend on it: ``test_cluster_spark.py``'s same-bits tests run ranges sharing
partitions); the count only trades a task's fixed cost against its size.
"""

from __future__ import annotations

import pytest

from polars_cumdev.engines.cluster.spark_ranges import shuffle_partitions
from polars_cumdev.engines.partitioned import ROWS_PER_RANGE


@pytest.mark.parametrize(
    ("ranges", "rows", "slots", "expected"),
    [
        (1, 10, 2, 1),  # one range: one partition
        (20, 2 * 10**6, 2, 2),  # local[2], 2e6 rows: one partition per slot
        (32, 10**7, 2, 4),  # 1e7 rows: at least one per 4e6 rows, a multiple of the slots
        (32, 10**7, 64, 32),  # never more partitions than ranges
        (250, 10**9, 8, 250),  # 1e9 rows: one range per partition, as many as ranges
    ],
)
def test_partitions(ranges, rows, slots, expected):
    assert shuffle_partitions(ranges, rows, slots) == expected


@pytest.mark.parametrize("rows", [0, 1, 99_999, 10**6, 10**7, 3 * 10**8])
@pytest.mark.parametrize("slots", [1, 2, 3, 16])
def test_a_task_holds_at_most_about_one_in_process_range(rows, slots):
    from polars_cumdev.engines.cluster.steps import default_ranges

    ranges = default_ranges(rows)
    parts = shuffle_partitions(ranges, rows, slots)
    assert 1 <= parts <= ranges
    # Ranges are about equal in rows; a partition takes ceil(ranges / parts) of them.
    per_task = -(-ranges // parts) * rows / ranges
    assert per_task <= max(2 * ROWS_PER_RANGE, 2 * rows / ranges)
