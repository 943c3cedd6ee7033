"""Multiclass calibration (issue 24 item 1): top-label and class-wise against naive loops."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference as ref
import reference_calibration_kinds as kinds
from numpy.testing import assert_allclose

import polars_cumdev
from polars_cumdev.calibration import CLASSWISE_COLUMNS

RTOL = 1e-9
COLUMNS = ["p_a", "p_b", "p_c", "p_d"]


def classified(seed: int, m: int = 1200, k: int = 4) -> tuple[pl.DataFrame, np.ndarray]:
    """Probabilities on a coarse grid (ties in scores and in the argmax), weights, groups."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(1, 6, size=(m, k)).astype(np.float64) + 0.5 * (
        rng.uniform(size=(m, k)) < 0.1
    )
    p = raw / raw.sum(axis=1, keepdims=True)
    truth = np.clip(p + 0.05 * np.sin(7 * p), 1e-6, None)
    truth /= truth.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(k, p=t) for t in truth])
    frame = pl.DataFrame(
        {
            **{c: p[:, i] for i, c in enumerate(COLUMNS[:k])},
            "label": labels,
            "w": rng.lognormal(0, 0.6, size=m),
            "g": rng.choice(["x", "y", "z"], size=m, p=[0.5, 0.3, 0.2]),
        }
    )
    return frame, p


def _check(got: dict, want: dict) -> None:
    for name in ("ecce_r", "ecce_mad", "delta", "sigma"):
        assert_allclose(got[name], want[name], rtol=RTOL, err_msg=name)
    assert_allclose(got["ecce_r_z"], want["ecce_r"] / want["sigma"], rtol=RTOL)
    assert_allclose(got["ecce_r_p"], ref.kuiper_pvalue_naive(got["ecce_r_z"]), rtol=RTOL)
    assert_allclose(got["ecce_mad_p"], ref.ks_pvalue_naive(got["ecce_mad_z"]), rtol=RTOL)
    assert got["n_scores"] == want["S"].size


@pytest.mark.parametrize("seed", [0, 1])
def test_top_label_matches_reference(seed: int) -> None:
    df, p = classified(seed)
    top, hit = kinds.top_label(p, df["label"].to_numpy())
    # the grid makes ties in the argmax, which the first class wins
    assert (p == p.max(axis=1, keepdims=True)).sum(axis=1).max() > 1
    got = df.cumdev.calibration(COLUMNS, "label", "w", kind="top-label").row(0, named=True)
    _check(got, ref.calibration(top, hit, df["w"].to_numpy()) | {"S": np.unique(top)})
    assert got["n"] == df.height


@pytest.mark.slow
def test_top_label_per_group() -> None:
    df, p = classified(2)
    out = df.lazy().cumdev.calibration(COLUMNS, "label", "w", kind="top-label", by="g").collect()
    assert out.height == 3
    for row in out.iter_rows(named=True):
        mask = (df["g"] == row["g"]).to_numpy()
        top, hit = kinds.top_label(p[mask], df["label"].to_numpy()[mask])
        want = ref.calibration(top, hit, df["w"].to_numpy()[mask])
        _check(row, want | {"S": np.unique(top)})


@pytest.mark.parametrize("by", [None, "g"])
@pytest.mark.slow
def test_class_wise_matches_reference_with_holm_and_bh(by: str | None) -> None:
    df, p = classified(3)
    out = df.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise", by=by)
    assert out.columns == [*([by] if by else []), *CLASSWISE_COLUMNS]
    assert out.height == 4 * (3 if by else 1)
    assert out["ecce_r_z"].to_list() == sorted(out["ecce_r_z"].to_list(), reverse=True)
    for row in out.iter_rows(named=True):
        mask = np.ones(df.height, bool) if by is None else (df[by] == row[by]).to_numpy()
        c = COLUMNS.index(row["class"])
        s, hit = kinds.one_vs_rest(p[mask], df["label"].to_numpy()[mask], c)
        want = ref.calibration(s, hit, df["w"].to_numpy()[mask])
        _check(row, want | {"S": np.unique(s)})
    for name in ("ecce_r", "ecce_mad"):
        pvalues = out[f"{name}_p"].to_numpy()
        assert_allclose(out[f"{name}_holm"].to_numpy(), kinds.holm(pvalues), rtol=RTOL)
        assert_allclose(out[f"{name}_q"].to_numpy(), ref.bh_qvalues(pvalues), rtol=RTOL)


@pytest.mark.slow
def test_labels_as_names_lists_arrays_and_classes_agree() -> None:
    df, _ = classified(4)
    want = df.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise").sort("class")
    names = df.with_columns(pl.col("label").replace_strict(list(range(4)), COLUMNS).alias("label"))
    by_name = names.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise").sort("class")
    assert by_name.equals(want)
    listed = df.select(pl.concat_list(COLUMNS).alias("p"), "label", "w")
    as_list = listed.cumdev.calibration("p", "label", "w", kind="class-wise").sort("class")
    assert as_list["class"].to_list() == [0, 1, 2, 3]
    assert as_list.drop("class").equals(want.drop("class"))
    arrays = listed.with_columns(pl.col("p").list.to_array(4))
    as_array = arrays.cumdev.calibration("p", "label", "w", kind="class-wise").sort("class")
    assert as_array.equals(as_list)
    fruit = ["apple", "fig", "kiwi", "pear"]
    named = names.with_columns(pl.col("label").replace_strict(COLUMNS, fruit))
    out = named.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise", classes=fruit)
    assert out.sort("class")["class"].to_list() == fruit
    assert out.sort("class").drop("class").equals(want.drop("class"))
    top = df.cumdev.calibration(COLUMNS, "label", "w", kind="top-label")
    assert listed.cumdev.calibration("p", "label", "w", kind="top-label").equals(top)


@pytest.mark.slow
def test_curves_per_class_and_top_label_match_reference() -> None:
    df, p = classified(5)
    labels, w = df["label"].to_numpy(), df["w"].to_numpy()
    curves = df.cumdev.calibration_curve(COLUMNS, "label", "w", kind="class-wise", fraction=0.6)
    assert curves.columns[0] == "class"
    assert curves["class"].unique(maintain_order=True).to_list() == COLUMNS
    for c, name in enumerate(COLUMNS):
        s, hit = kinds.one_vs_rest(p, labels, c)
        want = ref.calibration(s, hit, w, 0.6)
        got = curves.filter(pl.col("class") == name)
        assert got.height == want["kept"] + 1
        assert_allclose(got["cumdiff"].to_numpy(), want["C"], rtol=RTOL, atol=1e-15)
        assert_allclose(got["a"].to_numpy(), want["A"], rtol=RTOL, atol=1e-15)
        assert_allclose(got["sigma"].to_numpy(), want["sigma"], rtol=RTOL)
    one = df.cumdev.calibration_curve(COLUMNS, "label", "w", kind="class-wise", class_="p_c")
    assert one["class"].unique().to_list() == ["p_c"]
    assert_allclose(
        one["cumdiff"].to_numpy(),
        ref.calibration(*kinds.one_vs_rest(p, labels, 2), w)["C"],
        rtol=RTOL,
        atol=1e-15,
    )
    top, hit = kinds.top_label(p, labels)
    got = df.cumdev.calibration_curve(COLUMNS, "label", "w", kind="top-label")
    assert_allclose(
        got["cumdiff"].to_numpy(), ref.calibration(top, hit, w)["C"], rtol=RTOL, atol=1e-15
    )


@pytest.mark.slow
def test_kernel_and_polars_engines_agree_class_wise() -> None:
    df, _ = classified(6, m=3000)
    a = df.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise", by="g", engine="polars")
    b = df.cumdev.calibration(COLUMNS, "label", "w", kind="class-wise", by="g", engine="kernel")
    for name in ("ecce_r", "ecce_mad", "sigma", "ecce_r_holm"):
        assert_allclose(a[name].to_numpy(), b[name].to_numpy(), rtol=RTOL, err_msg=name)


def test_bad_multiclass_input_is_named() -> None:
    df, _ = classified(7, m=200)
    with pytest.raises(polars_cumdev.InvalidParameterError, match="kind='top-label'"):
        df.cumdev.calibration(COLUMNS, "label")
    with pytest.raises(polars_cumdev.InvalidParameterError, match="`kind` must be"):
        df.cumdev.calibration(COLUMNS, "label", kind="topk")
    wrong = df.with_columns(
        pl.when(pl.int_range(pl.len()) < 3).then(7).otherwise("label").alias("label")
    )
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"3 label.*match no class"):
        wrong.cumdev.calibration(COLUMNS, "label", kind="class-wise")
    nan = df.with_columns(
        pl.when(pl.int_range(pl.len()) < 2).then(float("nan")).otherwise("p_b").alias("p_b")
    )
    with pytest.raises(polars_cumdev.InvalidValuesError, match=r"2 row.*NaN"):
        nan.lazy().cumdev.calibration(COLUMNS, "label", kind="top-label").collect()
    listed = df.select(pl.concat_list(COLUMNS).alias("p"), pl.col("label").cast(pl.String))
    with pytest.raises(polars_cumdev.InvalidParameterError, match="classes="):
        listed.cumdev.calibration("p", "label", kind="class-wise")
    with pytest.raises(polars_cumdev.InvalidParameterError, match="not 'mean'"):
        df.cumdev.calibration(COLUMNS, "label", kind="top-label", target="mean")
    with pytest.raises(polars_cumdev.InvalidParameterError, match="clashes"):
        df.rename({"g": "class"}).cumdev.calibration(
            COLUMNS, "label", kind="class-wise", by="class"
        )
    short = df.select(pl.concat_list(COLUMNS).alias("p"), "label").with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.col("p").list.head(3)).otherwise("p")
    )
    with pytest.raises(polars_cumdev.InvalidValuesError, match="another number"):
        short.cumdev.calibration("p", "label", kind="class-wise")


def test_pandas_input_gives_the_same_polars_frame() -> None:
    pd = pytest.importorskip("pandas")
    from polars_cumdev.calibration import calibration

    df, _ = classified(8, m=300)
    want = calibration(df, COLUMNS, "label", "w", kind="class-wise")
    got = calibration(
        pd.DataFrame(df.to_dict(as_series=False)), COLUMNS, "label", "w", kind="class-wise"
    )
    assert isinstance(got, pl.DataFrame)
    assert got.equals(want)
