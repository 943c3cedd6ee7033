"""Screen data larger than memory, range by range (the public entry points).

A thin facade over :mod:`polars_cumdev.engines.partitioned`, which holds the
per-range step, the combination and the second pass that locates the
deviation; see the workflow page "Lazy and streaming use".
"""

from __future__ import annotations

from polars_cumdev.engines.partitioned import screen_parquet, screen_partitioned
from polars_cumdev.engines.partitioned.calibration_drivers import (
    calibration_parquet,
    calibration_partitioned,
)

__all__ = ["calibration_parquet", "calibration_partitioned", "screen_parquet", "screen_partitioned"]
