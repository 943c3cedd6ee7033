"""When a located stretch is a finding: the one significance rule of every result.

A screen says *whether* a group deviates (its Kuiper p-value, adjusted over
the groups by Benjamini-Hochberg into a q-value); the located stretch
(:mod:`polars_cumdev.method.location`) says *where*. A stretch searched in a
group that does not deviate significantly is the largest excursion of noise,
and a sentence such as "0.53 less than rows with the same score" about it
would read as a result. So a stretch is stated only where the significance
supports it:

* a group of a result over several groups is *significant* when its
  ``kuiper_q`` (BH-adjusted over the groups) is at most ``level``;
* a single comparison (a calibration without ``by``, a drill-down curve, a
  :func:`~polars_cumdev.compare.compare` of two selections) when its
  ``kuiper_p`` is at most ``level`` (with one group q = p).

Every such result carries the decision as a boolean column ``significant``
(:data:`SIGNIFICANT`), set here and nowhere else; the faces (tables, engines,
the command line, the charts, the reports, the sentences) read that column,
never the p- or q-value against a level. The p-value column the rule reads is
the analysis's stated adjustment: ``kuiper_q`` / ``ecce_r_q`` (BH across named
groups and across classes), ``kuiper_p`` for one comparison, ``p_family`` for a
multicalibration family whatever its method, ``fw_p`` (Holm or Bonferroni
across windows) for drift, whose ``flagged`` is the same value. It is applied
after the final p-values are computed (:func:`findings`).

Other groups keep every statistic; their stretch columns (``from_score``,
``to_score``, ``share``, ``deviation`` and, with covariates,
``from_<covariate>`` / ``to_<covariate>``) are null and ``note`` says why,
e.g. "not significant: q = 0.72 > 0.05". Tables, engines, the command line,
the charts and the reports all apply :func:`findings` (or :func:`significant`
for a single curve); ``level=1.0`` states every stretch the search finds.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError

__all__ = [
    "LEVEL",
    "SIGNIFICANT",
    "STRETCH_COLUMNS",
    "check_level",
    "decided",
    "finding_steps",
    "findings",
    "is_significant",
    "not_significant",
    "significance_words",
    "significant",
]

#: The default significance level: q (or p) at most 0.05.
LEVEL = 0.05

#: The boolean column holding every row's decision (:func:`findings`).
SIGNIFICANT = "significant"


def check_level(level: object) -> float:
    """Validate ``level``: a number in (0, 1]."""
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise InvalidParameterError(f"`level` must be a number in (0, 1], got {level!r}")
    value = float(level)
    if not 0.0 < value <= 1.0:
        raise InvalidParameterError(f"`level` must be in (0, 1], got {level!r}")
    return value


#: The columns of a located stretch, which the rule nulls where a row is not significant
#: (named one by one: a pattern such as ``from_.*`` would also match a user's ``by``
#: column, e.g. ``to_zone``). With covariates, ``from_<covariate>`` / ``to_<covariate>``
#: are derived from ``from_score`` / ``to_score`` after the rule, and follow them.
STRETCH_COLUMNS = ("from_score", "to_score", "share", "deviation")


def significant(level: float, p: str = "kuiper_q") -> pl.Expr:
    """Whether a row is significant: ``p`` (a q- or p-value column) at most ``level``.

    Null (no p-value) counts as not significant.
    """
    return pl.col(p).le(level).fill_null(False)


def _plain(value: pl.Expr) -> pl.Expr:
    """Two significant digits of a p- or q-value, as text ("0.72", "0.0031", "1.2e-07")."""
    return value.round_sig_figs(2).cast(pl.String)


def not_significant(level: float, p: str = "kuiper_q", symbol: str = "q") -> pl.Expr:
    """The note of a group that is not significant: "not significant: q = 0.72 > 0.05"."""
    return pl.format(f"not significant: {symbol} = {{}} > {level:g}", _plain(pl.col(p)))


def findings(
    result: pl.LazyFrame, level: float, *, p: str = "kuiper_q", symbol: str = "q"
) -> pl.LazyFrame:
    """Apply the rule: null the stretch of every group that is not significant, say why.

    Parameters
    ----------
    result
        A screen-like result: a p- or q-value column ``p``, the location
        columns and ``note``.
    level
        The significance level (see :func:`check_level`).
    p, symbol
        The column the rule reads (``"kuiper_q"`` over several groups,
        ``"kuiper_p"`` for a single comparison) and its name in the note.

    Returns
    -------
    pl.LazyFrame
        ``result`` with the boolean column ``significant`` (``p`` at most
        ``level``; null ``p`` is not significant), the stretch columns null
        where it is false and ``note`` "not significant: q = 0.72 > 0.05" there (a
        group whose p-value is null keeps the note that explains it).
    """
    decision, stated = finding_steps(level, p, symbol)
    return result.with_columns(decision).with_columns(*stated)


def finding_steps(
    level: float, p: str = "kuiper_q", symbol: str = "q"
) -> tuple[pl.Expr, tuple[pl.Expr, pl.Expr]]:
    """:func:`findings`' two steps as expressions: the decision, then the stretch and note."""
    level = check_level(level)
    keep = pl.col(SIGNIFICANT)
    judged = pl.col(p).is_not_null()
    stretch = pl.col(STRETCH_COLUMNS)  # (named: no look-up of ``result``'s schema)
    stated = (
        pl.when(keep).then(stretch).name.keep(),
        pl.when(judged & ~keep)
        .then(not_significant(level, p, symbol))
        .otherwise(pl.col("note"))
        .alias("note"),
    )
    return significant(level, p).alias(SIGNIFICANT), stated


def decided(row: dict) -> bool:
    """A row's decision, as :func:`findings` set it (its ``significant`` column).

    The one way a face (chart, report, command line, sentence) asks whether a
    row of a table is a finding: it never compares a p- or q-value with a
    level itself. A row without the column (or with null) is not significant.
    """
    return bool(row.get(SIGNIFICANT) or False)


def is_significant(value: float | None, level: float) -> bool:
    """:func:`significant` for one number (a row's q or p)."""
    return value is not None and not np.isnan(value) and value <= level


def significance_words(value: float | None, level: float, symbol: str = "q") -> str:
    """ "significant: q = 0.0031 <= 0.05" or "not significant: q = 0.72 > 0.05" for one row."""
    if value is None or np.isnan(value):
        return f"not significant: {symbol} undefined"
    shown = pl.Series([value]).round_sig_figs(2).cast(pl.String)[0]
    if value <= level:
        return f"significant: {symbol} = {shown} <= {level:g}"
    return f"not significant: {symbol} = {shown} > {level:g}"
