"""``recalibrate``: fit the fix that the multicalibration audit proves necessary, and no more.

The procedure (docs/method.md, "Recalibration"):

1. The rows are split into ``folds`` folds by a hash of their values (the
   split does not depend on the row order). Every step is *cross-fitted*:
   fitted once per fold on the other folds' rows and applied to that fold's
   rows, so each row's cross-fitted score comes from a fit that never saw it.
2. The raw scores are audited on all rows
   (:func:`~polars_cumdev.multicalibration.multicalibration`). Only if the
   full population (the segment of depth 0) is miscalibrated family-wise
   (``p_family <= level``) is the global monotone map fitted
   (:func:`~polars_cumdev.recalibration.monotone.fit_monotone`), and kept only
   if it lowers the cross-fitted log-loss.
3. Rounds: the cross-fitted scores are audited; the segments significant
   family-wise and ``new`` findings, not tried before, are the candidates
   (:func:`~polars_cumdev.recalibration.choice.disjoint` picks among them);
   all shifts are refitted jointly per fold
   (:func:`~polars_cumdev.recalibration.shifts.fit_shifts`, shrunk), and a
   candidate is kept only if its cross-fitted shifts lower the cross-fitted
   log-loss. The rounds stop when the audit of the cross-fitted scores finds
   nothing significant left to try, or the budget is spent.
4. The chosen steps are refitted on all rows: the global map (if chosen),
   then the shifts jointly, with the map's log-odds as the offset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.prepare import FrameLike, as_lazy, prepare
from polars_cumdev.multicalibration import Segments
from polars_cumdev.recalibration.choice import disjoint, ends, open_ends
from polars_cumdev.recalibration.crossfit import Folds, audit_level
from polars_cumdev.recalibration.links import LINKS
from polars_cumdev.recalibration.model import Correction, Recalibration
from polars_cumdev.recalibration.population import POPULATION, featureless

__all__ = ["recalibrate"]

_S, _R, _W, _P = "_rc_score", "_rc_response", "_rc_weight", "_rc_current"


def _check(name: str, value: object, low: float, high: float, integer: bool = False) -> None:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if integer and not isinstance(value, int):
        bad = True
    if bad or not low <= value <= high:  # type: ignore[operator]
        kind = "an integer" if integer else "a number"
        raise InvalidParameterError(f"`{name}` must be {kind} in [{low}, {high}], got {value!r}")


def recalibrate(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    segments: Segments | None = None,
    level: float = 0.05,
    method: str = "holm",
    folds: int = 2,
    shrinkage: float = 1.0,
    max_corrections: int = 30,
    max_rounds: int = 10,
    max_knots: int = 32,
    seed: int = 0,
    target: str = "probability",
) -> Recalibration:
    """Fit a recalibration that corrects only what the multicalibration audit proves.

    Parameters
    ----------
    frame
        DataFrame or LazyFrame of scores, responses and segment features.
    score, response, weight
        Scores in [0, 1], responses in [0, 1], optional positive weights
        (``target="mean"``: predictions and responses any real numbers).
    segments
        The family audited (:func:`polars_cumdev.segments`). None (default):
        no segment features; the full population alone is audited (at the
        same ``level`` and with the same ``method``), so the fix is at most
        the global monotone map (or, where the map does not lower the
        cross-fitted loss, one shift of every score), and the identity when
        the full population is not miscalibrated family-wise.
    level
        Family-wise level of every decision (``p_family <= level``).
    method
        The audit's family-wise adjustment (``"holm"``, ``"bootstrap"``,
        ``"stepdown"``; see :func:`~polars_cumdev.multicalibration.multicalibration`).
    folds
        Number of cross-fitting folds (at least 2).
    shrinkage
        Ridge penalty of the shifts, in rows of mean weight (the prior's
        precision): larger pulls small segments' shifts harder toward zero.
    max_corrections, max_rounds
        The budget: most segment corrections, most audit rounds.
    max_knots
        Most knots of the global monotone map.
    seed
        Seeds the fold split's hash (and the audit's bootstrap).
    target
        ``"probability"`` (steps on the log-odds, judged by log-loss, outputs
        in (0, 1)) or ``"mean"``: predictions of a real response's mean,
        audited as ``calibration(target="mean")`` audits them (Holm only),
        the map and the shifts in the prediction's own units, judged by
        squared error, outputs unclipped
        (:mod:`~polars_cumdev.recalibration.means`).

    Returns
    -------
    Recalibration
        The fix: :meth:`~Recalibration.expr`, :attr:`~Recalibration.table`,
        :meth:`~Recalibration.to_json`.
    """
    _check("level", level, 1e-12, 1 - 1e-12)
    _check("folds", folds, 2, 100, integer=True)
    _check("shrinkage", shrinkage, 1e-9, 1e12)
    _check("max_corrections", max_corrections, 0, 10_000, integer=True)
    _check("max_rounds", max_rounds, 0, 10_000, integer=True)
    _check("max_knots", max_knots, 1, 100_000, integer=True)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidParameterError(f"`seed` must be an integer, got {seed!r}")
    if target not in LINKS:
        raise InvalidParameterError(f"`target` must be one of {tuple(LINKS)}, got {target!r}")
    link = LINKS[target]
    if target == "mean" and method != "holm":
        raise InvalidParameterError(
            f"target='mean' audits with Holm's adjustment only (method='holm'), got {method!r}"
        )
    if segments is None:
        segments = POPULATION
    if not isinstance(segments, Segments):
        raise InvalidParameterError(
            "`segments` must be made by polars_cumdev.segments(categorical=..., numerical=...)"
        )
    features = list(segments.features)
    lazy = as_lazy(frame)
    if not featureless(segments):
        segments.check(lazy.collect_schema(), ())
    prepared = prepare(
        lazy,
        score=score,
        response=response,
        weight=weight,
        by=features or None,
        score_range=link.ranges,
        response_range=link.ranges,
    )
    from polars_cumdev.method import _names as nm

    rows = (
        prepared.guarded(prepared.gated())
        .select(
            *features,
            pl.col(nm.SCORE).alias(_S),
            pl.col(nm.RESPONSE).alias(_R),
            pl.col(nm.WEIGHT).alias(_W),
        )
        .collect()
        .sort(_S)
    )
    # one order whatever the input's: sums (and so every bit of the fit) follow it. Sorted by
    # score alone it is unique when no two scores tie; else every column breaks the ties (a sort
    # by seven keys costs ten times one by a single key: 6.7 s against 0.65 s at 1e6 rows)
    ordered = rows.get_column(_S).to_numpy()
    if rows.height > 1 and bool(np.any(ordered[1:] == ordered[:-1])):
        rows = rows.sort([_S, _R, _W, *features], nulls_last=True)
    fold = rows.select(pl.struct(*features, _S, _R, _W).hash(seed) % folds).to_series()
    data = Folds(rows, (_S, _R, _W), fold.to_numpy().astype(np.int64), folds, link)
    if any(not part.any() or part.all() for part in data.inside):
        raise InvalidParameterError(f"too few rows ({rows.height}) to split into {folds} folds")

    audits = 1  # the level is spent across the audits: audit i tests at level / 2**i
    raw = link.audit(rows, _S, (_R, _W), segments, audit_level(level, audits), method, seed)
    full = raw.filter(pl.col("depth") == 0).row(0, named=True)
    info: dict[str, Any] = {
        "response": response,
        "weight": weight,
        "segments": {
            "categorical": list(segments.categorical),
            "numerical": list(segments.numerical),
            "depth": segments.depth,
            "levels": segments.levels,
            "min_rows": segments.min_rows,
            "max_segments": segments.max_segments,
            "rules": segments.rules,
            "chunk": segments.chunk,
            "feature_levels": dict(segments.feature_levels),
        },
        "rows": rows.height,
        "folds": folds,
        "level": level,
        "method": method,
        "shrinkage": shrinkage,
        "global_z": full["ecce_r_z"],
        "global_p_family": full["p_family"],
        "global_level": audit_level(level, 1),
        f"{link.loss_name}_raw": data.loss(data.u),
    }
    use_map = full["p_family"] is not None and full["p_family"] <= audit_level(level, 1)
    if use_map:
        data.fit_map(max_knots)
        use_map = data.loss(data.offset) < data.loss(data.u)
        if not use_map:
            data.drop_map()
    bounds = ends(rows, segments.numerical)
    chosen: list[Correction] = []
    tried: set[str] = set()  # segments' conditions as the audit writes them
    shifts: list[np.ndarray] = [np.zeros(0)] * folds
    stopped, rounds, audit, rejected = "max_rounds spent", 0, raw, 0
    eta = data.offset
    spent = [audit_level(level, 1)]  # the level of each audit made
    stale = use_map  # the scores changed since the last audit
    for rounds in range(1, max_rounds + 1):
        if stale:
            # a new audit of new scores spends a new (smaller) share of the level;
            # while the scores stay the same, the last audit's decisions stand
            audits += 1
            spent.append(audit_level(level, audits))
            scored = rows.with_columns(pl.Series(_P, link.score(eta)))
            audit = link.audit(scored, _P, (_R, _W), segments, spent[-1], method, seed)
            stale = False
        tested = spent[-1]
        significant = audit.filter(
            (pl.col("p_family") <= tested) & ~pl.col("condition").is_in(sorted(tried))
        )
        if use_map:
            significant = significant.filter(pl.col("depth") > 0)
        if significant.height == 0:
            still = audit.filter(pl.col("p_family") <= tested).height
            stopped = (
                f"{still} segment(s) still significant, all tried"
                if still
                else ("no segment significant")
            )
            break
        if len(chosen) >= max_corrections:
            stopped = "max_corrections spent"
            break
        new = significant.filter(pl.col("finding") == "new")
        picked = disjoint(new if new.height else significant.head(1), features)
        candidates = []
        for row in picked[: max_corrections - len(chosen)]:
            tried.add(row["condition"])
            condition, levels = open_ends(row, features, bounds)
            candidates.append(
                Correction(
                    condition, levels, 0.0, int(row["n"]), float(row["ecce_r_z"]),
                    float(row["p_family"]), rounds, tested,
                )
            )  # fmt: skip
        trial = [*chosen, *candidates]
        members = data.members([c.condition for c in trial])
        trial_shifts = data.shifts(members, shrinkage)
        with_all = data.loss(data.cross(members, trial_shifts))
        keep = []
        for j in range(len(chosen), len(trial)):
            without = [d.copy() for d in trial_shifts]
            for d in without:
                d[j] = 0.0
            keep.append(data.loss(data.cross(members, without)) > with_all)
        rejected += keep.count(False)
        if not any(keep):
            continue
        chosen = [*chosen, *(c for c, k in zip(candidates, keep, strict=True) if k)]
        members = data.members([c.condition for c in chosen])
        shifts = data.shifts(members, shrinkage)
        eta = data.cross(members, shifts)
        stale = True
    info.update(
        audits=audits,
        audit_levels=spent,
        rounds=rounds,
        stopped=stopped,
        rejected=rejected,
        crossfit_max_z=audit.get_column("ecce_r_z").max(),
        crossfit_min_p_family=audit.get_column("p_family").min(),
        **{f"{link.loss_name}_crossfit": data.loss(eta)},
    )
    # the chosen steps, refitted on all rows
    monotone = link.fit_map(data.s, data.y, data.w, max_knots) if use_map else None
    if chosen:
        members = data.members([c.condition for c in chosen])
        final = link.shifts(link.mapped(monotone, data.s), data.y, data.w, members, shrinkage)
        chosen = [_with_shift(c, d) for c, d in zip(chosen, final, strict=True)]
    return Recalibration(
        score, tuple(features), monotone, tuple(chosen), tuple(info.items()), target=link.name
    )


def _with_shift(c: Correction, shift: float) -> Correction:
    return Correction(
        c.condition, c.levels, float(shift), c.rows, c.z, c.p_family, c.round, c.level
    )
