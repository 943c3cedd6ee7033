"""The ``cumdev`` namespace on :class:`polars.DataFrame` and :class:`polars.LazyFrame`.

The classes are thin: each method forwards to the module that implements it.
On a LazyFrame every method returns a LazyFrame; on a DataFrame it returns the
collected DataFrame.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Generic, TypeVar

import polars as pl

from polars_cumdev import binned, calibration, compare, corp, subpopulation

__all__ = ["CumdevFrame", "CumdevLazyFrame", "CumdevNamespace"]

F = TypeVar("F", pl.DataFrame, pl.LazyFrame)


class CumdevNamespace(Generic[F]):
    """The methods of ``frame.cumdev``, shared by both frame kinds.

    Reached as ``df.cumdev`` (:class:`CumdevFrame`, eager results) or
    ``lf.cumdev`` (:class:`CumdevLazyFrame`, lazy results); each method
    forwards to the function of the module that implements it.
    """

    def __init__(self, frame: F) -> None:
        self._frame = frame

    def _out(self, result: pl.LazyFrame) -> F:
        raise NotImplementedError

    def screen(
        self,
        by: str | Sequence[str],
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        variance: str = "auto",
        engine: str = "auto",
    ) -> F:
        """Screen every subpopulation of ``by`` against the full population.

        See :func:`polars_cumdev.subpopulation.screen` (equations (12)-(13),
        (25)-(28), (31)-(32)); ``engine`` picks the Polars plan or the
        compiled kernel (:mod:`polars_cumdev.compiled`).
        """
        return self._out(
            subpopulation.screen(
                self._frame, by, score, response, weight, variance=variance, engine=engine
            )
        )

    def curve(
        self,
        subpop: pl.Expr | str,
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        variance: str = "auto",
        fraction: float = 1.0,
        engine: str = "auto",
    ) -> F:
        """Drill-down frame of cumulative differences for one subpopulation.

        See :func:`polars_cumdev.subpopulation.curve` (equations (25)-(28),
        Remark 3).
        """
        return self._out(
            subpopulation.curve(
                self._frame,
                subpop,
                score,
                response,
                weight,
                variance=variance,
                fraction=fraction,
                engine=engine,
            )
        )

    def calibration(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        by: str | Sequence[str] | None = None,
        engine: str = "auto",
    ) -> F:
        """ECCE-R and ECCE-MAD of predicted probabilities, overall or per group.

        See :func:`polars_cumdev.calibration.calibration` (method.md 2,
        appendix A equations (44)-(50)).
        """
        return self._out(
            calibration.calibration(self._frame, score, response, weight, by=by, engine=engine)
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
    ) -> F:
        """Calibration of every segment of a family, with family-wise adjusted p-values.

        See :func:`polars_cumdev.multicalibration.multicalibration`.
        """
        from polars_cumdev.multicalibration import multicalibration

        return self._out(
            multicalibration(
                self._frame,
                score,
                response,
                weight,
                segments=segments,  # type: ignore[arg-type]
                level=level,
                method=method,
                resamples=resamples,
                seed=seed,
            )
        )

    def calibration_curve(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        fraction: float = 1.0,
    ) -> F:
        """Drill-down frame of cumulative miscalibration (same columns as :meth:`curve`).

        See :func:`polars_cumdev.calibration.calibration_curve`.
        """
        return self._out(
            calibration.calibration_curve(self._frame, score, response, weight, fraction=fraction)
        )

    def corp(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        by: str | Sequence[str] | None = None,
    ) -> F:
        """Mean Brier score and its CORP decomposition (MCB, DSC, UNC), overall or per group.

        See :func:`polars_cumdev.corp.corp` (Dimitriadis, Gneiting and
        Jordan, PNAS 2021).
        """
        return self._out(corp.corp(self._frame, score, response, weight, by=by))

    def corp_curve(
        self,
        score: str,
        response: str,
        weight: str | None = None,
        *,
        by: str | Sequence[str] | None = None,
        resamples: int = 100,
        level: float = 0.9,
        seed: int = 0,
    ) -> F:
        """CORP reliability diagram: the isotonic fit and its consistency band, tidy.

        See :func:`polars_cumdev.corp.corp_curve`.
        """
        return self._out(
            corp.corp_curve(
                self._frame,
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
        score: str,
        response: str,
        weight: str | None = None,
        *,
        subpop: pl.Expr | str | None = None,
        bins: int = 10,
        binning: str = "equispaced",
        seed: int = 0,
        resamples: int = 0,
        calibration: bool = False,
    ) -> F:
        """Binned reliability-diagram points, tidy: one row per (population, bin).

        See :func:`polars_cumdev.binned.reliability` (equations (34)-(40),
        Remark 5; method.md 3).
        """
        return self._out(
            binned.reliability(
                self._frame,
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
        score: str,
        response: str,
        weight: str | None = None,
        *,
        bins: int = 10,
        binning: str = "equispaced",
        weighting: str = "width",
        by: str | Sequence[str] | None = None,
        seed: int = 0,
    ) -> F:
        """Binned expected calibration errors ECE1 and ECE2, overall or per group.

        See :func:`polars_cumdev.binned.ece` (``ece-versus-ecce.md`` (3)-(4);
        method.md 3).
        """
        return self._out(
            binned.ece(
                self._frame,
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
        score: str,
        response: str,
        weight: str | None = None,
        *,
        bins: Sequence[int] = binned.DEFAULT_SWEEP,
        binning: str = "equispaced",
        weighting: str = "width",
        by: str | Sequence[str] | None = None,
        seed: int = 0,
    ) -> F:
        """ECE1 and ECE2 for each number of bins in ``bins`` (they move; the ECCEs need none).

        See :func:`polars_cumdev.binned.ece_sweep`.
        """
        return self._out(
            binned.ece_sweep(
                self._frame,
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

    def compare(
        self,
        first: pl.Expr | str,
        second: pl.Expr | str,
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
    ) -> F:
        """Two disjoint subpopulations compared directly, "first minus second".

        See :func:`polars_cumdev.compare.compare` (two-subpopulations spec,
        J. Big Data 8 (2021) 158).
        """
        return self._out(
            compare.compare(
                self._frame,
                first,
                second,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
            )
        )

    def compare_curve(
        self,
        first: pl.Expr | str,
        second: pl.Expr | str,
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
        fraction: float = 1.0,
    ) -> F:
        """Drill-down frame of :meth:`compare` (same columns as :meth:`curve`).

        See :func:`polars_cumdev.compare.compare_curve`.
        """
        return self._out(
            compare.compare_curve(
                self._frame,
                first,
                second,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
                fraction=fraction,
            )
        )

    def compare_all(
        self,
        by: str,
        reference: object,
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        variance: str = "empirical",
        ties: str = "error",
        seed: int = 0,
    ) -> F:
        """Every group of ``by`` compared with the group ``reference``, in one query.

        See :func:`polars_cumdev.compare.compare_all`.
        """
        return self._out(
            compare.compare_all(
                self._frame,
                by,
                reference,
                score,
                response,
                weight,
                variance=variance,
                ties=ties,
                seed=seed,
            )
        )

    def paired(
        self,
        score: str | Sequence[str],
        first: str,
        second: str,
        weight: str | None = None,
        *,
        by: str | Sequence[str] | None = None,
        variance: str = "observed",
    ) -> F:
        """Paired samples: first minus second response of the same units, by score.

        See :func:`polars_cumdev.paired.paired` (the paper's ``cumdiff`` and
        ``expectedvar``; ``paired-and-covariates.md`` section 1); one row per
        group of ``by``, ranked, with Benjamini-Hochberg q-values.
        """
        from polars_cumdev.paired import paired

        return self._out(
            paired(self._frame, score, first, second, weight, by=by, variance=variance)
        )

    def paired_curve(
        self,
        score: str | Sequence[str],
        first: str,
        second: str,
        weight: str | None = None,
        *,
        subpop: pl.Expr | str | None = None,
        variance: str = "observed",
        fraction: float = 1.0,
    ) -> F:
        """Drill-down frame of :meth:`paired` (the layout of :meth:`curve`).

        See :func:`polars_cumdev.paired.paired_curve` (``cumdiff``,
        ``expectedvar``, Remark 3's zoom).
        """
        from polars_cumdev.paired import paired_curve

        return self._out(
            paired_curve(
                self._frame,
                score,
                first,
                second,
                weight,
                subpop=subpop,
                variance=variance,
                fraction=fraction,
            )
        )

    def report(
        self,
        by: str | Sequence[str],
        score: str | Sequence[str],
        response: str,
        weight: str | None = None,
        *,
        path: str | Path,
        top: int = 5,
        variance: str = "auto",
        bins: int = 10,
    ) -> Path:
        """Write a self-contained HTML report (screen, then drill-downs of the top groups).

        See :func:`polars_cumdev.report.report`. Runs the queries it needs at
        once, on a LazyFrame too, and returns the path written.
        """
        from polars_cumdev import report

        return report.report(
            self._frame,
            by,
            score,
            response,
            weight,
            path=path,
            top=top,
            variance=variance,
            bins=bins,
        )


@pl.api.register_dataframe_namespace("cumdev")
class CumdevFrame(CumdevNamespace[pl.DataFrame]):
    """``df.cumdev``: eager results."""

    def _out(self, result: pl.LazyFrame) -> pl.DataFrame:
        # The data are in memory already; Polars' in-memory engine runs these
        # plans faster than the streaming default up to millions of rows, and
        # about as fast at ten million (benchmarks/README.md).
        return result.collect(engine="in-memory")


@pl.api.register_lazyframe_namespace("cumdev")
class CumdevLazyFrame(CumdevNamespace[pl.LazyFrame]):
    """``lf.cumdev``: lazy results that chain into further queries."""

    def _out(self, result: pl.LazyFrame) -> pl.LazyFrame:
        return result
