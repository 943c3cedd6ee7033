"""Shared helpers of the benchmark scripts: a seeded data generator, timers, memory, machine.

The scripts in this directory are run on demand (``python benchmarks/<name>.py``)
and print figures; they are not tests and assert nothing about speed.

The generator makes a frame shaped like a screening problem: ``rows`` rows in
``groups`` groups whose sizes follow a Zipf-like law (share of group k
proportional to 1 / k^1.1), a score that is either continuous (every value
distinct, ``decimals=None``, what model probabilities or log incomes with noise
look like) or rounded to a few decimals (many exact ties), a positive weight
and a 0/1 response whose rate depends on the score and, for a few groups, on
the group. Columns are generated chunk by chunk straight into their final
arrays, so building the frame costs little more memory than the frame itself
(peak-RSS figures then reflect the work being measured, not the generator).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

GIB = 1024**3
MIB = 1024**2
CHUNK = 1_000_000


def group_shares(groups: int, seed: int = 0) -> np.ndarray:
    """Zipf-like group shares (1 / k^1.1, normalized), in a seeded random order."""
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    return np.random.default_rng(seed).permutation(share / share.sum())


def make_frame(
    rows: int,
    groups: int,
    *,
    seed: int = 0,
    weighted: bool = True,
    decimals: int | None = 5,
    group_dtype: str = "int",
    stream: int = 0,
    uniform_groups: bool = False,
) -> pl.DataFrame:
    """Seeded benchmark frame with columns ``group``, ``score``, ``weight``, ``response``.

    Parameters
    ----------
    rows, groups
        Size of the frame and number of groups (Zipf-like sizes).
    seed
        Seed of the generator; the same arguments give the same frame.
    weighted
        Whether to include the ``weight`` column (log-normal, Float64).
    decimals
        The score (a logistic transform of a normal variate, in (0, 1)) is
        rounded to this many decimals, so that exact ties are common;
        ``None`` keeps it continuous (at 1e7 rows every score is distinct,
        or all but a handful: see :func:`score_kind`).
    group_dtype
        ``"int"`` (Int32 labels) or ``"str"`` (String labels ``g0000``...).
    uniform_groups
        Groups of equal expected size instead of the Zipf-like sizes.
    stream
        Chunk number: frames with the same ``seed`` and different ``stream``
        are independent draws from the same population (same group shares
        and effects), so they can be written as parts of one large data set.

    Returns
    -------
    pl.DataFrame
        ``group`` (Int32 or String), ``score`` (Float64), ``weight``
        (Float64, when weighted) and ``response`` (Int8, 0 or 1).
    """
    population = np.random.default_rng(seed)
    shares = np.full(groups, 1.0 / groups) if uniform_groups else group_shares(groups, seed)
    cdf = np.cumsum(shares)
    cdf[-1] = 1.0
    shift = population.normal(0.0, 0.4, size=groups)
    bump = np.where(population.random(groups) < 0.05, 0.15, 0.0)  # a few deviating groups
    rng = population if stream == 0 else np.random.default_rng([seed, stream])
    group = np.empty(rows, dtype=np.int32)
    score = np.empty(rows, dtype=np.float64)
    response = np.empty(rows, dtype=np.int8)
    weight = np.empty(rows, dtype=np.float64) if weighted else None
    for start in range(0, rows, CHUNK):
        stop = min(rows, start + CHUNK)
        size = stop - start
        g = np.searchsorted(cdf, rng.random(size), side="right").astype(np.int32)
        s = 1.0 / (1.0 + np.exp(-(rng.normal(0.0, 1.0, size) + shift[g])))
        if decimals is not None:
            s = np.round(s, decimals)
        p = np.clip(0.1 + 0.7 * s + bump[g] * (s > 0.5), 0.0, 1.0)
        group[start:stop] = g
        score[start:stop] = s
        response[start:stop] = rng.random(size) < p
        if weight is not None:
            weight[start:stop] = rng.lognormal(0.0, 0.6, size)
    columns: dict[str, pl.Series] = {}
    if group_dtype == "str":
        labels = pl.Series("label", [f"g{k:04d}" for k in range(groups)], dtype=pl.String)
        columns["group"] = labels.gather(pl.Series(group)).rename("group")
    elif group_dtype == "int":
        columns["group"] = pl.Series("group", group)
    else:
        raise ValueError(f"group_dtype must be 'int' or 'str', got {group_dtype!r}")
    columns["score"] = pl.Series("score", score)
    if weight is not None:
        columns["weight"] = pl.Series("weight", weight)
    columns["response"] = pl.Series("response", response)
    return pl.DataFrame(columns)


#: The score distributions of the benchmarks: name -> ``decimals`` of :func:`make_frame`.
SCORE_KINDS = {"continuous": None, "5-decimal": 5, "3-decimal": 3}


def score_kind(name: str) -> int | None:
    """``decimals`` for a score kind of :data:`SCORE_KINDS` (``continuous``, ``5-decimal``...)."""
    if name not in SCORE_KINDS:
        raise ValueError(f"score kind must be one of {sorted(SCORE_KINDS)}, got {name!r}")
    return SCORE_KINDS[name]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Smallest wall time of ``repeat`` calls, in seconds."""
    return min(timed(fn)[0] for _ in range(repeat))


def peak_rss() -> int:
    """Peak resident set size of this process so far, in bytes (ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _proc_kib(path: str, field: str) -> int:
    """A ``field: <n> kB`` line of a /proc file, in bytes (0 when absent)."""
    with open(path) as lines:
        for line in lines:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def current_rss() -> int:
    """Current resident set size of this process, in bytes."""
    return _proc_kib("/proc/self/status", "VmRSS:")


def run_child(script: str | Path, args: Sequence[object], timeout: float = 900) -> dict:
    """Run ``python script args`` in a fresh process; parse the JSON on its last stdout line.

    A child that fails returns ``{"error": <last line of stderr>}``.
    """
    command = [sys.executable, str(script), *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return {"error": f"exit {done.returncode}: {tail}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def emit(result: dict) -> None:
    """Print a child's result as one JSON line (the last line of its stdout)."""
    print(json.dumps(result), flush=True)


def memory_total() -> int:
    """Physical memory of the machine, in bytes."""
    return _proc_kib("/proc/meminfo", "MemTotal:")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> str:
    """One line describing the machine and the versions."""
    return (
        f"{os.cpu_count()} CPUs ({cpu_model()}), {memory_total() / GIB:.1f} GiB RAM, "
        f"Python {platform.python_version()}, Polars {pl.__version__}, NumPy {np.__version__}, "
        f"{platform.system()} {platform.release()}"
    )


def markdown_table(rows: Sequence[dict], columns: Sequence[str]) -> str:
    """Rows (dicts) as a Markdown table with the given columns."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)


def run_grid(
    script: str | Path,
    rows: Sequence[float],
    groups: Sequence[int],
    engines: Sequence[str],
    repeat: Callable[[int], int],
    fmt_row: Callable[[dict], dict],
    columns: Sequence[str],
    extra: Sequence[object] = (),
    variants: Sequence[Sequence[object]] = ((),),
) -> None:
    """Run ``script --child ROWS GROUPS ENGINE REPEAT *extra *variant`` for every configuration.

    Prints the machine and the load average around the run, each result on
    stderr as it arrives, and the table of all results (rows formatted by
    ``fmt_row``, in ``columns``) on stdout.
    """
    print(machine())
    print(f"load average before: {os.getloadavg()}")
    results = []
    for count in (int(r) for r in rows):
        for group_count in groups:
            for engine in engines:
                for variant in variants:
                    args = ["--child", count, group_count, engine, repeat(count), *extra, *variant]
                    result = {"rows": count, "groups": group_count, "engine": engine}
                    result.update(run_child(script, args))
                    results.append(result)
                    print(fmt_row(result), file=sys.stderr, flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(markdown_table([fmt_row(r) for r in results], columns))
