"""The namespace's methods for calibration: cumulative, CORP and binned.

Each forwards to the analysis that implements it (:mod:`polars_cumdev.calibration`,
:mod:`polars_cumdev.multicalibration`,
:mod:`polars_cumdev.corp`, :mod:`polars_cumdev.binned`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_cumdev import binned, calibration, corp
from polars_cumdev.method.expressions import Column
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.namespace.base import F, Methods
from polars_cumdev.progress import Progress

__all__ = ["CalibrationMethods"]


class CalibrationMethods(Methods[F]):
    """Calibration of predicted probabilities, cumulative and binned."""

    def calibration(
        self,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        by: Column | Sequence[Column] | None = None,
        engine: str = "auto",
        kind: str | None = None,
        classes: Sequence[Any] | None = None,
        target: str = "probability",
        alpha: float | None = None,
        level: float = LEVEL,
    ) -> F:
        """ECCE-R and ECCE-MAD of predictions, overall or per group.

        Probabilities, multiclass probabilities (``kind="top-label"`` or
        ``"class-wise"``), predicted means (``target="mean"``) and quantiles
        (``target="quantile", alpha=...``). See
        :func:`polars_cumdev.calibration.calibration` (method.md 2, appendix A
        equations (44)-(50) of M. Tygert, "Cumulative deviation of a
        subpopulation from the full population").
        """
        return self._out(
            calibration.calibration(
                self._data(score, response, weight, by),
                score,
                response,
                weight,
                by=by,
                engine=engine,
                kind=kind,
                classes=classes,
                target=target,
                alpha=alpha,
                level=level,
            )
        )

    def calibration_curve(
        self,
        score: Column | Sequence[Column],
        response: Column,
        weight: Column | None = None,
        *,
        subpop: pl.Expr | str | None = None,
        fraction: float = 1.0,
        kind: str | None = None,
        class_: Any = None,
        classes: Sequence[Any] | None = None,
        target: str = "probability",
        alpha: float | None = None,
        level: float = LEVEL,
    ) -> F:
        """Drill-down frame of cumulative miscalibration (same columns as :meth:`curve`).

        ``subpop`` selects one group, as in :meth:`curve`, :meth:`compare_curve`
        and :meth:`paired_curve`. See :func:`polars_cumdev.calibration.calibration_curve`.
        """
        return self._out(
            calibration.calibration_curve(
                self._data(score, response, weight, subpop),
                score,
                response,
                weight,
                subpop=subpop,
                fraction=fraction,
                kind=kind,
                class_=class_,
                classes=classes,
                target=target,
                alpha=alpha,
                level=level,
            )
        )

    def multicalibration(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        segments: object,
        level: float = 0.05,
        method: str = "holm",
        resamples: int = 999,
        seed: int = 0,
        locate: bool = True,
    ) -> F:
        """Calibration of every segment of a family, with family-wise adjusted p-values.

        See :func:`polars_cumdev.multicalibration.multicalibration`.
        """
        from polars_cumdev.multicalibration import multicalibration

        return self._out(
            multicalibration(
                self._data(score, response, weight, segments),
                score,
                response,
                weight,
                segments=segments,  # type: ignore[arg-type]
                level=level,
                method=method,
                resamples=resamples,
                seed=seed,
                locate=locate,
            )
        )

    def multicalibration_report(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        segments: object,
        path: str | Path,
        top: int = 5,
        level: float = 0.05,
        method: str = "holm",
        resamples: int = 999,
        seed: int = 0,
        progress: Progress = False,
    ) -> Path:
        """Write an HTML page auditing every segment of a family (summary, funnel, drill-downs).

        See :func:`polars_cumdev.report.multicalibration.multicalibration_report`; runs the
        queries it needs at once, on a LazyFrame too, and returns the path written.
        """
        from polars_cumdev.report.multicalibration import multicalibration_report

        return multicalibration_report(
            self._data(score, response, weight, segments),
            score, response, weight, segments=segments,  # type: ignore[arg-type]
            path=path, top=top, level=level, method=method, resamples=resamples, seed=seed,
            progress=progress,
        )  # fmt: skip

    def corp(
        self,
        score: Column,
        response: Column,
        weight: Column | None = None,
        *,
        by: Column | Sequence[Column] | None = None,
    ) -> F:
        """Mean Brier score and its CORP decomposition (MCB, DSC, UNC), overall or per group.

        See :func:`polars_cumdev.corp.decomposition.corp` (Dimitriadis, Gneiting and
        Jordan, PNAS 2021).
        """
        return self._out(
            corp.corp(self._data(score, response, weight, by), score, response, weight, by=by)
        )

    def corp_curve(
        self,
        score: Column,
        response: Column,
        weight: Column | None = None,
        *,
        by: Column | Sequence[Column] | None = None,
        resamples: int = 100,
        level: float = 0.9,
        seed: int = 0,
    ) -> F:
        """CORP reliability diagram: the isotonic fit and its consistency band, tidy.

        See :func:`polars_cumdev.corp.diagram.corp_curve`.
        """
        return self._out(
            corp.corp_curve(
                self._data(score, response, weight, by),
                score,
                response,
                weight,
                by=by,
                resamples=resamples,
                level=level,
                seed=seed,
            )
        )

    def reliability(
        self,
        score: Column,
        response: Column,
        weight: Column | None = None,
        *,
        subpop: pl.Expr | str | None = None,
        bins: int = 10,
        binning: str = "equispaced",
        seed: int = 0,
        resamples: int = 0,
        calibration: bool = False,
    ) -> F:
        """Binned reliability-diagram points, tidy: one row per (population, bin).

        See :func:`polars_cumdev.binned.reliability` (equations (34)-(40) of M.
        Tygert, "Cumulative deviation of a subpopulation from the full
        population", Remark 5; method.md 3).
        """
        return self._out(
            binned.reliability(
                self._data(score, response, weight, subpop),
                score,
                response,
                weight,
                subpop=subpop,
                bins=bins,
                binning=binning,
                seed=seed,
                resamples=resamples,
                calibration=calibration,
            )
        )

    def ece(
        self,
        score: Column,
        response: Column,
        weight: Column | None = None,
        *,
        bins: int = 10,
        binning: str = "equispaced",
        weighting: str = "width",
        by: Column | Sequence[Column] | None = None,
        seed: int = 0,
    ) -> F:
        """Binned expected calibration errors ECE1 and ECE2, overall or per group.

        See :func:`polars_cumdev.binned.ece` (equations (3)-(4) of the ECE paper,
        Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of calibration for
        probabilistic predictions";
        method.md 3).
        """
        return self._out(
            binned.ece(
                self._data(score, response, weight, by),
                score,
                response,
                weight,
                bins=bins,
                binning=binning,
                weighting=weighting,
                by=by,
                seed=seed,
            )
        )

    def ece_sweep(
        self,
        score: Column,
        response: Column,
        weight: Column | None = None,
        *,
        bins: Sequence[int] = binned.DEFAULT_SWEEP,
        binning: str = "equispaced",
        weighting: str = "width",
        by: Column | Sequence[Column] | None = None,
        seed: int = 0,
    ) -> F:
        """ECE1 and ECE2 for each number of bins in ``bins`` (they move; the ECCEs need none).

        See :func:`polars_cumdev.binned.ece_sweep`.
        """
        return self._out(
            binned.ece_sweep(
                self._data(score, response, weight, by),
                score,
                response,
                weight,
                bins=bins,
                binning=binning,
                weighting=weighting,
                by=by,
                seed=seed,
            )
        )

    def calibration_drift(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        time: str,
        every: str = "1w",
        period: str | None = None,
        by: str | Sequence[str] | None = None,
        alpha: float = 0.05,
        adjustment: str = "holm",
        engine: str = "auto",
    ) -> F:
        """Calibration per time window, adjusted across the windows (Holm or Bonferroni).

        See :func:`polars_cumdev.drift.calibration_drift`.
        """
        from polars_cumdev import drift

        return self._out(
            drift.calibration_drift(
                self._data(score, response, weight, time, by),
                score,
                response,
                weight,
                time=time,
                every=every,
                period=period,
                by=by,
                alpha=alpha,
                adjustment=adjustment,
                engine=engine,
            )
        )

    def recalibrate(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        segments: object = None,
        **options: Any,
    ) -> Any:
        """Fit the recalibration the multicalibration audit proves necessary.

        Returns a :class:`polars_cumdev.recalibration.Recalibration` (an
        expression, a table, a JSON file). See
        :func:`polars_cumdev.recalibration.recalibrate` for the options.
        """
        from polars_cumdev.recalibration import recalibrate

        return recalibrate(
            self._data(score, response, weight, segments),
            score,
            response,
            weight,
            segments=segments,  # type: ignore[arg-type]
            **options,
        )

    def recalibration_report(
        self, fix: Any, *, path: str | Path, top: int = 5, level: float | None = None
    ) -> Path:
        """Write the HTML page judging a recalibration on these (held-out) rows.

        See :func:`polars_cumdev.report.recalibration_report`.
        """
        from polars_cumdev.report.recalibration import recalibration_report

        return recalibration_report(fix, self._frame, path=path, top=top, level=level)
