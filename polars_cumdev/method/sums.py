"""Compensated running sums: the arithmetic under tie merging and midpoint bins.

Both stages need sums over runs of consecutive rows (the rows of one tie, the
full-population rows of one bin) for very many runs at once. They take them
as differences of running sums over the whole sorted frame. A plain float64
running sum loses, in such a difference, about one unit in the last place of
the *running total* per row of the run, which deep into ten million rows is
far more than the run's own precision. So each running sum here comes with
the running sum of its rounding errors, each recovered exactly (Knuth's
TwoSum); the pair holds the running total to about twice the working
precision, and a difference of two pairs is accurate relative to the run.

Everything is a cumulative sum in row order, so the results are the same bit
for bit on every run and under every engine (a hash aggregation adds partial
sums in an order that varies between runs of the streaming engine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

__all__ = ["boundary", "ordered_sum", "run_total", "with_running_sums"]


def with_running_sums(frame: pl.LazyFrame, terms: Mapping[str, pl.Expr]) -> pl.LazyFrame:
    """Add, for every ``name: term``, its running sum ``name`` and error sum ``name_err``.

    Parameters
    ----------
    frame
        Rows in the order to accumulate.
    terms
        Float64 expressions evaluated on ``frame`` (e.g. ``W``, ``W * R``).

    Returns
    -------
    pl.LazyFrame
        ``frame`` plus, per term, ``name`` (Polars' running sum) and
        ``name_err`` (running sum of the exact rounding errors of those
        additions): ``name + name_err`` is the running total to about 2^-106
        relative.
    """
    # In stages, so that no term or running sum is evaluated twice.
    staged = frame.with_columns(term.alias(f"{name}_term") for name, term in terms.items())
    staged = staged.with_columns(pl.col(f"{name}_term").cum_sum().alias(name) for name in terms)
    errors = []
    for name in terms:
        term, total = pl.col(f"{name}_term"), pl.col(name)
        before = total.shift(1, fill_value=0.0)
        added = before + term
        back = added - before
        two_sum_error = (before - (added - back)) + (term - back)
        # ``added - total`` is 0 when Polars adds in order, as it does; it keeps
        # the pair exact should the running sum ever be associated otherwise.
        errors.append(((added - total) + two_sum_error).cum_sum().alias(f"{name}_err"))
    return staged.with_columns(errors).drop(f"{name}_term" for name in terms)


def run_total(name: str) -> pl.Expr:
    """The sum over a run, from the compensated running sums at consecutive run ends.

    Evaluated on the frame filtered to the last row of every run (the first
    run starting at the first row): the run's sum is the difference from the
    previous row of that frame, running sums and error sums alike.
    """
    hi, lo = pl.col(name), pl.col(f"{name}_err")
    return (hi - hi.shift(1, fill_value=0.0)) + (lo - lo.shift(1, fill_value=0.0))


def boundary(columns: Sequence[str], step: int) -> pl.Expr:
    """True where any of ``columns`` differs from the row ``step`` away, and at the edge.

    ``step=1`` marks the first row of every run of equal values, ``step=-1``
    the last; with no columns, only the first (or last) row of the frame.
    Nulls compare equal to nulls.
    """
    changed = pl.int_range(pl.len()) == (0 if step > 0 else pl.len() - 1)
    for column in columns:
        changed = changed | pl.col(column).ne_missing(pl.col(column).shift(step))
    return changed


def ordered_sum(expr: pl.Expr) -> pl.Expr:
    """The sum of ``expr`` added one value at a time, in row order.

    A plain ``sum`` adds partial sums in an order that depends on how an
    engine cut the rows into chunks (the streaming engine's result can differ
    in the last bit from the in-memory engine's); the last value of a running
    sum does not. Nulls count as 0, as in ``sum``.
    """
    return expr.fill_null(0).cum_sum().last()
