"""The significance band of the cumulative plot: ks_critical, variance_share and the chart.

* :func:`polars_cumdev.method.pvalues.ks_critical` inverts :func:`ks_pvalue` (and the
  high-precision reference of the p-value);
* ``variance_share`` of every curve frame is the running share of sigma^2,
  against the naive transcriptions of the spec;
* the chart's band is left exactly when the screen's ``ks_p`` is below alpha,
  group by group.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose
from test_compare import FIRST, SECOND, expected, pair_frame

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev import charts
from polars_cumdev.compare import compare_curve
from polars_cumdev.datasets import calibration_oscillating, census
from polars_cumdev.errors import ColumnNotFoundError, InvalidParameterError
from polars_cumdev.method.pvalues import ks_critical, ks_pvalue

# --------------------------------------------------------------------------- ks_critical


@pytest.mark.parametrize("alpha", [0.9, 0.5, 0.2, 0.1, 0.05, 0.01, 1e-3, 1e-8, 1e-40, 1e-300])
def test_ks_critical_inverts_the_pvalue(alpha: float) -> None:
    z = ks_critical(alpha)
    assert ks_pvalue(z) == pytest.approx(alpha, rel=1e-12)
    # The root is tight: a relative step of 1e-12 either way crosses alpha.
    assert ks_pvalue(z * (1.0 + 1e-12)) < alpha < ks_pvalue(z * (1.0 - 1e-12))


@pytest.mark.parametrize("alpha", [0.3, 0.05, 1e-6])
def test_ks_critical_against_the_high_precision_pvalue(alpha: float) -> None:
    assert ref.ks_pvalue_naive(ks_critical(alpha)) == pytest.approx(alpha, rel=1e-10)


def test_ks_critical_known_values_and_order() -> None:
    # P(max |B| > z) = 4 (Q(z) - Q(3 z) + ...): near z = 1.96 it is 4 Q(z) less about
    # 8e-9, so the 10% critical value is the normal 2.5% quantile, a little lowered.
    normal = 1.959963984540054
    assert normal - 1e-7 < ks_critical(0.1) < normal
    levels = [0.5, 0.1, 0.05, 0.01, 0.001]
    values = [ks_critical(a) for a in levels]
    assert values == sorted(values)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 2, True, "0.05", None, math.nan])
def test_ks_critical_rejects_bad_levels(alpha: Any) -> None:
    with pytest.raises(InvalidParameterError, match="alpha"):
        ks_critical(alpha)


# --------------------------------------------------------------------------- variance_share


def running_share(terms: np.ndarray) -> np.ndarray:
    out = [0.0]
    running = 0.0
    for term in terms:
        running += float(term)
        out.append(running)
    return np.array(out) / running


def check_share(got: pl.Series, want: np.ndarray) -> None:
    values = got.to_numpy()
    assert values[0] == 0.0 and values[-1] == 1.0
    assert (np.diff(values) >= 0).all()
    assert_allclose(values, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("variance", ["bernoulli", "empirical"])
@pytest.mark.parametrize("fraction", [1.0, 0.6])
def test_curve_variance_share(make_frame, variance: str, fraction: float) -> None:
    df = make_frame(3, 600, response="bernoulli" if variance == "bernoulli" else "continuous")
    mask = (df["g"] == "mid").to_numpy()
    got = df.cumdev.curve(
        subpop=pl.col("g") == "mid", score="s", response="r", weight="w",
        variance=variance, fraction=fraction,
    )  # fmt: skip
    want = ref.subpop_vs_full(df["s"], df["r"], df["w"], mask, variance, fraction)
    kept = want["kept"]
    a, f = want["a"], want["f"][:kept]
    spread = want["Rt"][:kept] * (1 - want["Rt"][:kept]) if variance == "bernoulli" else want["V"]
    check_share(got["variance_share"], running_share(a**2 * spread[:kept] * f))
    assert got.columns[-2:] == ["variance_share", "located"]


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_calibration_curve_variance_share(fraction: float) -> None:
    df = calibration_oscillating(3000).with_columns(w=pl.int_range(pl.len()) % 5 + 1.0)
    got = df.cumdev.calibration_curve("score", "response", "w", fraction=fraction)
    want = ref.calibration(df["score"], df["response"], df["w"], fraction)
    s, f = want["S"][: want["kept"]], want["f"][: want["kept"]]
    check_share(got["variance_share"], running_share(want["a"] ** 2 * s * (1 - s) * f))


@pytest.mark.parametrize("variance", ["empirical", "score"])
def test_compare_curve_variance_share(variance: str) -> None:
    df = pair_frame(11)
    got = compare_curve(df, FIRST, SECOND, "s", "r", "w", variance=variance)
    want = expected(df, "w", variance)
    d, v, t = want["d"], want["v"], want["t"]
    if variance == "empirical":
        terms = np.append((np.diff(d) * (v[:-1] + v[1:])) ** 2 / 16.0, 0.0)
    else:
        terms = v**2 * t * (1 - t)
    check_share(got["variance_share"], running_share(terms))


def test_variance_share_is_null_when_sigma_is_zero() -> None:
    df = pl.DataFrame({"s": [0.0, 0.0, 1.0, 1.0], "r": [0.0, 0.0, 1.0, 1.0]})
    got = df.cumdev.calibration_curve("s", "r")
    assert got["sigma"][0] == 0.0
    assert got["variance_share"][0] == 0.0 and got["variance_share"][1:].null_count() == 2


# --------------------------------------------------------------------------- the chart


def named_layers(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        layer.get("name", layer.get("description")): layer
        for layer in spec["layer"]
        if "name" in layer or "description" in layer
    }


def rows(spec: dict[str, Any], layer: dict[str, Any]) -> list[dict[str, Any]]:
    data = layer["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


def band_verdict(curve: pl.DataFrame, alpha: float) -> tuple[bool, bool]:
    """(curve leaves the drawn band, subtitle says so), read from the chart's spec."""
    spec = charts.cumulative(curve, band=alpha, max_points=100_000).to_dict()
    layers = named_layers(spec)
    edges = [row["edge"] for row in rows(spec, layers["ks_band"])]
    assert len(edges) == 2 and edges[0] == -edges[1] > 0
    drawn = [row["cumdiff"] for row in rows(spec, layers["curve"])]
    assert len(drawn) == curve.height  # nothing thinned: every point is checked
    leaves = max(abs(c) for c in drawn) > edges[0]
    subtitle = " ".join(spec["title"]["subtitle"])
    return leaves, "leaves it" in subtitle


def check_screen(data: pl.DataFrame, by: str, alpha: float, **args: str) -> list[bool]:
    """Every group with a p-value: the drawn curve leaves the band iff ks_p < alpha."""
    table = data.cumdev.screen(by=by, **args).filter(pl.col("ks_p").is_not_null())
    outcomes = []
    for group, p in table.select(by, "ks_p").iter_rows():
        curve = data.cumdev.curve(subpop=pl.col(by) == group, **args)
        leaves, says = band_verdict(curve, alpha)
        assert leaves == (p < alpha) == says, (group, p)
        outcomes.append(leaves)
    return outcomes


@pytest.mark.slow
def test_leaving_the_band_agrees_with_the_ks_test_on_every_group(make_frame) -> None:
    data = make_frame(5, 3000, scores="mixed")
    outcomes = check_screen(data, "g", 0.1, score="s", response="r", weight="w")
    assert len(outcomes) == 5 and any(outcomes) and not all(outcomes)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.3, 0.05, 0.01])
def test_leaving_the_band_agrees_with_the_ks_test_on_every_county(alpha: float) -> None:
    args = {"score": "log10_income", "response": "has_internet", "weight": "WGTP"}
    outcomes = check_screen(census(n=12_000), "county", alpha, **args)
    assert len(outcomes) > 30 and any(outcomes) and not all(outcomes)


@pytest.mark.slow
def test_leaving_the_band_agrees_with_calibration_per_group() -> None:
    df = calibration_oscillating(2000).with_columns(part=pl.int_range(pl.len()) % 5)
    table = df.cumdev.calibration("score", "response", by="part")
    for part, p in table.select("part", "ecce_mad_p").iter_rows():
        curve = df.filter(pl.col("part") == part).cumdev.calibration_curve("score", "response")
        leaves, says = band_verdict(curve, 0.05)
        assert leaves == (p < 0.05) == says


@pytest.mark.slow
def test_band_layers_and_errors(tmp_path) -> None:
    curve = calibration_oscillating(500).cumdev.calibration_curve("score", "response")
    plain = named_layers(charts.cumulative(curve).to_dict())
    assert "ks_band" not in plain and "noise_envelope" not in plain
    spec = charts.cumulative(curve, band=0.01).to_dict()
    layers = named_layers(spec)
    sigma = curve["sigma"][0]
    assert rows(spec, layers["ks_band"])[0]["edge"] == pytest.approx(ks_critical(0.01) * sigma)
    envelope = rows(spec, layers["noise_envelope"])  # drawn at plus and minus "envelope"
    share = curve["variance_share"].to_numpy()
    assert_allclose([row["envelope"] for row in envelope], 2 * sigma * np.sqrt(share), rtol=1e-12)
    assert_allclose([row["a"] for row in envelope], curve["a"].to_numpy(), rtol=0)
    for bad in (0.0, 1.0, True, "0.05"):
        with pytest.raises(InvalidParameterError, match="band"):
            charts.cumulative(curve, band=bad)
    with pytest.raises(ColumnNotFoundError, match="variance_share"):
        charts.cumulative(curve.drop("variance_share"), band=0.05)
    charts.cumulative(curve.drop("variance_share"))  # fine without a band
    assert re.search("stays inside|leaves it", " ".join(spec["title"]["subtitle"]))
    svg = charts.save(charts.cumulative(curve, band=0.05), tmp_path / "band.svg")
    assert svg.read_text(encoding="utf-8").lstrip().startswith("<svg")
