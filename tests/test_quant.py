"""The quantization-error appendix: absmax quantization and its error bounds."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.study.quant import QMAX, quantization_error, quantize_absmax


@pytest.mark.parametrize("precision", ["int8", "int4"])
def test_quantize_absmax_rounding_bound(precision):
    x = np.random.default_rng(1).normal(size=(64, 96)).astype(np.float32)
    q, scale = quantize_absmax(x, precision)
    assert q.dtype == np.int8 and int(np.abs(q).max()) == QMAX[precision]
    assert np.max(np.abs(q * scale - x)) <= scale / 2 * (1 + 1e-6)


def test_all_zero_tensor_is_refused():
    with pytest.raises(ValueError, match="all-zero"):
        quantize_absmax(np.zeros((4, 4)), "int8")


@pytest.mark.parametrize("precision", ["int8", "int4"])
def test_gemm_error_within_the_rounding_bound(precision):
    """|C_deq - A B| <= sum_k (|a| db + |b| da + da db), da = scale_a / 2, db = scale_b / 2."""
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (32, 256)).astype(np.float32)
    b = rng.uniform(-1, 1, (256, 48)).astype(np.float32)
    qa, sa = quantize_absmax(a, precision)
    qb, sb = quantize_absmax(b, precision)
    c = (qa.astype(np.int64) @ qb.astype(np.int64)) * sa * sb
    ref = a.astype(np.float64) @ b.astype(np.float64)
    da, db = sa / 2, sb / 2
    bound = np.abs(a) @ np.full(b.shape, db) + np.full(a.shape, da) @ np.abs(b) + a.shape[1] * da * db
    assert np.all(np.abs(c - ref) <= bound * (1 + 1e-6))


def test_table_row_and_ordering():
    r8 = quantization_error(128, 128, 512, "int8", seed=0)
    r4 = quantization_error(128, 128, 512, "int4", seed=0)
    for r in (r8, r4):
        assert r["rmse"] <= r["max_abs_error"] and 0 < r["mean_rel_error"] < 1
    # 4-bit steps are 127 / 7 times coarser than 8-bit ones
    assert 10 < r4["mean_rel_error"] / r8["mean_rel_error"] < 30

