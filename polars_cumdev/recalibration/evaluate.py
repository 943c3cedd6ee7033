"""A fix judged on rows it was not fitted on: the audit and the proper scores, before and after."""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.multicalibration import summary
from polars_cumdev.recalibration.model import Recalibration
from polars_cumdev.recalibration.monotone import EPSILON
from polars_cumdev.recalibration.population import audit

__all__ = ["RECALIBRATED", "before_after_audits", "evaluate"]

#: The recalibrated score's column name in the frames built here.
RECALIBRATED = "recalibrated"


def _settings(fix: Recalibration, level: float | None) -> tuple[str, str | None, Any, float]:
    if fix.target != "probability":
        raise InvalidParameterError(
            f"the before/after audit judges recalibrated probabilities; this fix recalibrates "
            f"target={fix.target!r} (judge it with calibration(target={fix.target!r}, by=...) "
            "on held-out rows)"
        )
    response, weight, family = fix.audit()
    if response is None:
        raise InvalidParameterError("the fix does not record its response column")
    chosen = dict(fix.fitting).get("level", 0.05) if level is None else level
    return response, weight, family, float(chosen)


def before_after_audits(
    fix: Recalibration, holdout: FrameLike, *, level: float | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The multicalibration tables of ``holdout``: the raw score, then the recalibrated one.

    The family, response, weight and level are those the fix was fitted with
    (``level`` overrides the level).
    """
    response, weight, family, chosen = _settings(fix, level)
    scored = fix.apply(as_lazy(holdout), RECALIBRATED).collect()
    tables = [
        audit(scored, s, response, weight, family, level=chosen) for s in (fix.score, RECALIBRATED)
    ]
    return tables[0], tables[1]


def evaluate(fix: Recalibration, holdout: FrameLike, *, level: float | None = None) -> pl.DataFrame:
    """Two rows, ``before`` and ``after``: the held-out audit's summary and proper scores.

    Columns: ``scores`` (before / after), ``rows``, ``brier`` and ``log_loss``
    (weighted means; probabilities clipped to [1e-12, 1 - 1e-12] in the log),
    then ``significant``, ``max_z``, ``p_family``, ``critical_z``, ``mce``
    of :func:`polars_cumdev.multicalibration.summary`.
    """
    response, weight, _, chosen = _settings(fix, level)
    before, after = before_after_audits(fix, holdout, level=level)
    scored = fix.apply(as_lazy(holdout), RECALIBRATED)
    # without weights, a weight of one per row (a literal 1.0 would sum to 1, not to the rows)
    w = pl.col(weight).cast(pl.Float64) if weight else pl.repeat(1.0, pl.len())
    y = pl.col(response).cast(pl.Float64)

    def losses(score: str) -> list[pl.Expr]:
        p = pl.col(score).cast(pl.Float64)
        q = p.clip(EPSILON, 1 - EPSILON)
        brier = ((p - y) ** 2 * w).sum() / w.sum()
        log_loss = -((y * q.log() + (1 - y) * (1 - q).log()) * w).sum() / w.sum()
        return [brier.alias("brier"), log_loss.alias("log_loss")]

    rows = []
    for name, score, table in (("before", fix.score, before), ("after", RECALIBRATED, after)):
        facts = summary(table, level=chosen).row(0, named=True)
        scores = scored.select(pl.len().alias("rows"), *losses(score)).collect().row(0, named=True)
        rows.append(
            {
                "scores": name,
                **scores,
                **{k: facts[k] for k in ("significant", "max_z", "p_family", "critical_z", "mce")},
            }
        )
    return pl.DataFrame(rows)
