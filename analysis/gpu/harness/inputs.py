"""Random GEMM inputs of each precision, the float64 reference product and the rows sampled for a check."""

from __future__ import annotations

import numpy as np

from analysis.precision import Precision


#: Accumulators a kernel may declare (registry ``accumulator``); None = the precision's own
#: (FP32 for FP16 inputs, INT32 for integers).
ACCUMULATORS = (None, "f16")
#: Layouts of B in global memory (registry ``b_layout``): ``col`` = N rows of K elements,
#: ``row`` = K rows of N elements.
B_LAYOUTS = ("col", "row")


def _pack_int4(v: np.ndarray) -> np.ndarray:
    """INT4 values (R, C) int8 -> (R, C/2) uint8, two per byte along C, the lower column in
    the low nibble."""
    return ((v[:, 0::2] & 0xF) | ((v[:, 1::2] & 0xF) << 4)).astype(np.uint8)


def make_inputs(prec: Precision, m: int, n: int, k: int, rng, *,
                accumulator: str | None = None, b_layout: str = "col", xp=np):
    """Random A (M x K) and B (K x N) as device bytes plus their values.

    Args:
        prec: input precision; INT8 values in [-128, 127], INT4 in [-8, 7], FP16 uniform
            in [-1, 1].
        rng: the generator the values are drawn from: ``numpy.random.default_rng(seed)``
            (PCG64) for NumPy arrays, ``cupy.random.default_rng(seed)`` (XORWOW) with
            ``xp=cupy`` (:func:`device_rng`). One seed gives other values under each.
        accumulator: ``"f16"`` draws FP16 integers in {-1, 0, 1} instead, so that every
            partial sum of an FP16 accumulation is an exactly representable integer (FP16
            holds every integer up to 2048 in magnitude; a random walk of K <= 8192 such
            terms passes 2048 with probability below 1e-100 by Hoeffding's inequality).
        b_layout: ``"col"`` uploads B as N rows of K elements, ``"row"`` as K rows of N.
        xp: the array module, ``numpy`` (arrays on the host) or ``cupy`` (drawn and kept on
            the GPU: at M = N = K = 8192 drawing FP16 inputs and their float64 copies on the
            host took seconds per N, docs/gpu-benchmarks.md).

    Returns:
        (a_bytes, b_bytes, a_vals, b_vals): the byte images uploaded to the GPU (INT4 packed
        two per byte along the contiguous dimension, low nibble first) and the values as
        float64 arrays for the reference, A (M, K) and B^T (N, K) whatever the layout; all
        four of ``xp``'s array type.

    Raises:
        ValueError: an unknown accumulator or layout, or f16 accumulation for integers.
    """
    if accumulator not in ACCUMULATORS or b_layout not in B_LAYOUTS:
        raise ValueError(f"accumulator {accumulator!r} / b_layout {b_layout!r}: expected one of "
                         f"{ACCUMULATORS} / {B_LAYOUTS}")
    if accumulator == "f16" and prec.name != "fp16":
        raise ValueError(f"FP16 accumulation needs FP16 inputs, not {prec.name}")
    if prec.name == "fp16":
        if accumulator == "f16":
            def draw(rows, cols):
                return rng.integers(-1, 2, size=(rows, cols)).astype(np.float16)
        else:
            def draw(rows, cols):
                return rng.uniform(prec.lo, prec.hi, size=(rows, cols)).astype(np.float16)
    else:
        # CuPy's generator adds the low bound to unsigned draws, which casting to int8 refuses:
        # it draws int64, narrowed after (every value fits)
        wide = np.int8 if xp is np else np.int64

        def draw(rows, cols):
            return rng.integers(prec.lo, prec.hi + 1, size=(rows, cols), dtype=wide).astype(np.int8, copy=False)
    a, b_t = draw(m, k), draw(n, k)
    b_img = b_t if b_layout == "col" else xp.ascontiguousarray(b_t.T)
    a_dev, b_dev = (_pack_int4(a), _pack_int4(b_img)) if prec.name == "int4" else (a, b_img)
    return a_dev, b_dev, a.astype(np.float64), b_t.astype(np.float64)


def gpu_array_module():
    """CuPy where it is installed and sees a GPU, else NumPy (no CuPy, no driver or no device)."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no GPU")
    except Exception:  # no CuPy, no driver or no device: the host
        return np
    return cupy


def device_rng(seed: int):
    """The array module of :func:`gpu_array_module` and its generator seeded with ``seed``:
    ``(cupy, cupy.random.default_rng(seed))`` on a GPU with CuPy, else ``(numpy,
    numpy.random.default_rng(seed))``; what :func:`make_inputs` draws a kernel's inputs with.

    Args:
        seed: 0 <= seed < 2**64 (the harness draws 32-bit seeds).
    """
    xp = gpu_array_module()
    return xp, xp.random.default_rng(seed)


def sample_rows(m: int, block_m: int, rng: np.random.Generator, blocks: int = 2) -> np.ndarray:
    """Rows of C for a sampled check: the first and last block rows of the grid plus
    ``blocks`` random ones (every row residue mod block_m appears), sorted."""
    nblk = m // block_m
    pick = {0, nblk - 1} | set(rng.choice(nblk, size=min(blocks, nblk), replace=False).tolist())
    return np.concatenate([np.arange(b * block_m, (b + 1) * block_m) for b in sorted(pick)])


def matmul_f64(x: np.ndarray, y_t: np.ndarray) -> np.ndarray:
    """``x @ y_t.T`` in float64: x (M, K) and y_t (N, K) float64 -> (M, N) float64.

    Computed on the GPU (CuPy, i.e. cuBLAS DGEMM) when CuPy is installed and sees a GPU,
    else by NumPy on the CPU (tens of seconds at M = N = K = 8192). Either way every
    product and partial sum is an IEEE float64 operation, so integer inputs whose partial
    sums stay below 2**53 give the exact integer result in any summation order.
    """
    cupy = gpu_array_module()
    if cupy is np:  # no CuPy, no driver or no device: the CPU path
        return x @ y_t.T
    try:
        return cupy.asnumpy(cupy.asarray(x) @ cupy.asarray(y_t).T)
    finally:
        cupy.get_default_memory_pool().free_all_blocks()
