"""Running an analysis somewhere other than one in-memory plan.

- :mod:`.partitioned`: range by range (larger than memory, from Parquet);
- :mod:`.cluster`: the same per-range step on Spark or Dask workers (public
  entry points :mod:`polars_cumdev.spark` and :mod:`polars_cumdev.dask`).
"""
