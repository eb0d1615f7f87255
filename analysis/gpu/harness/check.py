"""The check of a kernel's C against the float64 reference: exact for integers, Higham's bound for FP16 with FP32
accumulation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.precision import Precision
from analysis.gpu.harness.inputs import gpu_array_module, matmul_f64


@dataclass
class CheckResult:
    """Outcome of comparing C with the float64 reference.

    Attributes:
        passed: every element within tolerance (and none left poisoned).
        max_abs_error: max |C - ref| over all M*N elements, in C's unit.
        rel_fro_error: ||C - ref||_F / ||ref||_F.
        tolerance: the rule applied, in words.
        bad_count: elements outside tolerance.
        first_bad: (row, col) of the first such element in row-major order, or None.
    """

    passed: bool
    max_abs_error: float
    rel_fro_error: float
    tolerance: str
    bad_count: int
    first_bad: tuple[int, int] | None


def fp32_gamma(kdim: int) -> float:
    """gamma_K = K*u / (1 - K*u) with u = 2**-23 for a sum of K products (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., eq. 3.5, any summation order; u doubled from
    2**-24 to cover truncating accumulators)."""
    return kdim * 2.0**-23 / (1 - kdim * 2.0**-23)


def fp32_accumulation_bound(a: np.ndarray, b_t: np.ndarray) -> tuple[float, np.ndarray]:
    """Elementwise error bound of an FP32-accumulated A @ B for float64 A (M, K), B^T (N, K):
    (gamma_K, gamma_K * (|A| @ |B|)), gamma_K of :func:`fp32_gamma`."""
    gamma = fp32_gamma(a.shape[1])
    return gamma, gamma * matmul_f64(np.abs(a), np.abs(b_t))


#: The comparison's array module: CuPy where it is installed and sees a GPU (the comparison
#: then runs on the device and only scalars come back: at M = N = K = 8192 the elementwise
#: work on the host took seconds per check), else NumPy.
_array_module = gpu_array_module


def compare(c: np.ndarray, a: np.ndarray, b_t: np.ndarray, prec: Precision,
            rows: np.ndarray | None = None, accumulator: str | None = None) -> CheckResult:
    """Compare the kernel's C with the float64 product A @ B.

    Args:
        c: the kernel's output, (M, N) float32, int32 or float16 (an FP16 kernel writing FP16 C).
        a, b_t: the inputs as float64, A (M, K) and B^T (N, K), NumPy or CuPy arrays.
        prec: the input precision (decides exact or bounded comparison).
        rows: compare only these rows of C (all N columns); None compares all of C.
        accumulator: ``"f16"`` for FP16 accumulation: exact comparison, the inputs being
            the integers of :func:`make_inputs`.

    Integer precisions must match exactly (float64 represents every INT8 product sum
    with K <= 2**37 exactly), and so must FP16 accumulation of integers in {-1, 0, 1}
    (see :func:`make_inputs`). For FP16 inputs with FP32 accumulation the bound is
    elementwise, |C - ref| <= gamma_K * (|A| @ |B|) with gamma_K = K*u / (1 - K*u) and
    u = 2**-23 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5,
    for any summation order; u doubled from 2**-24 to cover truncating accumulators).
    FP16 C adds its rounding to nearest of the FP32 sum s (IEEE 754 binary16: unit roundoff
    2**-11, and half the subnormal spacing 2**-24 below 2**-14): |fl16(s) - s| <= 2**-11 |s| +
    2**-25, so |fl16(s) - ref| <= 2**-11 |ref| + (1 + 2**-11) * bound + 2**-25.
    Every product and sum is an IEEE float64 operation, on the GPU through CuPy where it
    is installed (:func:`_array_module`), else on the host, with the same result.
    """
    xp = _array_module()
    try:
        return _compare(xp, c, a, b_t, prec, rows, accumulator)
    finally:
        if xp is not np:
            xp.get_default_memory_pool().free_all_blocks()


def _compare(xp, c, a, b_t, prec: Precision, rows, accumulator) -> CheckResult:
    row_ids = np.arange(c.shape[0]) if rows is None else np.asarray(rows)
    a, b_t = xp.asarray(a), xp.asarray(b_t)  # a and b_t may be on the GPU already (CuPy)
    if rows is not None:
        c, a = c[row_ids], a[xp.asarray(row_ids)]
    ref = a @ b_t.T
    diff = xp.abs(xp.asarray(c).astype(np.float64) - ref)
    diff[xp.isnan(diff)] = np.inf
    if prec.exact:
        bad = diff != 0
        tol = "exact"
    elif accumulator == "f16":
        bad = diff != 0
        tol = "exact (FP16 accumulation of integers in {-1, 0, 1})"
    else:
        kdim = a.shape[1]
        gamma = fp32_gamma(kdim)
        bound = gamma * (xp.abs(a) @ xp.abs(b_t).T)
        tol = f"|C-ref| <= gamma_K*(|A||B|), gamma_K={gamma:.3e} (K={kdim}, u=2^-23)"
        if c.dtype == np.float16:
            bound = 2.0**-11 * xp.abs(ref) + (1 + 2.0**-11) * bound + 2.0**-25
            tol = (f"|C-ref| <= 2^-11|ref| + (1+2^-11)*gamma_K*(|A||B|) + 2^-25, gamma_K={gamma:.3e} "
                   f"(K={kdim}, u=2^-23; FP16 C)")
        bad = diff > bound
    norm = float(xp.linalg.norm(ref))
    finite = bool(xp.all(xp.isfinite(diff)))
    fro = float(xp.linalg.norm(xp.where(xp.isfinite(diff), diff, 0.0))) / norm if norm else 0.0
    if not finite:
        fro = float("inf")
    bad_count = int(xp.count_nonzero(bad))
    first = None
    if bad_count:
        r, col = divmod(int(xp.argmax(bad.ravel())), c.shape[1])
        first = (int(row_ids[r]), col)
    return CheckResult(passed=bad_count == 0, max_abs_error=float(diff.max()),
                       rel_fro_error=fro, tolerance=tol, bad_count=bad_count,
                       first_bad=first)
