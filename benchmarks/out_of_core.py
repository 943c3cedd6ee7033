"""Out-of-core screening: a Parquet data set larger than the memory a process may use.

Usage::

    python benchmarks/out_of_core.py                       # 200M rows, 4 GiB cap
    python benchmarks/out_of_core.py --rows 5e7 --cap-gib 2 --dir /tmp/cumdev_ooc

1. Writes the data set (once; reused when the directory already holds the
   same parameters): ``rows`` rows of the benchmark population of
   :func:`common.make_frame` (Int32 group with Zipf-like sizes, Float64
   score, every value distinct unless ``--scores 5-decimal`` or
   ``3-decimal``, Float64 weight, Int8 0/1 response), as one Parquet file
   per ``--file-rows`` rows, each in row groups of 1M rows, generated chunk
   by chunk. Free disk space is checked first; the row count is scaled down
   (and the script says so) when the files would not fit.
2. In a child process whose memory is capped, runs
   :func:`polars_cumdev.partitioned.screen_parquet` on the glob: a streaming
   pass for the checks and cell summaries, then one score range at a time.
3. In another child under the same cap, runs the one-pass screen on the same
   glob, ``pl.scan_parquet(glob).cumdev.screen(...).collect(engine="streaming")``.

For each child: success or the error, wall time and peak RSS (``ru_maxrss``).

Two kinds of cap (``--cap-kind``):

* ``memory`` (the default where the machine allows it): a cgroup (v1 memory
  controller, ``/sys/fs/cgroup/memory``; needs root) whose
  ``memory.limit_in_bytes`` is the cap. This caps memory in use, like a
  container's limit: past it the kernel reclaims page cache, then kills the
  child.
* ``address``: ``resource.setrlimit(RLIMIT_AS, cap)``, what ``ulimit -v``
  sets. It caps mapped *address space*, which can be far more than memory in
  use: Polars' thread pools, jemalloc's arenas and memory-mapped Parquet
  files all count. jemalloc is told to unmap freed memory
  (``_RJEM_MALLOC_CONF=retain:false``, see ``main``), but a run can still
  fail with a resident set far below the cap.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import common

BYTES_PER_ROW = 20  # Parquet, measured on this population (about 17-18); kept with a margin
ROW_GROUP = 1_000_000


def write_dataset(
    directory: Path, rows: int, groups: int, file_rows: int, seed: int, scores: str
) -> None:
    marker = directory / "params.json"
    params = {
        "rows": rows,
        "groups": groups,
        "file_rows": file_rows,
        "seed": seed,
        "scores": scores,
    }
    if marker.exists() and json.loads(marker.read_text()) == params:
        print(f"reusing {directory} ({rows:,} rows)")
        return
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    start = time.perf_counter()
    for part, first in enumerate(range(0, rows, file_rows)):
        size = min(file_rows, rows - first)
        df = common.make_frame(
            size, groups, seed=seed, stream=part + 1, decimals=common.score_kind(scores)
        )
        df.write_parquet(directory / f"part-{part:04d}.parquet", row_group_size=ROW_GROUP)
        del df
    marker.write_text(json.dumps(params))
    used = sum(f.stat().st_size for f in directory.glob("*.parquet"))
    print(
        f"wrote {rows:,} rows in {time.perf_counter() - start:.0f} s: "
        f"{used / common.GIB:.2f} GiB on disk ({used / rows:.1f} bytes/row)"
    )


CGROUP_ROOT = Path("/sys/fs/cgroup/memory")


def cgroup_available() -> bool:
    """Whether this process may create v1 memory cgroups (root, controller mounted)."""
    return os.geteuid() == 0 and (CGROUP_ROOT / "memory.limit_in_bytes").exists()


class MemoryCgroup:
    """A temporary v1 memory cgroup capping the memory of the processes put in it."""

    def __init__(self, name: str, cap: int) -> None:
        self.path = CGROUP_ROOT / name
        self.path.mkdir(exist_ok=True)
        (self.path / "memory.limit_in_bytes").write_text(str(cap))
        swap = self.path / "memory.memsw.limit_in_bytes"
        if swap.exists():  # no swapping out past the cap either
            swap.write_text(str(cap))

    def enter(self) -> None:
        """Move the calling process into the cgroup (run in the child before exec)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        self.path.rmdir()


def child(kind: str, glob: str, cap: int, ranges: int | None) -> None:
    if cap:  # an address-space cap; a cgroup cap is set up by the parent
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import polars as pl

    import polars_cumdev  # noqa: F401  (registers the namespace)
    from polars_cumdev.partitioned import screen_parquet

    columns = {"by": "group", "score": "score", "response": "response", "weight": "weight"}
    start = time.perf_counter()
    try:
        if kind == "partitioned":
            out = screen_parquet(
                glob,
                **columns,
                ranges=ranges,
                progress=True,  # the steps on stderr
            )
        else:
            out = pl.scan_parquet(glob).cumdev.screen(**columns).collect(engine="streaming")
        status = f"ok, {out.height} groups"
        top = out.select("group", "n", "kuiper_z").head(3).rows()
    except BaseException as exc:  # MemoryError, Polars errors: report them
        status = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        top = []
    common.emit(
        {
            "kind": kind,
            "status": status,
            "seconds": time.perf_counter() - start,
            "peak_rss": common.peak_rss(),
            "top": top,
        }
    )


def run_capped(
    kind: str, glob: str, cap: int, cap_kind: str, ranges: int | None, timeout: float
) -> dict:
    """Run one child; its own peak RSS comes from os.wait4, even when it is killed."""
    import subprocess

    group = MemoryCgroup(f"cumdev_ooc_{os.getpid()}_{kind}", cap) if cap_kind == "memory" else None
    address_cap = cap if group is None else 0
    command = [sys.executable, __file__, "--child", kind, glob, str(address_cap), str(ranges or 0)]
    start = time.perf_counter()
    with open(os.devnull, "rb") as stdin:
        proc = subprocess.Popen(
            command,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=group.enter if group else None,
        )
    timer = None
    if timeout:
        import threading

        timer = threading.Timer(timeout, proc.kill)
        timer.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if timer is not None:
        timer.cancel()
    seconds = time.perf_counter() - start
    killed_by_cap = False
    if group is not None:
        killed_by_cap = int((group.path / "memory.failcnt").read_text()) > 0 and status != 0
        group.remove()
    sys.stderr.write(err[-4000:])
    lines = out.strip().splitlines()
    if proc.returncode == 0 and lines:
        result = json.loads(lines[-1])
        result["peak_rss"] = usage.ru_maxrss * 1024
        return result
    # Killed or crashed without reporting (e.g. an abort on a failed allocation).
    tail = (err.strip().splitlines() or ["(no stderr)"])[-1]
    head = next((line for line in err.splitlines() if "memory allocation" in line), tail)
    if killed_by_cap and proc.returncode == -9:
        head = "killed by the kernel at the memory cap"
    return {
        "kind": kind,
        "status": f"failed: exit {proc.returncode}: {head[:160]}",
        "seconds": seconds,
        "peak_rss": usage.ru_maxrss * 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e8)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--file-rows", type=float, default=1e7)
    parser.add_argument("--dir", default="/tmp/cumdev_ooc")
    parser.add_argument("--cap-gib", type=float, default=4.0)
    parser.add_argument(
        "--cap-kind",
        choices=["memory", "address"],
        default=None,
        help="memory: a cgroup limit (default when possible); address: RLIMIT_AS (ulimit -v)",
    )
    parser.add_argument(
        "--scores",
        default="continuous",
        help="continuous (every score distinct, the default), 5-decimal or 3-decimal",
    )
    parser.add_argument("--ranges", type=int, default=None, help="default: about 4M rows each")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--skip", nargs="*", default=[], choices=["partitioned", "one-pass"])
    parser.add_argument("--child", nargs=4, metavar=("KIND", "GLOB", "CAP", "RANGES"))
    args = parser.parse_args()
    # RLIMIT_AS caps mapped address space. Polars allocates with jemalloc,
    # which by default keeps freed address space mapped ("retain"), so range
    # after range the mappings grow while the resident set stays near 1 GiB,
    # and the cap is hit half-way (measured: range 6 of 50, range 80 of 100).
    # Unmapping freed extents makes the cap measure memory actually used. The
    # children inherit the setting; a value given by the caller wins.
    os.environ.setdefault("_RJEM_MALLOC_CONF", "retain:false")
    if args.child:
        kind, glob, cap, ranges = args.child
        child(kind, glob, int(cap), int(ranges) or None)
        return

    directory = Path(args.dir)
    directory.parent.mkdir(parents=True, exist_ok=True)
    rows = int(args.rows)
    free = shutil.disk_usage(directory.parent).free
    existing = (
        sum(f.stat().st_size for f in directory.glob("*.parquet")) if directory.exists() else 0
    )
    room = free + existing - 10 * common.GIB  # leave 10 GiB to everyone else
    if rows * BYTES_PER_ROW > room:
        scaled = max(int(room // BYTES_PER_ROW // 10_000_000) * 10_000_000, 10_000_000)
        print(f"not enough disk for {rows:,} rows ({free / common.GIB:.0f} GiB free): {scaled:,}")
        rows = scaled
    print(common.machine())
    print(f"disk free at {directory.parent}: {free / common.GIB:.0f} GiB")
    write_dataset(directory, rows, args.groups, int(args.file_rows), seed=2024, scores=args.scores)
    glob = str(directory / "*.parquet")
    cap = int(args.cap_gib * common.GIB)
    cap_kind = args.cap_kind or ("memory" if cgroup_available() else "address")
    if cap_kind == "memory" and not cgroup_available():
        parser.error("--cap-kind memory needs root and the cgroup v1 memory controller")
    cap_label = f"{'cgroup memory' if cap_kind == 'memory' else 'RLIMIT_AS'} {args.cap_gib:g} GiB"
    print(f"load average before: {os.getloadavg()}")
    results = []
    for kind in ("partitioned", "one-pass"):
        if kind in args.skip:
            continue
        r = run_capped(kind, glob, cap, cap_kind, args.ranges, args.timeout)
        print(r, flush=True)
        results.append(r)
    print(f"load average after: {os.getloadavg()}")
    table = [
        {
            "rows": f"{rows:,}",
            "method": (
                "screen_parquet (range by range)"
                if r["kind"] == "partitioned"
                else 'scan_parquet().cumdev.screen().collect(engine="streaming")'
            ),
            "cap": cap_label,
            "result": r["status"],
            "seconds": f"{r['seconds']:.0f}",
            "peak RSS MiB": f"{r['peak_rss'] / common.MIB:.0f}" if "peak_rss" in r else "",
        }
        for r in results
    ]
    print(
        common.markdown_table(table, ["rows", "method", "cap", "result", "seconds", "peak RSS MiB"])
    )


if __name__ == "__main__":
    main()
