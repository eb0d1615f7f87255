"""A Triton GEMM as a reference beside the vendor libraries: FP16 (FP32 accumulation, FP16
out) and INT8 (INT32 accumulation and out), in the layouts of this project's kernels (A
row-major M x K, B given as its N x K transpose, i.e. column-major K x N), autotuned at each
N over the small stated space :data:`CONFIGS` with Triton's own ``triton.autotune``.

The space holds the block shapes torch's max-autotune tries for large square GEMMs (128 x
256 and 256 x 128 blocks with 64-half or 128-byte K steps, 3 or 4 stages, 8 warps, and
128 x 128 with 4 warps), plain loads (no TMA, no persistent grid), grouped block order
(8 block rows). Triton is optional: where it is not installed :func:`triton_available`
says so in one line and no Triton reference is measured.
"""

from __future__ import annotations

import functools

#: The autotuned space per precision: (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps).
#: BLOCK_K is in elements (64 halves = 128 bytes; 128 int8 = 128 bytes).
CONFIGS = {
    "fp16": [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 4),
             (128, 128, 64, 3, 8), (64, 256, 64, 4, 4)],
    "int8": [(128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (128, 256, 128, 4, 8), (128, 128, 128, 4, 4),
             (128, 128, 128, 3, 8), (128, 256, 64, 4, 8)],
}
#: Block rows per group of the grouped block order.
GROUP_M = 8


def triton_available() -> tuple[object | None, str]:
    """(the ``triton`` module, '') or (None, why there is no Triton reference)."""
    try:
        import triton
    except ImportError:
        return None, "Triton is not installed: no Triton reference (pip install triton)"
    return triton, ""


@functools.lru_cache(maxsize=None)
def _kernel(prec_name: str):
    """The autotuned Triton kernel of ``prec_name`` (built on first use)."""
    import triton
    import triton.language as tl

    configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_stages=st, num_warps=w)
               for bm, bn, bk, st, w in CONFIGS[prec_name]]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def gemm(a_ptr, b_ptr, c_ptr, M, N, K, INTEGER: tl.constexpr, GROUP: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        blocks_m, blocks_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        group = pid // (GROUP * blocks_n)
        first_m = group * GROUP
        rows = tl.minimum(blocks_m - first_m, GROUP)
        pid_m = first_m + (pid % (GROUP * blocks_n)) % rows
        pid_n = (pid % (GROUP * blocks_n)) // rows
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a = a_ptr + rm[:, None] * K + rk[None, :]  # A: M x K row-major
        b = b_ptr + rn[None, :] * K + rk[:, None]  # B: its N x K transpose, row-major
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32 if INTEGER else tl.float32)
        for _ in range(0, K, BLOCK_K):
            if INTEGER:
                acc += tl.dot(tl.load(a), tl.load(b), out_dtype=tl.int32)
            else:
                acc += tl.dot(tl.load(a), tl.load(b))
            a += BLOCK_K
            b += BLOCK_K
        c = c_ptr + rm[:, None] * N + rn[None, :]
        if INTEGER:
            tl.store(c, acc)
        else:
            tl.store(c, acc.to(tl.float16))

    return gemm


def triton_launch(torch, prec_name: str, a, b_t):
    """(launch, out, what): a callable that enqueues the autotuned Triton GEMM of
    ``prec_name`` on PyTorch's current stream for device tensors ``a`` (M x K) and ``b_t``
    (N x K), the output tensor it writes, and a description (the configuration the
    autotuner chose, after one call, and the dtypes in and out, as the library rows state them).

    Raises:
        ValueError: M, N or K not a multiple of 256 (the kernel has no masks).
    """
    m, k = a.shape
    n = b_t.shape[0]
    if m % 256 or n % 256 or k % 256:
        raise ValueError(f"Triton reference: M, N, K = {m}, {n}, {k}; multiples of 256 only (no masked tiles)")
    gemm = _kernel(prec_name)
    out = torch.empty((m, n), device=a.device, dtype=torch.int32 if prec_name == "int8" else torch.float16)

    def grid(meta):
        return (-(-m // meta["BLOCK_M"]) * -(-n // meta["BLOCK_N"]),)

    def launch():
        gemm[grid](a, b_t, out, m, n, k, INTEGER=prec_name == "int8", GROUP=GROUP_M)

    launch()  # autotune at this shape
    best = gemm.best_config
    import triton

    what = (f"Triton {triton.__version__} GEMM, autotuned over {len(CONFIGS[prec_name])} configurations "
            f"(analysis.gpu.triton_gemm.CONFIGS), chose {best.kwargs['BLOCK_M']} x {best.kwargs['BLOCK_N']} x "
            f"{best.kwargs['BLOCK_K']}, {best.num_stages} stages, {best.num_warps} warps; "
            + ("INT8 in, INT32 out" if prec_name == "int8" else "FP16 in, FP32 accumulate, FP16 out"))
    return launch, out, what
