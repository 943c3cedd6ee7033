"""The compiled engine: :mod:`polars_cumdev.kernel` as a node of a lazy Polars plan.

The plan keeps what Polars does best: projecting and filtering (pushed into
scans) the user's own columns (no copy is cast or rescaled first). The rows
then reach the kernel through :meth:`polars.LazyFrame.map_batches`, whole,
under either engine; the node checks them (the checks of
:mod:`polars_cumdev.method.prepare`, so bad input raises the same error as
the plan), finds their canonical order (by score, then weight, then
response: :mod:`polars_cumdev.method.score_order` and
:mod:`polars_cumdev.kernel.tieorder`), moves the score, response and weight
columns into it (the other columns are read in that order only where
needed, :class:`Rows`), rescales the weights exactly inside the kernel and
returns the small per-group (or per-point) frame the rest of the plan
normalizes.

Which engine runs is the ``engine`` argument of the public functions:

* ``"polars"``: the lazy Polars plan (the kernel's oracle in the tests);
* ``"kernel"``: the compiled kernel (Numba is a dependency of the package);
* ``"auto"`` (default): the kernel for at least :data:`KERNEL_ROWS` rows,
  Polars below: Numba's import (about half a second) and its first call in
  a fresh environment (seconds of compilation, then cached on disk) would
  cost a small screen more than they save. For a DataFrame the choice is
  made when the query is built; for a LazyFrame, whose size is unknown
  until it runs, inside the node, which below the threshold runs the Polars
  stages on the rows it received.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev.errors import CumdevError, InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import counted
from polars_cumdev.method.kernel_loader import available, kernel
from polars_cumdev.method.node_columns import GID as _GID
from polars_cumdev.method.node_columns import group_ids, numbers
from polars_cumdev.method.prefix_sums import response_centre
from polars_cumdev.method.prepare import Prepared
from polars_cumdev.method.score_order import score_order
from polars_cumdev.method.signed_zeros import unsigned_score
from polars_cumdev.method.weights import rescale, scale_factor

__all__ = [
    "ENGINES",
    "KERNEL_ROWS",
    "Choice",
    "Engine",
    "Rows",
    "available",
    "check_engine",
    "checked",
    "choose",
    "eager",
    "facts",
    "group_ids",
    "kernel",
    "node",
    "response_facts",
    "standardized",
]

Engine = Literal["auto", "polars", "kernel"]
Choice = Literal["polars", "kernel", "at run time"]
ENGINES = ("auto", "polars", "kernel")
#: Fewest rows for which ``engine="auto"`` runs the compiled kernel.
KERNEL_ROWS = 1_000_000


def check_engine(engine: object) -> Engine:
    """Validate the ``engine`` argument."""
    if engine not in ENGINES:
        raise InvalidParameterError(f"`engine` must be one of {ENGINES}, got {engine!r}")
    return engine  # type: ignore[return-value]


def choose(engine: object, frame: object) -> Choice:
    """Resolve ``engine`` for an input frame: eager frames by height, lazy ones at run time."""
    engine = check_engine(engine)
    if engine != "auto":
        return engine
    if not available():
        return "polars"
    if isinstance(frame, pl.DataFrame):
        return "kernel" if frame.height >= KERNEL_ROWS else "polars"
    return "at run time"


@dataclass(frozen=True)
class Rows:
    """The rows as the kernel reads them: in canonical order of score (see :func:`node`).

        ``s``, ``r`` and ``w`` are the score, response and weight columns in that
        order; the user's other columns stay where they arrived, in ``source``,
        and are read in order only where needed (:meth:`frame`, :meth:`at`; the
    group numbers are moved with the three columns, :attr:`groups`):
        moving every column of the batch would cost the time and memory of a
        second copy of it.
    """

    source: pl.DataFrame  # the user's columns as the node received them, checked
    order: np.ndarray  # the source row at each position of the canonical order
    s: np.ndarray
    r: np.ndarray
    w: np.ndarray
    weighted: bool
    scale: float  # the power of two the weights are multiplied by
    centre: float  # c of :func:`~polars_cumdev.method.prefix_sums.response_centre`, as the plan
    # The group numbers of the rows in order, their offset and count (:func:`group_ids`
    # of the node's keys), for a node built with ``grouped``; else None.
    numbered: tuple[np.ndarray, int, int] | None = None

    @property
    def groups(self) -> tuple[np.ndarray, int, int]:
        """The rows' group numbers in their order, offset and count (a ``grouped`` node)."""
        if self.numbered is None:
            raise CumdevError("internal error: the rows were read without their group numbers")
        return self.numbered

    @property
    def height(self) -> int:
        """The number of rows."""
        return int(self.s.shape[0])

    @property
    def small(self) -> bool:
        """Below :data:`KERNEL_ROWS`: where ``"auto"`` prefers the Polars stages."""
        return self.height < KERNEL_ROWS

    def frame(self, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """The source's ``columns`` (all of them by default) in the rows' order."""
        chosen = self.source if columns is None else self.source.select(columns)
        return _gathered(chosen, self.order)

    def at(self, positions: np.ndarray, columns: Sequence[str]) -> pl.DataFrame:
        """The source's ``columns`` at ``positions`` of the rows' order."""
        return self.source.select(columns)[pl.Series(np.take(self.order, positions))]


def _gathered(frame: pl.DataFrame, order: np.ndarray) -> pl.DataFrame:
    """The rows of ``frame`` at ``order``, made contiguous first.

    The streaming engine hands the node its batch in many chunks (100 at
    1e7 rows, Polars 2.1), and a gather across chunks costs about 2.6 times
    as much as one over contiguous columns, whose copy costs little beside
    it (``benchmarks/kernel_stages.py``, which collects as users do).
    """
    return frame.rechunk().gather(pl.Series(order))


def _canonical_order(batch: pl.DataFrame, prepared: Prepared) -> np.ndarray:
    """The source rows in increasing score, each run of equal scores by weight, then response.

    The order :func:`polars_cumdev.method.ties.sort_by_score` gives in one
    sort by three keys. Below :data:`KERNEL_ROWS` rows (no Numba import where
    the Polars stages may run) Polars' order by the score, then, only when
    some score repeats, by the three keys of the rows in that order (with
    every score distinct the two orders are one; the sort by one key costs
    half as much, and the sort by three less on rows sorted by the first
    one: census-sized, 9 + 0 ms continuous, 5 + 31 ms 3-decimal, for 20 and
    42 ms by the three keys at once); from there on the order by score
    alone (:func:`polars_cumdev.method.score_order.score_order`), and
    :func:`_in_ties_order` then orders the runs. Every float sum then adds
    the same values in the same order whatever the input's row order.
    """
    score, response, weight = prepared.names
    if batch.height < KERNEL_ROWS:
        column = batch.get_column(score)
        order = column.arg_sort().to_numpy()
        ordered = numbers(column)[order]
        if not bool(np.any(ordered[1:] == ordered[:-1])):
            return order
        keys = [score, *([weight] if weight else []), response]
        presorted = batch.select(keys).gather(pl.Series(order))
        return order[presorted.select(pl.arg_sort_by(keys)).to_series().to_numpy()]
    return score_order(batch.get_column(score))


def _in_ties_order(order: np.ndarray, columns: list[np.ndarray], weighted: bool) -> np.ndarray:
    """``order``, and ``columns`` in place, with every run of equal scores in canonical order.

    ``columns`` is ``[s, r, w]``, optionally followed by the group numbers.

    A compiled pass over the runs (:func:`polars_cumdev.kernel.tieorder.tie_order`)
    finds the permutation; only when some run is out of order are the
    arrays moved, together (:func:`polars_cumdev.kernel.gather.gather_rows`).
    """
    if columns[0].shape[0] < KERNEL_ROWS:
        return order  # ordered by the three keys already
    k = kernel()
    permutation = k.tieorder.tie_order(*columns[:3], weighted)
    if not permutation.shape[0]:
        return order
    moved = list(range(1, len(columns)))  # (equal scores are equal bits: no -0.0 reaches here)
    order, *placed = k.gather.gather_rows(permutation, [order, *[columns[j] for j in moved]])
    for j, column in zip(moved, placed, strict=True):
        columns[j] = column
    return order


def _sorted_rows(
    batch: pl.DataFrame, prepared: Prepared, numbered: tuple[np.ndarray, int, int] | None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The rows' order by score, and ``[s, r, w]`` (then the group numbers, if any) in it.

    ``w`` is empty without weights. From :data:`KERNEL_ROWS` rows a Float64
    score is sorted with the other columns riding along
    (:func:`polars_cumdev.kernel.bucketsort.bucket_sort`: in canonical
    order at once, the scores decoded from the sorted keys). Otherwise the order
    comes first (:func:`_canonical_order`), and the columns are then moved
    into it: by one compiled pass on two threads
    (:func:`polars_cumdev.kernel.gather.gather_rows`) from
    :data:`KERNEL_ROWS` rows, after which the runs of equal scores are put
    in canonical order (:func:`_in_ties_order`); below, where Numba is not
    loaded, by Polars' ``gather`` (the order then has its ties in order).
    """
    score, response, weight = prepared.names
    ids = [] if numbered is None else [numbered[0]]
    if batch.height >= KERNEL_ROWS:
        column = batch.get_column(score)
        w = [numbers(batch.get_column(weight))] if weight else [np.empty(0)]
        r = [numbers(batch.get_column(response))]
        s = numbers(column)
        if column.dtype == pl.Float64:
            gid = ids[0] if ids else np.empty(0, dtype=np.int32)
            sort = kernel().bucketsort.bucket_sort
            scores, order, (r_, w_, gid) = sort(s, *r, *w, gid, weight is not None)
            return order, [scores, r_, w_, *([gid] if ids else [])]
        order = _canonical_order(batch, prepared)
        # Views of Polars' buffers are copied first: NumPy asks the kernel for huge pages
        # for its large arrays, and the gather's reads at random rows then miss the address
        # cache far less than in Polars' buffers (a third of the gather's time at 1e7 rows
        # from Parquet). A batch in many chunks was joined by NumPy already (its own data).
        columns = [x if x.base is None else np.array(x, copy=True) for x in (s, *r, *w, *ids)]
        columns = kernel().gather.gather_rows(order, columns)
        order = _in_ties_order(order, columns, weight is not None)  # (moves the columns)
        return order, columns
    order = _canonical_order(batch, prepared)
    numeric = batch.select(score, response, *([weight] if weight else []))
    if ids:
        numeric = numeric.with_columns(pl.Series(_GID, ids[0]))
    numeric = _gathered(numeric, order)
    w = numbers(numeric.get_column(weight)) if weight else np.empty(0)
    columns = [numbers(numeric.get_column(score)), numbers(numeric.get_column(response)), w]
    if ids:
        columns.append(numeric.get_column(_GID).to_numpy())
    return order, columns


def checked(batch: pl.DataFrame, prepared: Prepared, *extra: pl.Expr) -> tuple:
    """Run the plan's checks on rows in memory (one query); raise the first that fails.

    ``extra`` aggregates are computed in the same query, their values returned
    (:func:`~polars_cumdev.method.checks.counted`, waited for at once).
    """
    return counted(batch, prepared.checks, extra)()


def _read(batch: pl.DataFrame, prepared: Prepared, grouped: bool = False) -> Rows:
    """Check the rows (the plan's checks, batch-wide), then put them in order for the kernel.

    With ``grouped``, the rows' group numbers (:func:`group_ids` of the
    node's keys) are moved into the order with the score, response and weight.
    """
    score, response, weight = prepared.names
    largest = pl.lit(1.0) if weight is None else pl.col(weight).cast(pl.Float64).max()
    (scale,) = checked(batch, prepared, scale_factor(largest))  # (2^-e in the checks' query)
    batch = unsigned_score(batch, score)  # (the plan's standardized score does the same)
    numbered = group_ids(batch, prepared.keys) if grouped else None
    order, columns = _sorted_rows(batch, prepared, numbered)
    s, r, w = columns[:3]
    # The centre from the responses in order, as method/prefix_sums.py computes it.
    centre_ = response_centre(pl.col(response).cast(pl.Float64)).fill_null(0.0)
    (centre,) = pl.DataFrame({response: r}).select(centre_).row(0)
    return Rows(
        source=batch,
        order=order,
        s=s,
        r=r,
        w=w,
        weighted=weight is not None,
        scale=float(scale),
        centre=float(centre),
        numbered=None if numbered is None else (columns[3], *numbered[1:]),
    )


def node(
    prepared: Prepared,
    function: Callable[[Rows], pl.DataFrame],
    schema: Mapping[str, pl.DataType],
    extra: Mapping[str, pl.Expr] | None = None,
    grouped: bool = False,
) -> pl.LazyFrame:
    """The user's rows sorted by score, checked, read and handed to ``function``.

    The node carries the keys, the score, response and weight columns, the
    named ``extra`` expressions (e.g. a subpopulation mask) and whatever the
    checks read; ``function`` returns a frame of ``schema``. With
    ``grouped``, the rows carry their group numbers (:attr:`Rows.groups`).
    """

    def run(batch: pl.DataFrame) -> pl.DataFrame:
        # Ordered here, on the whole batch in memory: the streaming engine's sort of the
        # plan costs about 2.3 times as much (benchmarks/multicalibration.py, Polars 2.1),
        # and a radix sort of the score half of Polars' (:mod:`score_order`). Ties
        # then go in a canonical order (by weight, then response: _read), so that the
        # kernel's sums add the same values in the same order whatever the input's order.
        return function(_read(batch, prepared, grouped))

    return _node_input(prepared, extra).map_batches(run, schema=pl.Schema(schema), streamable=False)


def _node_input(prepared: Prepared, extra: Mapping[str, pl.Expr] | None = None) -> pl.LazyFrame:
    """The columns :func:`node` hands its function: keys, score, response, weight, checks'."""
    extra = dict(extra or {})
    score, response, weight = prepared.names
    needed = [*prepared.keys, score, response, *([weight] if weight else [])]
    for check in prepared.checks:
        needed += [n for n in check.count.meta.root_names() if n not in extra]
    columns = [pl.col(n) for n in dict.fromkeys(needed)]
    columns += [expr.alias(name) for name, expr in extra.items()]
    return prepared.source.select(columns)


def eager(
    prepared: Prepared, function: Callable[[Rows], pl.DataFrame], grouped: bool = False
) -> pl.DataFrame:
    """What :func:`node` computes, run now: for a frame already in memory.

    The same rows reach the same ``function`` (checked and ordered by
    :func:`_read`), without a plan around the kernel: a small call then
    pays no plan's fixed cost (``benchmarks/small_calibration.py``).
    """
    return function(_read(_node_input(prepared).collect(engine="in-memory"), prepared, grouped))


def standardized(rows: Rows, prepared: Prepared) -> pl.LazyFrame:
    """The node's rows as the Polars stages take them: standardized, rescaled, sorted.

    For ``"auto"`` below :data:`KERNEL_ROWS` rows (the order by score is kept).
    """
    frame = rows.frame().lazy().select(prepared.columns)
    return rescale(frame)[0]


def response_facts(rows: Rows) -> tuple[bool, float]:
    """Whether every response of the node's rows is 0 or 1, and the largest |R|."""
    if rows.small:  # NumPy: no Numba import where the Polars stages may run
        r = rows.r.astype(np.float64)
        largest = float(np.max(np.abs(r))) if r.size else 0.0
        return bool(np.all((r == 0.0) | (r == 1.0))), largest
    binary, largest = kernel().response_facts(rows.r)
    return bool(binary), float(largest)


def facts(rows: Rows, variance: str, found: tuple[bool, float] | None = None) -> dict[str, object]:
    """The ``BINARY`` and ``RMAX`` columns :func:`polars_cumdev.method.statistics.normalize` needs.

    As :func:`polars_cumdev.method.statistics.is_binary` computes them, from the
    node's rows instead of another scan of the input (or from ``found``, what
    :func:`response_facts` returned for them).
    """
    from polars_cumdev.method.statistics import RMAX

    binary, largest = response_facts(rows) if found is None else found
    if variance != "auto":
        binary = variance == "bernoulli"
    return {nm.BINARY: bool(binary), RMAX: float(largest)}
