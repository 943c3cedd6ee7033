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

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.prepare import FrameLike, as_lazy, prepare
from polars_cumdev.multicalibration import Segments, multicalibration
from polars_cumdev.multicalibration import segments as make_segments
from polars_cumdev.recalibration.choice import disjoint, ends, open_ends
from polars_cumdev.recalibration.model import Correction, Recalibration
from polars_cumdev.recalibration.monotone import LOGIT_BOUND, MonotoneMap, fit_monotone, logit
from polars_cumdev.recalibration.shifts import fit_shifts

__all__ = ["recalibrate"]

_S, _R, _W, _P = "_rc_score", "_rc_response", "_rc_weight", "_rc_current"


def _check(name: str, value: object, low: float, high: float, integer: bool = False) -> None:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if integer and not isinstance(value, int):
        bad = True
    if bad or not low <= value <= high:  # type: ignore[operator]
        kind = "an integer" if integer else "a number"
        raise InvalidParameterError(f"`{name}` must be {kind} in [{low}, {high}], got {value!r}")


def _audit(
    rows: pl.DataFrame, score: str, family: Segments, level: float, method: str, seed: int
) -> pl.DataFrame:
    table = multicalibration(  # no located stretch: the rounds do not use it
        rows, score, _R, _W, segments=family, level=level, method=method, seed=seed, locate=False
    )
    assert isinstance(table, pl.DataFrame)
    return table


def _members(rows: pl.DataFrame, conditions: Sequence[str]) -> np.ndarray:
    if not conditions:
        return np.zeros((rows.height, 0), dtype=bool)
    names = [f"_rc_c{i}" for i in range(len(conditions))]
    inside = rows.with_columns(  # with_columns: a constant condition ("TRUE") fills every row
        [pl.sql_expr(c).fill_null(False).alias(n) for n, c in zip(names, conditions, strict=True)]
    ).select(names)
    return inside.to_numpy().astype(bool).reshape(rows.height, len(conditions))


def _map(monotone: MonotoneMap | None, s: np.ndarray) -> np.ndarray:
    """The map's log-odds of scores ``s`` (the expression's arithmetic, by Polars)."""
    if monotone is None:
        return logit(s)
    return pl.select(monotone.expr(pl.lit(pl.Series(s)))).to_series().to_numpy()


def _log_loss(eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    eta = np.clip(eta, -LOGIT_BOUND, LOGIT_BOUND)
    return float(np.sum(w * (np.logaddexp(0.0, eta) - y * eta)) / np.sum(w))


class _Folds:
    """The rows' arrays, their folds, and cross-fitted log-odds."""

    def __init__(self, rows: pl.DataFrame, fold: np.ndarray, folds: int) -> None:
        self.rows = rows
        self.s, self.y, self.w = (rows.get_column(c).to_numpy() for c in (_S, _R, _W))
        self.u = logit(self.s)
        self.inside = [fold == k for k in range(folds)]
        self.offset = self.u.copy()  # cross-fitted log-odds of the global step
        self.offsets: list[np.ndarray] = [self.u] * folds  # fold k's map on every row
        self.columns: dict[str, np.ndarray] = {}

    def fit_map(self, max_knots: int) -> None:
        cross = np.empty_like(self.u)
        self.offsets = []
        for part in self.inside:
            rest = ~part
            fitted = fit_monotone(self.s[rest], self.y[rest], self.w[rest], max_knots=max_knots)
            mapped = _map(fitted, self.s)
            cross[part] = mapped[part]
            self.offsets.append(mapped)
        self.offset = cross

    def members(self, conditions: Sequence[str]) -> np.ndarray:
        missing = [c for c in conditions if c not in self.columns]
        if missing:
            for c, column in zip(missing, _members(self.rows, missing).T, strict=True):
                self.columns[c] = column
        if not conditions:
            return np.zeros((self.rows.height, 0), dtype=bool)
        return np.stack([self.columns[c] for c in conditions], axis=1)

    def shifts(self, members: np.ndarray, shrinkage: float) -> list[np.ndarray]:
        """Per fold, the shifts fitted on the other folds."""
        out = []
        for k, part in enumerate(self.inside):
            rest = ~part
            out.append(
                fit_shifts(
                    self.offsets[k][rest],
                    self.y[rest],
                    self.w[rest],
                    members[rest],
                    shrinkage=shrinkage,
                )
            )
        return out

    def cross(self, members: np.ndarray, shifts: list[np.ndarray]) -> np.ndarray:
        eta = self.offset.copy()
        for part, d in zip(self.inside, shifts, strict=True):
            eta[part] += members[part] @ d
        return eta

    def loss(self, eta: np.ndarray) -> float:
        return _log_loss(eta, self.y, self.w)


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
) -> Recalibration:
    """Fit a recalibration that corrects only what the multicalibration audit proves.

    Parameters
    ----------
    frame
        DataFrame or LazyFrame of scores, responses and segment features.
    score, response, weight
        Scores in [0, 1], responses in [0, 1], optional positive weights.
    segments
        The family audited (:func:`polars_cumdev.segments`); None audits the
        full population only (then only the global step can be taken).
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
    if segments is None:
        segments = make_segments(depth=0)
    if not isinstance(segments, Segments):
        raise InvalidParameterError(
            "`segments` must be made by polars_cumdev.segments(categorical=..., numerical=...)"
        )
    features = list(segments.features)
    lazy = as_lazy(frame)
    segments.check(lazy.collect_schema(), ())
    prepared = prepare(
        lazy,
        score=score,
        response=response,
        weight=weight,
        by=features or None,
        score_range=(0.0, 1.0),
        response_range=(0.0, 1.0),
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
    data = _Folds(rows, fold.to_numpy().astype(np.int64), folds)
    if any(not part.any() or part.all() for part in data.inside):
        raise InvalidParameterError(f"too few rows ({rows.height}) to split into {folds} folds")

    audits = 1  # the level is spent across the audits: audit i tests at level / 2**i
    raw = _audit(rows, _S, segments, audit_level(level, audits), method, seed)
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
        "log_loss_raw": data.loss(data.u),
    }
    use_map = full["p_family"] is not None and full["p_family"] <= audit_level(level, 1)
    if use_map:
        data.fit_map(max_knots)
        use_map = data.loss(data.offset) < data.loss(data.u)
        if not use_map:
            data.offset, data.offsets = data.u.copy(), [data.u] * folds
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
            scored = rows.with_columns(pl.Series(_P, 1.0 / (1.0 + np.exp(-eta))))
            audit = _audit(scored, _P, segments, spent[-1], method, seed)
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
        log_loss_crossfit=data.loss(eta),
    )
    # the chosen steps, refitted on all rows
    monotone = fit_monotone(data.s, data.y, data.w, max_knots=max_knots) if use_map else None
    if chosen:
        members = data.members([c.condition for c in chosen])
        final = fit_shifts(_map(monotone, data.s), data.y, data.w, members, shrinkage=shrinkage)
        chosen = [_with_shift(c, d) for c, d in zip(chosen, final, strict=True)]
    return Recalibration(score, tuple(features), monotone, tuple(chosen), tuple(info.items()))


def _with_shift(c: Correction, shift: float) -> Correction:
    return Correction(
        c.condition, c.levels, float(shift), c.rows, c.z, c.p_family, c.round, c.level
    )


def audit_level(level: float, audit: int) -> float:
    """The level at which the ``audit``-th audit of a fit (counting from 1) is tested.

    ``level / 2**audit``: the first audit (of the raw scores) at half the
    level, each new audit at half the previous one's. Their sum is below
    ``level`` however many rounds run, so by the union bound the chance that
    any audit of the fit declares a calibrated segment significant (and so
    the chance of any false correction) is at most ``level``
    (docs/method.md, "Recalibration").
    """
    return level * 0.5**audit
