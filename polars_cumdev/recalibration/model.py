"""``Recalibration``: a fitted fix, as a Polars expression, a table and a JSON file.

The fix is a global monotone map of the score's log-odds
(:class:`~polars_cumdev.recalibration.monotone.MonotoneMap`, absent when the
audit found the score calibrated overall) plus one additive log-odds shift per
corrected segment, each keyed by the segment's SQL condition as the audit
wrote it. :meth:`Recalibration.expr` is built from Polars expressions only,
so it runs eagerly, lazily, on the streaming engine and inside any query; the
JSON (:meth:`Recalibration.to_json`) holds every number as Python writes a
float (the shortest text that reads back to the same double), so a round
trip gives the same bits.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_cumdev.errors import ColumnNotFoundError, InvalidParameterError
from polars_cumdev.method.prepare import FrameLike, as_lazy, schema_of
from polars_cumdev.recalibration.monotone import LOGIT_BOUND, MonotoneMap, logit_expr

__all__ = ["FORMAT", "VERSION", "Correction", "Recalibration"]

FORMAT = "polars-cumdev recalibration"
VERSION = 1


@dataclass(frozen=True)
class Correction:
    """One segment's additive log-odds shift and the evidence that called for it."""

    condition: str
    levels: tuple[tuple[str, str], ...]
    shift: float
    rows: int
    z: float
    p_family: float
    round: int
    level: float | None = None  # the level its round's audit was tested at (spent across rounds)

    def as_dict(self) -> dict[str, Any]:
        """The correction as plain JSON values."""
        return {
            "condition": self.condition,
            "levels": {k: v for k, v in self.levels},
            "shift": self.shift,
            "rows": self.rows,
            "z": self.z,
            "p_family": self.p_family,
            "round": self.round,
            "level": self.level,
        }


@dataclass(frozen=True)
class Recalibration:
    """A fitted recalibration (from :func:`~polars_cumdev.recalibration.recalibrate`).

    Attributes
    ----------
    score
        The score column the fix reads.
    features
        The segment feature columns the corrections' conditions read.
    monotone
        The global monotone map of the log-odds, or None when the audit found
        no global miscalibration (then the score enters unchanged).
    corrections
        The segments corrected, in the order they were chosen.
    fitting
        How the fit went: rows, folds, level, method, rounds, why it stopped,
        and the held-out fold's audit after the last round.
    target
        ``"probability"`` (the map and shifts act on log-odds) or ``"mean"``
        (on the predicted mean itself, outputs unclipped;
        :mod:`~polars_cumdev.recalibration.means`).
    """

    score: str
    features: tuple[str, ...]
    monotone: MonotoneMap | None
    corrections: tuple[Correction, ...]
    fitting: tuple[tuple[str, Any], ...] = field(default=())
    target: str = "probability"

    def __hash__(self) -> int:
        """Hashable like any frozen value (``fitting`` holds the audit's family as a dict)."""
        return hash(self.to_json())

    def audit(self) -> tuple[str | None, str | None, Any]:
        """The response, weight and family of segments of the audit the fix was fitted with."""
        from polars_cumdev.multicalibration import segments

        facts = dict(self.fitting)
        family = facts.get("segments")
        if not isinstance(family, dict):
            raise InvalidParameterError("this fix does not record the audit it was fitted with")
        if not family.get("categorical") and not family.get("numerical"):
            from polars_cumdev.recalibration.population import POPULATION

            return facts.get("response"), facts.get("weight"), POPULATION
        return facts.get("response"), facts.get("weight"), segments(**family)

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column :meth:`expr` reads."""
        return (self.score, *self.features)

    def log_odds(self, score: str | None = None) -> pl.Expr:
        """The recalibrated log-odds (before the logistic function and its clipping)."""
        s = pl.col(score or self.score)
        out = self.monotone.expr(s) if self.monotone is not None else logit_expr(s)
        for c in self.corrections:
            inside = pl.sql_expr(c.condition).fill_null(False).cast(pl.Float64)
            out = out + inside * c.shift  # + 0 (or -0) outside: the same bits
        return out

    def _mean(self, name: str) -> pl.Expr:
        """The recalibrated predicted mean: the map (or the prediction), plus the shifts."""
        from polars_cumdev.recalibration.means import mean_map_expr

        s = pl.col(name)
        out = mean_map_expr(self.monotone, s) if self.monotone is not None else s.cast(pl.Float64)
        for c in self.corrections:
            inside = pl.sql_expr(c.condition).fill_null(False).cast(pl.Float64)
            out = out + inside * c.shift
        return out

    def expr(self, score: str | None = None) -> pl.Expr:
        """The recalibrated score as a Polars expression (named after the score column).

        Strictly inside (0, 1) for probabilities (unclipped for
        ``target="mean"``). When the fix is the identity (no global map,
        no correction) the score column itself, cast to Float64.
        ``score`` reads another column as the score.
        """
        name = score or self.score
        if self.monotone is None and not self.corrections:
            return pl.col(name).cast(pl.Float64)
        if self.target == "mean":
            return self._mean(name).alias(name)
        z = self.log_odds(name).clip(-LOGIT_BOUND, LOGIT_BOUND)
        return (1.0 / (1.0 + (-z).exp())).alias(name)

    def apply(self, frame: FrameLike, name: str = "recalibrated") -> FrameLike:
        """``frame`` with the recalibrated score as column ``name`` (checks the columns first)."""
        schema = schema_of(as_lazy(frame))
        for column in self.columns:
            if column not in schema:
                raise ColumnNotFoundError(
                    f"the recalibration reads column {column!r}, which the frame lacks; "
                    f"it has {list(schema)}"
                )
        return frame.with_columns(self.expr().alias(name))

    @property
    def table(self) -> pl.DataFrame:
        """One row per correction: the global map first (if any), then each segment."""
        rows: list[dict[str, Any]] = []
        scale = "mean" if self.target == "mean" else "log-odds"
        if self.monotone is not None:
            rows.append(
                {
                    "step": 0,
                    "segment": "(global)",
                    "condition": "TRUE",
                    "change": f"monotone map of the {scale}, {len(self.monotone.knots)} knots",
                    "shift": None,
                    "rows": dict(self.fitting).get("rows"),
                    "z": dict(self.fitting).get("global_z"),
                    "p_family": dict(self.fitting).get("global_p_family"),
                    "level": dict(self.fitting).get("global_level"),
                }
            )
        for c in self.corrections:
            label = " & ".join(f"{k}={v}" for k, v in c.levels) or "(everyone)"
            rows.append(
                {
                    "step": c.round,
                    "segment": label,
                    "condition": c.condition,
                    "change": f"{scale} {c.shift:+.3f}",
                    "shift": c.shift,
                    "rows": c.rows,
                    "z": c.z,
                    "p_family": c.p_family,
                    "level": c.level,
                }
            )
        schema = {
            "step": pl.Int64,
            "segment": pl.String,
            "condition": pl.String,
            "change": pl.String,
            "shift": pl.Float64,
            "rows": pl.Int64,
            "z": pl.Float64,
            "p_family": pl.Float64,
            "level": pl.Float64,
        }
        return pl.DataFrame(rows, schema=schema)

    def to_json(self, indent: int | None = 2) -> str:
        """The fix as versioned, human-readable JSON (numbers read back to the same bits)."""
        document = {
            "format": FORMAT,
            "version": VERSION,
            "target": self.target,
            "score": self.score,
            "features": list(self.features),
            "monotone": None
            if self.monotone is None
            else {"knots": list(self.monotone.knots), "values": list(self.monotone.values)},
            "corrections": [c.as_dict() for c in self.corrections],
            "fitting": dict(self.fitting),
        }
        return json.dumps(document, indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Recalibration:
        """Read a fix written by :meth:`to_json`; a clear error on another format or version."""
        try:
            document = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"not a recalibration file: {exc}") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise InvalidParameterError(f'not a recalibration file (no "format": {FORMAT!r})')
        if document.get("version") != VERSION:
            raise InvalidParameterError(
                f"recalibration file version {document.get('version')!r} is not supported "
                f"(this polars-cumdev reads version {VERSION})"
            )
        try:
            monotone = document["monotone"]
            corrections = tuple(
                Correction(
                    condition=str(c["condition"]),
                    levels=tuple((str(k), str(v)) for k, v in c["levels"].items()),
                    shift=_number(c["shift"]),
                    rows=int(c["rows"]),
                    z=_number(c["z"]),
                    p_family=_number(c["p_family"]),
                    round=int(c["round"]),
                    level=None if c.get("level") is None else _number(c["level"]),
                )
                for c in document["corrections"]
            )
            fix = cls(
                score=str(document["score"]),
                features=tuple(str(f) for f in document["features"]),
                monotone=None
                if monotone is None
                else MonotoneMap(
                    tuple(_number(t) for t in monotone["knots"]),
                    tuple(_number(v) for v in monotone["values"]),
                ),
                corrections=corrections,
                fitting=tuple(document.get("fitting", {}).items()),
                target=str(document.get("target", "probability")),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InvalidParameterError(f"malformed recalibration file: {exc!r}") from None
        if fix.target not in ("probability", "mean"):
            raise InvalidParameterError(
                f"the file's target {fix.target!r} is not 'probability' or 'mean'"
            )
        _check_columns(fix)
        return fix


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _check_columns(fix: Recalibration) -> None:
    """Every condition reads only the declared features; the map is monotone."""
    known = set(fix.features)
    for c in fix.corrections:
        read = set(pl.sql_expr(c.condition).meta.root_names()) if c.condition != "TRUE" else set()
        if not read <= known:
            raise InvalidParameterError(
                f"correction {c.condition!r} reads columns {sorted(read - known)} "
                f"not listed in the file's features {sorted(known)}"
            )
    if fix.monotone is not None:
        t, v = fix.monotone.knots, fix.monotone.values
        if not t or len(t) != len(v) or any(b <= a for a, b in itertools.pairwise(t)):
            raise InvalidParameterError("the file's monotone map has bad knots")
        if any(b < a for a, b in itertools.pairwise(v)):
            raise InvalidParameterError("the file's monotone map is not nondecreasing")
