"""The screen's events walk compiled by gcc beside Numba's: is the rest of the time the compiler?

Usage::

    python benchmarks/c_walk.py [--rows 1e7] [--repeat 5]

``c_walk/sweep.c`` transcribes the one-thread sweep of
:mod:`polars_cumdev.kernel.events` (``_walk_share``: ``_fill``, ``_enqueue``
and ``_flush`` with the bin moments of :mod:`polars_cumdev.kernel.prefix` and
``merged_tie``/``_accumulate`` of :mod:`polars_cumdev.kernel.walks`)
operation for operation, with the same queue, snapshot layout and batches.
The script compiles it with gcc (``-O3 -march=native -ffp-contract=off``,
and ``-O2``; no fast-math and no contraction into FMA, as Numba's ``JIT``
options have none) into a temporary directory, builds the closing lists
with the package's :func:`~polars_cumdev.kernel.boundaries.file_closings`
(one thread), and for continuous and 5-decimal scores (1,000 Zipf-sized
groups) checks that C gives the same bits as
:func:`polars_cumdev.kernel.events.sweep`, then times Numba's one-thread
walk and each C build, alternating, best of ``repeat`` (fresh output
arrays each call, allocated outside the timer). It needs gcc; the package
never does.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
from functools import partial
from pathlib import Path

import common
import numpy as np

from polars_cumdev.kernel import boundaries, events
from polars_cumdev.kernel.curves import divide_by_weight
from polars_cumdev.kernel.prefix import JIT, TABLE_COLUMNS
from polars_cumdev.kernel.walks import C_MAX, C_MIN, GROUP_COLUMNS

SOURCE = Path(__file__).with_name("c_walk") / "sweep.c"
FLAGS = {"gcc -O3": ["-O3"], "gcc -O2": ["-O2"]}
GROUPS, CENTRE = 1000, 0.5
P, I64, D, INT = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_int


def build(directory: str) -> dict[str, ctypes._CFuncPtr]:
    """The C sweep compiled once per entry of :data:`FLAGS`, as ctypes functions."""
    functions = {}
    for name, level in FLAGS.items():
        library = Path(directory) / f"sweep{level[0]}.so"
        extra = ["-march=native", "-ffp-contract=off", "-fPIC", "-shared"]
        subprocess.run(["gcc", *level, *extra, "-o", library, SOURCE, "-lm"], check=True)
        function = ctypes.CDLL(str(library)).walk_share
        function.restype = INT
        function.argtypes = [P, I64, P, P, P, INT, D, I64, D, P, I64, P, I64, P, P, P, P]
        function.argtypes += [INT, P, INT, I64]
        functions[name] = function
    return functions


def fresh(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """New ``out``, ``lows`` and ``curves`` arrays for one walk."""
    out = np.zeros((GROUPS, GROUP_COLUMNS))
    out[:, C_MAX], out[:, C_MIN] = -np.inf, np.inf
    return out, np.zeros((GROUPS, TABLE_COLUMNS)), np.empty((starts[-1], 2))


def numba_walk(data: tuple, out: np.ndarray, lows: np.ndarray, curves: np.ndarray) -> None:
    """The package's one-thread walk (``events._walk_share``) on ``data``."""
    ids, s, r, w, lists, link, starts, owner = data
    columns = (ids, 0, s, r, w, True, 1.0, GROUPS, CENTRE)
    closing = (out, lows, CENTRE, starts, curves, True)
    events._walk_share(columns, lists, link, closing, owner, 0, events.QUEUE)


def c_walk(function, data: tuple, out: np.ndarray, lows: np.ndarray, curves: np.ndarray) -> None:
    """The C transcription's walk on ``data``."""
    ids, s, r, w, lists, link, starts, owner = data

    def at(a: np.ndarray) -> ctypes.c_void_p:
        return a.ctypes.data_as(P)

    code = function(
        at(ids), 0, at(s), at(r), at(w), 1, 1.0, GROUPS, CENTRE,
        at(lists), 1, at(link), s.shape[0],
        at(out), at(lows), at(starts), at(curves), 1, at(owner), 0, events.QUEUE,
    )  # fmt: skip
    assert code == 0


def measure(scores: str, rows: int, repeat: int, compiled: dict) -> list[dict]:
    """The table's rows of one score kind."""
    frame = common.make_frame(rows, GROUPS, decimals=common.score_kind(scores))
    ordered = frame.sort("score")
    ids, s, r, w = (ordered[c].to_numpy() for c in ("group", "score", "response", "weight"))
    heads, link, points, _, owner = boundaries.file_closings(ids, 0, s, GROUPS, 1)
    starts = np.zeros(GROUPS + 1, dtype=np.int64)
    np.cumsum(points, out=starts[1:])
    data = (ids, s, r, w, np.ascontiguousarray(heads[0:1]), link, starts, owner)
    wanted = events.sweep(
        ids, 0, s, r, w, True, 1.0, GROUPS, CENTRE, heads, link, starts, owner, True
    )
    walks = {"Numba": partial(numba_walk, data)}
    same = {}
    for name, function in compiled.items():
        walks[name] = partial(c_walk, function, data)
        out, lows, curves = fresh(starts)
        walks[name](out, lows, curves)
        divide_by_weight(out, starts, curves)
        same[name] = all(map(np.array_equal, (out, curves), wanted))
    best = dict.fromkeys(walks, np.inf)
    for _ in range(repeat):
        for name, walk in walks.items():
            best[name] = min(best[name], common.timed(partial(walk, *fresh(starts)))[0])
    return [
        {
            "scores": scores,
            "walk (one thread)": name,
            "seconds": f"{seconds:.3f}",
            "/ Numba": f"{seconds / best['Numba']:.2f}",
            "same bits as Numba": same.get(name, ""),
        }
        for name, seconds in best.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(common.machine(), f"| Numba JIT options {JIT}")
    print(f"load average before: {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        compiled = build(directory)
        for scores in ("continuous", "5-decimal"):
            rows += measure(scores, int(args.rows), args.repeat, compiled)
    print(f"load average after: {os.getloadavg()}")
    print(common.markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
