"""What the finite-sample p-values cost (issue 36, item 1): each analysis with and without.

In one process, alternately, best of 3 (wall time): the multicalibration audit of
``benchmarks/multicalibration.py`` (MCGrad's configuration: 1,000 segments,
Holm), ``screen(by=)`` on the kernel and on the Polars plan, and
``calibration(by=)`` on the kernel, each with the finite-sample p-values (the
default) and with them switched off (the private ``_finite_sample=False``: the
asymptotic p-values alone, the code path of before). Two kinds of data: the
benchmark frames (scores spread over (0, 1), large groups: the criterion
rarely fails) and the issue's adversarial law (rare outcome, scores ~ Beta(1,
12), log-normal weights with sigma 1, 1,000 Zipf-sized groups: many small
groups fail it). Prints the rows simulated beside the times.

    python benchmarks/finite_sample.py            # 1e6 rows
    python benchmarks/finite_sample.py 200000     # another size
    python benchmarks/finite_sample.py 1e7 --only "screen(by=) kernel, benchmark"

``--only TEXT`` runs the comparisons whose name contains ``TEXT`` (at 1e7 rows the
whole grid takes a quarter of an hour).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import polars as pl
from common import best_of, make_frame
from multicalibration import frame as audit_frame

import polars_cumdev as pc
from polars_cumdev.calibration import calibration
from polars_cumdev.multicalibration import multicalibration
from polars_cumdev.subpopulation import screen


def rare(n: int, groups: int = 1000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    share = 1.0 / np.arange(1, groups + 1) ** 1.1
    s = rng.beta(1.0, 12.0, n)
    return pl.DataFrame(
        {
            "group": rng.choice(groups, n, p=share / share.sum()).astype(np.int32),
            "score": s,
            "response": (rng.random(n) < s).astype(np.float64),
            "weight": rng.lognormal(0.0, 1.0, n),
        }
    )


#: Only the comparisons whose name holds this text (``--only``).
ONLY = ""


def compare(name: str, run) -> None:
    """Times with and without, alternately (best of 3 each), and the rows simulated."""
    if ONLY not in name:
        return
    run(True), run(False)  # warm: compile or load the kernel
    on, off = [], []
    for _ in range(3):
        on.append(best_of(lambda: run(True), 1))
        off.append(best_of(lambda: run(False), 1))
    table = run(True)
    simulated = int((table["p_method"] == "simulated").sum())
    print(
        f"{name:<44} rows {table.height:>5}  simulated {simulated:>4}  "
        f"without {min(off):7.3f} s  with {min(on):7.3f} s  "
        f"added {min(on) - min(off):+7.3f} s ({min(on) / min(off):4.2f}x)",
        flush=True,
    )


def main(n: int) -> None:
    print(f"load average {os.getloadavg()}; {n:,} rows")
    if ONLY in "multicalibration (benchmark frame, Holm)":  # ("" is in every name)
        family = pc.segments(
            [f"c{k}" for k in range(4)],
            [f"x{k}" for k in range(3)],
            depth=3,
            rules="mcgrad",
            max_segments=1000,
        )
        data = audit_frame(n)
        compare(
            "multicalibration (benchmark frame, Holm)",
            lambda on: multicalibration(data, "s", "y", "w", segments=family, _finite_sample=on),
        )
    for label, make in (
        ("benchmark frame", lambda: make_frame(n, 1000, decimals=None)),
        ("rare outcome", lambda: rare(n)),
    ):
        names = [f"screen(by=) {e}, {label}" for e in ("kernel", "polars")]
        if not any(ONLY in name for name in [*names, f"calibration(by=) kernel, {label}"]):
            continue  # (no comparison of this frame asked for: not built)
        frame = make()
        for engine in ("kernel", "polars"):
            compare(
                f"screen(by=) {engine}, {label}",
                lambda on, frame=frame, engine=engine: screen(
                    frame, "group", "score", "response", "weight", engine=engine,
                    _finite_sample=on,
                ),
            )  # fmt: skip
        compare(
            f"calibration(by=) kernel, {label}",
            lambda on, frame=frame: calibration(
                frame, "score", "response", "weight", by="group", engine="kernel",
                _finite_sample=on,
            ),
        )  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--only" in args:
        at = args.index("--only")
        ONLY = args[at + 1]
        del args[at : at + 2]
    main(int(float(args[0])) if args else 1_000_000)
