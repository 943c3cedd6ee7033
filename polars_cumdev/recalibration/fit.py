"""``recalibrate``: fit the fix that the multicalibration audit proves necessary, and no more.

The procedure (docs/method.md, "Recalibration"):

1. The rows are split in two folds by a hash of their values (so the split
   does not depend on the row order): the *fitting* fold and the *testing*
   fold (``held_out`` of the rows).
2. The raw scores are audited on the testing fold
   (:func:`~polars_cumdev.multicalibration.multicalibration`). Only if the full
   population (the segment of depth 0) is miscalibrated family-wise
   (``p_family <= level``) is the global monotone map fitted
   (:func:`~polars_cumdev.recalibration.monotone.fit_monotone`, on the fitting fold).
3. Rounds: the current scores are audited on the testing fold; every segment
   significant family-wise and a ``new`` finding (its z above its parents'
   and children's; the strongest significant segment if none is) that is not
   corrected yet is added; all shifts are refitted jointly on the fitting
   fold (:func:`~polars_cumdev.recalibration.shifts.fit_shifts`, shrunk). The
   rounds stop when the testing fold's audit finds nothing significant (or
   only segments already corrected), or when ``max_corrections`` or
   ``max_rounds`` is spent. The stopping test therefore always judges
   corrections fitted on other rows.
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
from polars_cumdev.recalibration.model import Correction, Recalibration
from polars_cumdev.recalibration.monotone import fit_monotone
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
    table = multicalibration(
        rows, score, _R, _W, segments=family, level=level, method=method, seed=seed
    )
    assert isinstance(table, pl.DataFrame)
    return table


def _members(rows: pl.DataFrame, conditions: Sequence[str]) -> np.ndarray:
    if not conditions:
        return np.zeros((rows.height, 0), dtype=bool)
    inside = rows.select(
        [pl.sql_expr(c).fill_null(False).alias(f"c{i}") for i, c in enumerate(conditions)]
    )
    return inside.to_numpy().astype(bool).reshape(rows.height, len(conditions))


def recalibrate(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    segments: Segments | None = None,
    level: float = 0.05,
    method: str = "holm",
    held_out: float = 0.5,
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
    held_out
        Share of the rows in the testing fold (the stopping test's rows).
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
    _check("held_out", held_out, 0.05, 0.95)
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
    )
    threshold = round(held_out * 1000)
    hashed = pl.struct(*features, _S, _R, _W).hash(seed) % 1000
    rows = rows.with_columns((hashed < threshold).alias("_rc_test"))
    testing = rows.filter(pl.col("_rc_test")).drop("_rc_test")
    fitting = rows.filter(~pl.col("_rc_test")).drop("_rc_test")
    if testing.height == 0 or fitting.height == 0:
        raise InvalidParameterError(
            f"too few rows ({rows.height}) to split into a fitting and a testing fold"
        )
    rows = rows.drop("_rc_test")

    def arrays(part: pl.DataFrame) -> tuple[np.ndarray, ...]:
        return tuple(part.get_column(c).to_numpy() for c in (_S, _R, _W))

    raw = _audit(testing, _S, segments, level, method, seed)
    full = raw.filter(pl.col("depth") == 0).row(0, named=True)
    info: dict[str, Any] = {
        "rows": rows.height,
        "testing_rows": testing.height,
        "level": level,
        "method": method,
        "shrinkage": shrinkage,
        "global_z": full["ecce_r_z"],
        "global_p_family": full["p_family"],
    }
    monotone = None
    if full["p_family"] is not None and full["p_family"] <= level:
        monotone = fit_monotone(*arrays(fitting), max_knots=max_knots)

    def current(part: pl.DataFrame, chosen: list[Correction], fix_map: Any) -> pl.DataFrame:
        fix = Recalibration(_S, tuple(features), fix_map, tuple(chosen))
        return part.with_columns(fix.expr().alias(_P))

    def offset(part: pl.DataFrame, fix_map: Any) -> np.ndarray:
        fix = Recalibration(_S, tuple(features), fix_map, ())
        return part.select(fix.log_odds()).to_series().to_numpy()

    ends = _ends(testing, segments.numerical)
    chosen: list[Correction] = []
    audited: set[str] = set()  # the chosen segments' conditions as the audit writes them
    stopped, rounds, audit = "budget", 0, raw
    fit_offset = offset(fitting, monotone)
    _, y_fit, w_fit = arrays(fitting)
    for rounds in range(1, max_rounds + 1):
        audit = _audit(current(testing, chosen, monotone), _P, segments, level, method, seed)
        significant = audit.filter(
            (pl.col("p_family") <= level) & ~pl.col("condition").is_in(sorted(audited))
        )
        if monotone is not None:
            significant = significant.filter(pl.col("depth") > 0)
        if significant.height == 0:
            stopped = "no segment significant"
            still = audit.filter(pl.col("p_family") <= level).height
            if still:
                stopped = f"{still} corrected segment(s) still significant"
            break
        if len(chosen) >= max_corrections:
            stopped = "max_corrections spent"
            break
        new = significant.filter(pl.col("finding") == "new")
        picked = _disjoint(new if new.height else significant.head(1), features)
        for row in picked[: max_corrections - len(chosen)]:
            audited.add(row["condition"])
            condition, levels = _open_ends(row, features, ends)
            chosen.append(
                Correction(
                    condition=condition,
                    levels=levels,
                    shift=0.0,
                    rows=int(row["n"]),
                    z=float(row["ecce_r_z"]),
                    p_family=float(row["p_family"]),
                    round=rounds,
                )
            )
        members = _members(fitting, [c.condition for c in chosen])
        shifts = fit_shifts(fit_offset, y_fit, w_fit, members, shrinkage=shrinkage)
        chosen = [_with_shift(c, d) for c, d in zip(chosen, shifts, strict=True)]
    else:
        rounds = max_rounds
        audit = _audit(current(testing, chosen, monotone), _P, segments, level, method, seed)
        if audit.filter(pl.col("p_family") <= level).height == 0:
            stopped = "no segment significant"
        else:
            stopped = "max_rounds spent"
    info.update(
        rounds=rounds,
        stopped=stopped,
        testing_max_z=audit.get_column("ecce_r_z").max(),
        testing_min_p_family=audit.get_column("p_family").min(),
    )
    # the chosen steps, refitted on all rows
    s_all, y_all, w_all = arrays(rows)
    if monotone is not None:
        monotone = fit_monotone(s_all, y_all, w_all, max_knots=max_knots)
    if chosen:
        members = _members(rows, [c.condition for c in chosen])
        shifts = fit_shifts(offset(rows, monotone), y_all, w_all, members, shrinkage=shrinkage)
        chosen = [_with_shift(c, d) for c, d in zip(chosen, shifts, strict=True)]
    fix = Recalibration(score, tuple(features), monotone, tuple(chosen), tuple(info.items()))
    return fix


def _ends(rows: pl.DataFrame, numerical: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Each numerical feature's smallest and largest value (the outer bins' closed ends)."""
    out = {}
    for name in numerical:
        values = rows.get_column(name).cast(pl.Float64).fill_nan(None).drop_nulls()
        if values.len():
            out[name] = (float(values.min()) + 0.0, float(values.max()) + 0.0)  # type: ignore[arg-type]
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _open_condition(condition: str, ends: dict[str, tuple[float, float]]) -> str:
    """The condition with the outer bins' ends (the audited rows' extremes) left open.

    The audit cuts a numerical feature into bins from its smallest to its
    largest value; a correction applies to new rows beyond them too.
    """
    for name, (low, high) in ends.items():
        q = _quote(name)
        condition = condition.replace(f"({q} >= {low!r} AND ", "(")
        condition = condition.replace(f" AND {q} <= {high!r})", ")")
    return condition


def _open_ends(
    row: dict[str, Any], features: list[str], ends: dict[str, tuple[float, float]]
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A segment's condition and level labels, outer bins opened (:func:`_open_condition`)."""
    levels = []
    for f in features:
        label = row[f]
        if label is None:
            continue
        if f in ends:
            low, high = ends[f]
            if label.startswith(f"[{low:.6g}, "):
                label = "(-inf, " + label[len(f"[{low:.6g}, ") :]
            if label.endswith(f", {high:.6g}]"):
                label = label[: -len(f", {high:.6g}]")] + ", inf)"
        levels.append((f, label))
    return _open_condition(row["condition"], ends), tuple(levels)


def _disjoint(candidates: pl.DataFrame, features: list[str]) -> list[dict[str, Any]]:
    """The strongest candidate, then each next one whose features none picked before restrict.

    Segments sharing a feature with a stronger one are left to the next
    round: often their excess was the stronger one's, and the refit removes it.
    """
    picked, used = [], set()
    for row in candidates.iter_rows(named=True):
        restricted = {f for f in features if row[f] is not None}
        if not restricted & used or not picked:
            picked.append(row)
            used |= restricted
    return picked


def _with_shift(c: Correction, shift: float) -> Correction:
    return Correction(c.condition, c.levels, float(shift), c.rows, c.z, c.p_family, c.round)
