"""Files larger than memory: screened range by range, or refused up front with the way on.

A process that outgrows its memory is killed by the kernel without a word.
Before computing, the command compares the input's size with the memory it may
use (:func:`budget`): the smallest of the memory the system reports available,
the process's ``RLIMIT_AS`` / ``RLIMIT_DATA`` and the cgroup's ``memory.max``,
or the ``POLARS_CUMDEV_MEMORY`` environment variable (bytes) when set. A file
counts as too large when its size on disk exceeds :data:`SHARE` of that
budget once multiplied by :data:`FACTOR` of its format: the in-memory screen of
1e6 rows (four numeric columns) peaked at about 650 MiB, from a 70 MB CSV or a
23 MB Parquet file (``benchmarks/out_of_core.py`` measures the Parquet side).

``cumdev screen`` then goes the out-of-core way: a text file is converted to
Parquet in a temporary directory by a streaming pass (Polars' ``sink_parquet``),
and the Parquet data are screened one score range at a time
(:func:`polars_cumdev.partitioned.screen_parquet`). The other commands need all
rows at once and refuse, saying the size and what to do instead.

What the budget controls, and what it cannot (issue 37, item 13). It decides two
things only: whether a command runs in memory or (``screen``) out of core, and how
many rows a score range holds (:func:`range_count`: half the budget at
:data:`ROW_BYTES` a row, never fewer than :data:`ROWS_FLOOR`). It is not a cap on
the process. Beyond the range being screened, the peak holds (a) the interpreter
and libraries: Python, Polars, NumPy, Numba and the compiled kernel, about
140 MiB; (b) Polars' streaming passes over the data (the checks and cell
summaries, the cut points, a text file's conversion to Parquet), whose buffers
grow with the threads and the Parquet row groups, not with the budget; (c) the
decoding of the row groups each range's scan reads. Measured on 2e6 rows (three
numeric columns, a 32 MB Parquet file; ``tests/engines/test_out_of_core_peak.py``
repeats it): the in-memory screen peaked at 455 MiB; out of core 321 to 339 MiB
with ranges of 50,000 to 100,000 rows, 402 MiB with ranges of 500,000 rows. Ranges
smaller than :data:`ROWS_FLOOR` did not lower the peak but raised it (10,000-row
ranges: 410 MiB) and tripled the time, each range being one more scan of the
files: a budget below about ``2 * ROW_BYTES * ROWS_FLOOR`` (60 MB) therefore
screens as that budget does.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from polars_cumdev.errors import CumdevError

__all__ = [
    "ADDRESS_SHARE",
    "FACTOR",
    "ROWS_FLOOR",
    "ROW_BYTES",
    "budget",
    "describe",
    "range_count",
    "refuse_if_too_large",
    "too_large",
]

#: Memory a computation takes per byte of the file on disk, by kind of file (measured
#: on the in-memory screen of 1e6 rows; rounded up).
FACTOR = {"text": 10.0, "binary": 30.0}
#: Bytes of memory a screened row takes in the range step (measured: about 520 MiB
#: above the interpreter for a range of 1e6 rows; rounded up).
ROW_BYTES = 600
#: Fewest rows in a score range: smaller ranges raise the peak (a scan of the files
#: each) and the time, measured above.
ROWS_FLOOR = 50_000
#: An address-space limit (``RLIMIT_AS``, ``RLIMIT_DATA``) counts as this fraction of memory.
ADDRESS_SHARE = 2
_TEXT = (".csv", ".tsv", ".txt", ".ndjson", ".jsonl")
_ENV = "POLARS_CUMDEV_MEMORY"


def _available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _cgroup() -> int | None:
    try:
        text = Path("/sys/fs/cgroup/memory.max").read_text(encoding="ascii").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def budget() -> int | None:
    """Bytes of memory this process may use (None when nothing says)."""
    given = os.environ.get(_ENV)
    if given:
        try:
            return int(float(given))
        except ValueError:
            raise CumdevError(f"{_ENV} must be a number of bytes, got {given!r}") from None
    limits = [_available(), _cgroup()]
    for kind in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        soft, _ = resource.getrlimit(kind)
        # These cap address space, not memory in use: Polars' and jemalloc's
        # reservations and the threads' stacks count too, and an allocation
        # past the cap aborts the process. Measured: under RLIMIT_DATA of 1200 MiB
        # the in-memory screen of a 74 MiB CSV (2.5M rows, ~10x its size in
        # use) aborted; half the cap is what the estimates may plan with.
        limits.append(None if soft == resource.RLIM_INFINITY else soft // ADDRESS_SHARE)
    known = [value for value in limits if value is not None and value > 0]
    return min(known) if known else None


def _size(path: str) -> int:
    target = Path(path)
    if target.is_dir():
        return sum(p.stat().st_size for p in target.iterdir() if p.is_file())
    return target.stat().st_size


def too_large(path: str) -> bool:
    """Whether ``path`` (a file or a directory of files) is too large to compute in memory."""
    limit = budget()
    kind = "text" if Path(path).suffix.lower() in _TEXT else "binary"
    return limit is not None and _size(path) * FACTOR[kind] > limit


def range_count(rows: int) -> int:
    """Score ranges for ``rows`` rows: one range's step takes half the budget.

    Never fewer than :data:`ROWS_FLOOR` rows a range (see the module docstring).
    """
    limit = budget() or 2**34
    per_range = max(ROWS_FLOOR, int(limit / 2 / ROW_BYTES))
    return max(1, -(-rows // per_range))


def describe(path: str) -> str:
    """``path``'s size and the memory budget, in words."""
    limit = budget()
    size = _size(path)
    return f"{path} is {_bytes(size)} and about {_bytes(limit or 0)} of memory is available"


def refuse_if_too_large(path: str, command: str) -> None:
    """Refuse a command that needs all rows in memory when ``path`` is too large."""
    if not too_large(path):
        return
    parquet = Path(path).with_suffix(".parquet").name
    raise CumdevError(
        f"cannot run `cumdev {command}` in memory: {describe(path)}. "
        f"`cumdev screen` screens such data range by range; for {command}, select "
        f"fewer rows or columns first, or run it on a machine with more memory "
        f"(converting to Parquet also helps: pl.scan_csv({path!r}).sink_parquet({parquet!r}))"
    )


def _bytes(count: int) -> str:
    value = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover
