"""The study's accuracy appendix: per-tensor absmax quantization of FP32 matrices to INT8
or INT4, an integer GEMM, dequantization, and the error against a float64 reference.

The integer GEMM of quantized inputs is exact in float64 here (|sum| < 2**53). Every
INT8/INT4 kernel of this project must reproduce that product exactly (its check is
exact), so the errors below are those of any kernel that passes its check: they measure
quantization, not the kernel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Largest magnitude of a signed b-bit integer used by symmetric absmax quantization.
QMAX = {"int8": 127, "int4": 7}


def quantize_absmax(x: np.ndarray, precision: str) -> tuple[np.ndarray, float]:
    """Symmetric per-tensor quantization: scale = max|x| / qmax, q = round(x / scale),
    clipped to [-qmax - 1, qmax].

    Args:
        x: float array (any shape). precision: ``int8`` or ``int4``.

    Returns:
        (q as int8, scale as float).

    Raises:
        KeyError: unknown precision; ValueError: x is all zeros (no scale).
    """
    qmax = QMAX[precision]
    amax = float(np.max(np.abs(x)))
    if amax == 0:
        raise ValueError("cannot quantize an all-zero tensor (absmax scale is 0)")
    scale = amax / qmax
    q = np.clip(np.rint(x / scale), -qmax - 1, qmax).astype(np.int8)
    return q, scale


def gemm_errors(c: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """max |c - ref|, RMSE, and mean relative error sum|c - ref| / sum|ref| (a relative
    L1 error, which stays finite where single elements of ref are near 0)."""
    err = c - ref
    return {"max_abs_error": float(np.max(np.abs(err))),
            "rmse": float(np.sqrt(np.mean(err ** 2))),
            "mean_rel_error": float(np.sum(np.abs(err)) / np.sum(np.abs(ref)))}


def quantization_error(m: int, n: int, k: int, precision: str, seed: int) -> dict:
    """Quantize random FP32 A (M x K) and B (K x N), uniform in [-1, 1), multiply in
    integers, dequantize, and compare with the float64 product of the FP32 inputs."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    qa, sa = quantize_absmax(a, precision)
    qb, sb = quantize_absmax(b, precision)
    c_int = qa.astype(np.float64) @ qb.astype(np.float64)  # exact: every term and sum is an integer < 2**53
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return {"precision": precision, "m": m, "n": n, "k": k, "seed": seed, "scale_a": sa, "scale_b": sb,
            **gemm_errors(c_int * sa * sb, ref)}


def quantization_table(sizes: list[tuple[int, int, int]], seed: int) -> pd.DataFrame:
    """:func:`quantization_error` for INT8 and INT4 at every (M, N, K)."""
    return pd.DataFrame([quantization_error(m, n, k, p, seed) for p in QMAX for m, n, k in sizes])
