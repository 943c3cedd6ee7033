"""The compiled engine: :mod:`polars_cumdev.kernel` as a node of a lazy Polars plan.

The plan still does what Polars does best: validating, rescaling the
weights, projecting, filtering (pushed into scans) and the one sort by
score. The rows then reach the kernel through :meth:`polars.LazyFrame.map_batches`
(the whole sorted frame at once, under either engine), which returns the
small per-group (or per-point) frame the rest of the plan normalizes.

Which engine runs is the ``engine`` argument of the public functions:

* ``"polars"``: the lazy Polars plan of :mod:`polars_cumdev.subpopulation`
  (the kernel's oracle in the tests);
* ``"kernel"``: the compiled kernel (Numba is a dependency of the package);
* ``"auto"`` (default): the kernel for at least :data:`KERNEL_ROWS` rows,
  Polars below. Numba's import (about half a second) and its first call in
  a fresh environment (a few seconds of compilation, then cached on disk)
  would cost a small screen more than it saves. For a DataFrame the choice
  is made when the query is built; for a LazyFrame, whose size is unknown
  until it runs, inside the node: below the threshold the node runs the
  Polars stages on the rows it received.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.errors import CumdevError, InvalidParameterError

__all__ = [
    "ENGINES",
    "KERNEL_ROWS",
    "Engine",
    "check_engine",
    "choose",
    "group_ids",
    "kernel",
    "sorted_node",
]

Engine = Literal["auto", "polars", "kernel"]
ENGINES = ("auto", "polars", "kernel")
#: Fewest rows for which ``engine="auto"`` runs the compiled kernel.
KERNEL_ROWS = 1_000_000

_GID = f"{nm.PREFIX}gid"
# Key ranges up to this size map to group numbers by an offset (else a join).
_DIRECT_RANGE = 1 << 24


def check_engine(engine: object) -> Engine:
    """Validate the ``engine`` argument."""
    if engine not in ENGINES:
        raise InvalidParameterError(f"`engine` must be one of {ENGINES}, got {engine!r}")
    return engine  # type: ignore[return-value]


def kernel():
    """Import :mod:`polars_cumdev.kernel` (and Numba) on first use."""
    if importlib.util.find_spec("numba") is None:
        raise CumdevError(
            "engine='kernel' needs Numba, which is not installed: pip install numba "
            "(or use engine='polars')"
        )
    from polars_cumdev import kernel as module

    return module


def choose(engine: Engine, frame: object) -> Literal["polars", "kernel", "at run time"]:
    """Resolve ``engine`` for an input frame: eager frames by height, lazy ones at run time."""
    if engine != "auto":
        return engine
    if importlib.util.find_spec("numba") is None:
        return "polars"
    if isinstance(frame, pl.DataFrame):
        return "kernel" if frame.height >= KERNEL_ROWS else "polars"
    return "at run time"


def group_ids(batch: pl.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, int]:
    """Dense-enough group numbers of the rows of ``batch`` (0 <= id < count), and the count.

    A single integer-like key (integers, booleans, dates, times, strings
    through a categorical cast) maps by an offset from its smallest value,
    with null as one more number, when the range is at most 2^24; any other
    key set is numbered by a join with its distinct values. Numbers with no
    row are allowed: the kernel reports them as absent.
    """
    if not keys:
        return np.zeros(batch.height, dtype=np.int64), 1
    if len(keys) == 1:
        column = batch.get_column(keys[0])
        dtype = column.dtype
        if dtype == pl.String:
            column = column.cast(pl.Categorical)
        if dtype == pl.Boolean:
            column = column.cast(pl.Int8)
        physical = column.to_physical()
        if physical.dtype.is_integer():
            low, high = physical.min(), physical.max()
            if low is None:  # every key is null
                return np.zeros(batch.height, dtype=np.int64), 1
            span = int(high) - int(low) + 1  # type: ignore[operator]
            if span < _DIRECT_RANGE:
                ids = (physical.cast(pl.Int64) - int(low)).fill_null(span)  # type: ignore[arg-type]
                return ids.to_numpy(), span + 1
    table = batch.select(keys).unique().with_row_index(_GID)
    ids = batch.select(keys).join(
        table, on=list(keys), how="left", nulls_equal=True, maintain_order="left"
    )
    return ids.get_column(_GID).cast(pl.Int64).to_numpy(), table.height


def sorted_node(
    rows: pl.LazyFrame,
    columns: Sequence[str],
    function: Callable[[pl.DataFrame], pl.DataFrame],
    schema: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """``rows`` reduced to ``columns``, sorted by score, handed whole to ``function``."""
    return (
        rows.select(columns)
        .sort(nm.SCORE)
        .map_batches(function, schema=pl.Schema(schema), streamable=False)
    )


def arrays(batch: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The score, response and weight columns as contiguous float64 arrays."""
    return tuple(  # type: ignore[return-value]
        np.ascontiguousarray(batch.get_column(c).cast(pl.Float64).to_numpy())
        for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    )


def centre(batch: pl.DataFrame) -> float:
    """c = round(2 mean R) / 2, computed as the Polars plan computes it."""
    value = batch.select((pl.col(nm.RESPONSE).mean() * 2.0).round() / 2.0).item()
    return 0.0 if value is None else float(value)


def summary_frame(
    batch: pl.DataFrame, keys: Sequence[str], out: np.ndarray, first: np.ndarray
) -> pl.DataFrame:
    """The kernel's per-group arrays in the layout of :func:`polars_cumdev.statistics.summarize`.

    Divides the kernel's sums by the group's total weight W_g (by W_g^2 for
    the sigma terms): C_k = (sum_{j<=k} W'_j (R'_j - Rt_j)) / W_g, and so on.
    Groups without rows are dropped; keys are read from each group's first row.
    """
    from polars_cumdev import kernel as k
    from polars_cumdev.statistics import (
        C_ERROR,
        OVERFLOWS,
        SIGMA_B,
        SIGMA_B_ERROR,
        SIGMA_E,
        SIGMA_E_ERROR,
    )

    present = first >= 0
    out, first = out[present], first[present]
    total = out[:, k.WEIGHT]
    top, bottom = out[:, k.C_MAX], out[:, k.C_MIN]
    columns = {
        "n": out[:, k.N_ROWS].astype(np.int64),
        "n_scores": out[:, k.N_SCORES].astype(np.int64),
        "weight": total,
        "kuiper": (np.maximum(top, 0.0) - np.minimum(bottom, 0.0)) / total,
        "ks": np.maximum(np.abs(top), np.abs(bottom)) / total,
        "delta": out[:, k.C_LAST] / total,
        SIGMA_B: out[:, k.SIGMA_B] / (total * total),
        SIGMA_E: out[:, k.SIGMA_E] / (total * total),
        C_ERROR: out[:, k.ERR_C] / total,
        SIGMA_B_ERROR: out[:, k.ERR_B] / (total * total),
        SIGMA_E_ERROR: out[:, k.ERR_E] / (total * total),
        OVERFLOWS: out[:, k.OVERFLOWS].astype(np.int64),
    }
    key_frame = batch.select(keys)[pl.Series(first)] if keys else pl.DataFrame()
    return pl.concat([key_frame, pl.DataFrame(columns)], how="horizontal")


def points_frame(values: np.ndarray, ints: np.ndarray, flags: np.ndarray) -> pl.DataFrame:
    """The kernel's points of one subpopulation in the layout of ``locate_bins``."""
    from polars_cumdev import kernel as k

    return pl.DataFrame(
        {
            nm.SCORE: values[:, k.P_SCORE],
            nm.WEIGHT: values[:, k.P_WEIGHT],
            nm.RESPONSE: values[:, k.P_RESPONSE],
            nm.TIE: values[:, k.P_TIE],
            nm.ROWS: ints[:, 0],
            nm.BIN_WEIGHT: values[:, k.P_BIN_WEIGHT],
            nm.BIN_ROWS: ints[:, 1],
            nm.REFERENCE: values[:, k.P_REFERENCE],
            nm.BIN_VARIANCE: values[:, k.P_VARIANCE],
            nm.REFERENCE_ERROR: values[:, k.P_E_REFERENCE],
            nm.BERNOULLI_ERROR: values[:, k.P_E_BERNOULLI],
            nm.VARIANCE_ERROR: values[:, k.P_E_VARIANCE],
            nm.OVERFLOW: flags,
        }
    )
