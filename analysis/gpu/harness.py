"""Load a kernel's cubin, check it against a float64 reference and time it with CUDA events.

Runs on the CUDA driver API through cuda-python (``cuda.bindings.driver``); needs a GPU.
Command line (used by the workflow, and under ``ncu`` for profiling):

    python -m analysis.gpu.harness check-time --cubin K.cubin --kernel K --precision int8 --n 4096 --out K.json
    python -m analysis.gpu.harness profile    --cubin K.cubin --kernel K --precision int8 --n 512 1024 4096

Inputs are uniform random integers (INT8 in [-128, 127], INT4 in [-8, 7]) or uniform
random FP16 values in [-1, 1], drawn fresh for every run from a recorded seed; C is
poisoned before every checked launch so an unwritten element fails the check. A kernel
with FP16 accumulators (``--accumulator f16``) gets random FP16 integers in {-1, 0, 1}
instead and must match exactly; one that reads B row-major (``--b-layout row``) gets the
same values with B stored K x N.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from analysis.errors import CheckFailedError, ConfigError
from analysis.io import write_json
from analysis.precision import Precision, gemm_ops, precision_of

# C is filled with this 32-bit pattern before a checked launch: a quiet NaN as float32,
# and 2139062143 as int32, beyond the largest |C| an INT8 GEMM with K <= 2**16 can reach
# (128 * 128 * 2**16 = 2**30).
POISON_F32 = 0x7FC0DEAD
POISON_S32 = 0x7F7F7F7F


@dataclass(frozen=True)
class Tiling:
    """Block and warp tiling a kernel was built with (the -D build parameters), and what
    its launch needs: grid (N / block_n, M / block_m), ``threads`` per block and
    ``smem_bytes`` of dynamic shared memory.

    Attributes:
        block_m, block_n: rows and columns of C per thread block.
        block_k_bytes: bytes of K per shared-memory tile row (64 = 32 FP16, 64 INT8 or 128 INT4).
        warps_m, warps_n: the warp grid inside a block; a warp computes
            (block_m / warps_m) x (block_n / warps_n) of C.
        stages: cp.async pipeline depth.
        raster: block rows per group of the grid's rasterisation (1: blocks in plain row
            order; kernels/tuned_gemm.cuh only).
        smem_bytes: dynamic shared memory per block, in bytes (0: the kernel's static shared
            memory only, as every study kernel); the kernel checks at build time that it
            lays out exactly this much.
        producer_warps: warps beside the warps_m x warps_n grid that only load tiles (the
            TMA producer warpgroup of kernels/wgmma_gemm.cuh: 4; 0 for every other kernel).
        arch: the nvcc target the kernel needs instead of the configured architecture
            (``sm_90a`` for the wgmma kernels, set by
            :func:`analysis.workflow.tiling_from_config` from the registry's archs); None
            builds for the configured one. Not part of the harness's ``--tiling``.
    """

    block_m: int = 64
    block_n: int = 32
    block_k_bytes: int = 64
    warps_m: int = 4
    warps_n: int = 2
    stages: int = 2
    raster: int = 1
    smem_bytes: int = 0
    producer_warps: int = 0
    arch: str | None = None

    @property
    def threads(self) -> int:
        """Threads per block: 32 per warp of the warps_m x warps_n grid and per producer warp."""
        return (self.warps_m * self.warps_n + self.producer_warps) * 32

    def grid(self, m: int, n: int) -> tuple[int, int]:
        """The launch grid (x, y) = (N / block_n, M / block_m) for an M x N output."""
        return n // self.block_n, m // self.block_m

    def _extras(self) -> bool:
        return (self.raster, self.smem_bytes) != (1, 0)

    def defines(self) -> list[str]:
        """nvcc -D flags that select this tiling in kernels/gemm_common.cuh (and
        kernels/tuned_gemm.cuh, kernels/wgmma_gemm.cuh); RASTER, SMEM_BYTES and PRODUCER_WARPS
        only where they differ from 1, 0 and 0, so the study kernels build with exactly the
        flags they always had; ``-arch=<arch>`` last where the kernel needs its own target
        (analysis.gpu.build then builds for it instead of the configured architecture)."""
        flags = [f"-DBLOCK_M={self.block_m}", f"-DBLOCK_N={self.block_n}",
                 f"-DBLOCK_K_BYTES={self.block_k_bytes}", f"-DWARPS_M={self.warps_m}",
                 f"-DWARPS_N={self.warps_n}", f"-DSTAGES={self.stages}"]
        if self.raster != 1:
            flags.append(f"-DRASTER={self.raster}")
        if self.smem_bytes:
            flags.append(f"-DSMEM_BYTES={self.smem_bytes}")
        if self.producer_warps:
            flags.append(f"-DPRODUCER_WARPS={self.producer_warps}")
        if self.arch:
            flags.append(f"-arch={self.arch}")
        return flags

    def cli(self) -> str:
        """The ``--tiling`` argument of the harness command line for this tiling: six
        numbers, or eight (raster and smem_bytes appended) where those are not 1 and 0, or
        nine (producer_warps appended) where that is not 0."""
        values = [self.block_m, self.block_n, self.block_k_bytes, self.warps_m, self.warps_n, self.stages]
        if self._extras() or self.producer_warps:
            values += [self.raster, self.smem_bytes]
        if self.producer_warps:
            values.append(self.producer_warps)
        return ",".join(str(v) for v in values)

    @classmethod
    def parse(cls, text: str) -> Tiling:
        """The inverse of :meth:`cli`.

        Raises:
            ConfigError: not six, eight or nine comma-separated integers.
        """
        try:
            values = [int(x) for x in text.split(",")]
        except ValueError:
            values = []
        if len(values) not in (6, 8, 9):
            raise ConfigError(f"--tiling {text!r}: expected block_m,block_n,block_k_bytes,warps_m,warps_n,stages"
                              "[,raster,smem_bytes[,producer_warps]] (six, eight or nine integers)")
        return cls(*values)

    def block_k(self, prec: Precision) -> int:
        """K elements per tile for a precision."""
        return self.block_k_bytes * 8 // prec.bits

    def check_shape(self, kernel: str, prec: Precision, m: int, n: int, k: int) -> None:
        """Refuse sizes the kernel cannot handle, before any launch.

        Raises:
            ConfigError: M, N or K is not a positive multiple of its tile.
        """
        bk = self.block_k(prec)
        for dim, val, tile in (("M", m, self.block_m), ("N", n, self.block_n), ("K", k, bk)):
            if val <= 0 or val % tile:
                raise ConfigError(f"{kernel}: {dim}={val} is not a positive multiple of its tile "
                                  f"{tile} (tiling {self.block_m}x{self.block_n}, K tile {bk})")


#: The __device__ globals a TMA kernel (registry ``tma: true``) reads the tensor maps of A and
#: B from (kernels/wgmma_gemm.cuh); the harness writes them before the first launch.
TMA_GLOBALS = ("wgmma_tma_a", "wgmma_tma_b")
#: Bytes of one CUtensorMap (CUDA driver API, cuTensorMapEncodeTiled: 128 opaque bytes).
TENSOR_MAP_BYTES = 128
#: The shared-memory swizzle of a TMA kernel's tiles, by the bytes of K in a tile row: the
#: row must be exactly as wide as the swizzle's span (CUDA Driver API, CUtensorMapSwizzle:
#: the inner box dimension times the element size at most the span). 128: the wgmma
#: kernels' FP16/INT8 rows (kernels/wgmma_gemm.cuh); 64: packed INT4 rows
#: (kernels/int4_wgmma_unpack_s8.cu).
TMA_SWIZZLES = {64: "CU_TENSOR_MAP_SWIZZLE_64B", 128: "CU_TENSOR_MAP_SWIZZLE_128B"}


@dataclass(frozen=True)
class TensorMapShape:
    """One matrix as a TMA kernel's tensor map sees it: ``rows`` rows of ``row_bytes`` bytes
    (data type UINT8, whatever the precision: the copies move bytes), boxes of ``box_rows``
    rows x ``box_row_bytes`` bytes, swizzled over ``box_row_bytes`` (:data:`TMA_SWIZZLES`)."""

    name: str
    rows: int
    row_bytes: int
    box_rows: int
    box_row_bytes: int


def tensor_map_shapes(kernel: str, prec: Precision, tiling: Tiling, m: int, n: int, k: int
                      ) -> tuple[TensorMapShape, TensorMapShape]:
    """The tensor maps of A (M rows of K) and B (N rows of K, column-major) for a TMA kernel,
    after checking every requirement cuTensorMapEncodeTiled states for them (CUDA Driver
    API, "Tensor Map Object Management": global address 16-byte aligned, which cuMemAlloc
    gives; globalDim in [1, 2**32]; globalStrides multiples of 16 below 2**40; boxDim in
    [1, 256]; the inner box dimension times the element size a multiple of 16 bytes and,
    with a swizzle, at most its span) and what the kernels assume (a K-tile row exactly as
    wide as one of :data:`TMA_SWIZZLES`, each dimension a multiple of its box).

    Raises:
        ConfigError: a shape or tiling the tensor maps cannot describe, saying which.
    """
    tiling.check_shape(kernel, prec, m, n, k)
    k_bytes = k * prec.bits // 8
    if tiling.block_k_bytes not in TMA_SWIZZLES:
        raise ConfigError(f"{kernel}: a TMA kernel's K tile must be {' or '.join(map(str, TMA_SWIZZLES))} bytes "
                          f"(a swizzle's span), not block_k_bytes={tiling.block_k_bytes}")
    if k_bytes % 16:
        raise ConfigError(f"{kernel}: K={k} gives rows of {k_bytes} bytes; a tensor map's row stride must be "
                          "a multiple of 16 bytes")
    shapes = (TensorMapShape("A", m, k_bytes, tiling.block_m, tiling.block_k_bytes),
              TensorMapShape("B", n, k_bytes, tiling.block_n, tiling.block_k_bytes))
    for sh in shapes:
        if not 1 <= sh.box_rows <= 256:
            raise ConfigError(f"{kernel}: the {sh.name} box has {sh.box_rows} rows; a TMA box has 1 to 256")
        if sh.rows > 2**32 or sh.row_bytes > 2**32 or sh.row_bytes >= 2**40:
            raise ConfigError(f"{kernel}: {sh.name} ({sh.rows} x {sh.row_bytes} bytes) exceeds a tensor "
                              "map's 2**32 elements per dimension")
    return shapes


def _encode_tensor_map(cu, ptr, shape: TensorMapShape) -> np.ndarray:
    """cuTensorMapEncodeTiled of one matrix at device address ``ptr``: the 128 bytes to copy
    into the kernel's global (as 16 uint64)."""
    tmap = _check(cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8, cu.cuuint32_t(2), int(ptr),
        [cu.cuuint64_t(shape.row_bytes), cu.cuuint64_t(shape.rows)], [cu.cuuint64_t(shape.row_bytes)],
        [cu.cuuint32_t(shape.box_row_bytes), cu.cuuint32_t(shape.box_rows)], [cu.cuuint32_t(1), cu.cuuint32_t(1)],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(cu.CUtensorMapSwizzle, TMA_SWIZZLES[shape.box_row_bytes]),
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), f"cuTensorMapEncodeTiled({shape.name})")
    return np.array([int(v) for v in tmap.opaque], dtype=np.uint64)


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


@dataclass
class Timing:
    """Event timings of repeated launches, in ns (cuEventElapsedTime, ~0.5 us resolution)."""

    warmups: int
    repeats: int
    samples_ns: list[float] = field(repr=False)
    gated: bool = False

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    def quantile_ns(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.samples_ns), q))


def _check(res: tuple, what: str):
    """Unwrap a cuda-python return tuple, raising RuntimeError with the CUDA error name."""
    from cuda.bindings import driver as cu

    err, *rest = res
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"{what} failed: {name.decode() if name else err}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


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


def make_inputs(prec: Precision, m: int, n: int, k: int, rng: np.random.Generator, *,
                accumulator: str | None = None, b_layout: str = "col"):
    """Random A (M x K) and B (K x N) as device bytes plus their values.

    Args:
        prec: input precision; INT8 values in [-128, 127], INT4 in [-8, 7], FP16 uniform
            in [-1, 1].
        accumulator: ``"f16"`` draws FP16 integers in {-1, 0, 1} instead, so that every
            partial sum of an FP16 accumulation is an exactly representable integer (FP16
            holds every integer up to 2048 in magnitude; a random walk of K <= 8192 such
            terms passes 2048 with probability below 1e-100 by Hoeffding's inequality).
        b_layout: ``"col"`` uploads B as N rows of K elements, ``"row"`` as K rows of N.

    Returns:
        (a_bytes, b_bytes, a_vals, b_vals): the byte images uploaded to the GPU (INT4 packed
        two per byte along the contiguous dimension, low nibble first) and the values as
        float64 arrays for the reference, A (M, K) and B^T (N, K) whatever the layout.

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
            draw = lambda rows, cols: rng.integers(-1, 2, size=(rows, cols)).astype(np.float16)  # noqa: E731
        else:
            draw = lambda rows, cols: rng.uniform(prec.lo, prec.hi, size=(rows, cols)).astype(np.float16)  # noqa: E731
        a, b_t = draw(m, k), draw(n, k)
    else:
        a = rng.integers(prec.lo, prec.hi + 1, size=(m, k), dtype=np.int8)
        b_t = rng.integers(prec.lo, prec.hi + 1, size=(n, k), dtype=np.int8)
    b_img = b_t if b_layout == "col" else np.ascontiguousarray(b_t.T)
    a_dev, b_dev = (_pack_int4(a), _pack_int4(b_img)) if prec.name == "int4" else (a, b_img)
    return a_dev, b_dev, a.astype(np.float64), b_t.astype(np.float64)


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
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no GPU")
    except Exception:  # no CuPy, no driver or no device: the CPU path
        return x @ y_t.T
    try:
        return cupy.asnumpy(cupy.asarray(x) @ cupy.asarray(y_t).T)
    finally:
        cupy.get_default_memory_pool().free_all_blocks()


def fp32_accumulation_bound(a: np.ndarray, b_t: np.ndarray) -> tuple[float, np.ndarray]:
    """Elementwise error bound of an FP32-accumulated A @ B for float64 A (M, K), B^T (N, K):
    (gamma_K, gamma_K * (|A| @ |B|)) with gamma_K = K*u / (1 - K*u) and u = 2**-23 (Higham,
    Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5, any summation order;
    u doubled from 2**-24 to cover truncating accumulators)."""
    kdim = a.shape[1]
    gamma = kdim * 2.0**-23 / (1 - kdim * 2.0**-23)
    return gamma, gamma * matmul_f64(np.abs(a), np.abs(b_t))


def primary_context(cu):
    """Make device 0's primary context current (the one CuPy and PyTorch use too); returns
    the device. Raises RuntimeError naming the failed CUDA call."""
    _check(cu.cuInit(0), "cuInit")
    dev = _check(cu.cuDeviceGet(0), "cuDeviceGet")
    _check(cu.cuCtxSetCurrent(_check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")),
           "cuCtxSetCurrent")
    return dev


def compare(c: np.ndarray, a: np.ndarray, b_t: np.ndarray, prec: Precision,
            rows: np.ndarray | None = None, accumulator: str | None = None) -> CheckResult:
    """Compare the kernel's C with the float64 product A @ B.

    Args:
        c: the kernel's output, (M, N) float32 or int32.
        a, b_t: the inputs as float64, A (M, K) and B^T (N, K).
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
    """
    row_ids = np.arange(c.shape[0]) if rows is None else np.asarray(rows)
    if rows is not None:
        c, a = c[row_ids], a[row_ids]
    ref = matmul_f64(a, b_t)
    c64 = c.astype(np.float64)
    diff = np.abs(c64 - ref)
    diff[np.isnan(diff)] = np.inf
    if prec.exact:
        bad = diff != 0
        tol = "exact"
    elif accumulator == "f16":
        bad = diff != 0
        tol = "exact (FP16 accumulation of integers in {-1, 0, 1})"
    else:
        kdim = a.shape[1]
        gamma, bound = fp32_accumulation_bound(a, b_t)
        bad = diff > bound
        tol = f"|C-ref| <= gamma_K*(|A||B|), gamma_K={gamma:.3e} (K={kdim}, u=2^-23)"
    norm = float(np.linalg.norm(ref))
    fro = float(np.linalg.norm(np.where(np.isfinite(diff), diff, 0.0))) / norm if norm else 0.0
    if not np.all(np.isfinite(diff)):
        fro = float("inf")
    bad_idx = np.flatnonzero(bad)
    first = None
    if bad_idx.size:
        r, col = divmod(int(bad_idx[0]), c.shape[1])
        first = (int(row_ids[r]), col)
    return CheckResult(passed=bad_idx.size == 0, max_abs_error=float(diff.max()),
                       rel_fro_error=fro, tolerance=tol, bad_count=int(bad_idx.size),
                       first_bad=first)


def _gate(cu):
    """A host-memory flag a stream can wait on (cuStreamWaitValue32), or None where the
    driver refuses mapped host memory."""
    try:
        host = _check(cu.cuMemHostAlloc(4, cu.CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc")
        dev = _check(cu.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer")
    except RuntimeError:
        return None
    ctypes.c_uint32.from_address(int(host)).value = 0
    return host, dev


def time_launches(stream, launch, warmups: int, repeats: int, chunk: int = 100) -> Timing:
    """Event timings of ``repeats`` calls of ``launch`` after ``warmups`` untimed ones; each
    call is bracketed by its own pair of events recorded on ``stream``.

    Args:
        stream: the CUstream (or its integer handle) that ``launch`` enqueues work on, in the
            current context.
        launch: a callable enqueuing one launch (asynchronously) on ``stream``.

    The launches of a chunk are enqueued behind a stream wait on a host flag
    (cuStreamWaitValue32) that is released only once the whole chunk is queued, so the
    GPU runs them back to back and an event pair measures the kernel, not the host's
    launch latency (which exceeds the kernel's time at small N). Chunks of at most
    ``chunk`` launches keep the queue far from full. Without stream memory operations
    the launches are timed ungated, and ``Timing.gated`` says so.

    Raises:
        RuntimeError: a CUDA call failed (the message names it).
    """
    from cuda.bindings import driver as cu

    stream = stream if isinstance(stream, cu.CUstream) else cu.CUstream(int(stream))
    for _ in range(warmups):
        launch()
    _check(cu.cuStreamSynchronize(stream), "warm-up launches")
    gate = _gate(cu)
    events = [(_check(cu.cuEventCreate(0), "cuEventCreate"), _check(cu.cuEventCreate(0), "cuEventCreate"))
              for _ in range(repeats)]
    for c0 in range(0, repeats, chunk):
        if gate is not None:
            try:
                _check(cu.cuStreamWaitValue32(stream, gate[1], c0 // chunk + 1,
                                              cu.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ),
                       "cuStreamWaitValue32")
            except RuntimeError:
                cu.cuMemFreeHost(gate[0])
                gate = None
        for start, end in events[c0: c0 + chunk]:
            _check(cu.cuEventRecord(start, stream), "cuEventRecord")
            launch()
            _check(cu.cuEventRecord(end, stream), "cuEventRecord")
        if gate is not None:
            ctypes.c_uint32.from_address(int(gate[0])).value = c0 // chunk + 1
        _check(cu.cuStreamSynchronize(stream), "timed launches")
    samples = [1e6 * _check(cu.cuEventElapsedTime(s, e), "cuEventElapsedTime") for s, e in events]
    for s, e in events:
        cu.cuEventDestroy(s)
        cu.cuEventDestroy(e)
    gated = gate is not None
    if gate is not None:
        cu.cuMemFreeHost(gate[0])
    return Timing(warmups, repeats, samples, gated)


class GemmRunner:
    """One kernel from one cubin, with device buffers for an M x N x K problem.

    Args:
        cubin: path of the cubin built for this GPU's architecture.
        kernel: the kernel's (extern "C") name in the cubin.
        precision: ``fp16``, ``int8`` or ``int4``.
        tiling: the tiling the cubin was built with (grid = (N/block_n, M/block_m)).
        m, n, k: problem size in elements; refused with ConfigError if not tileable.
        seed: seed of the random inputs.
        accumulator, b_layout: the kernel's accumulator and B layout (see :func:`make_inputs`).
        tma: the kernel reads A and B through tensor maps in its globals :data:`TMA_GLOBALS`
            (registry ``tma: true``), which the runner encodes (:func:`tensor_map_shapes`) and
            writes once the inputs are on the device (B column-major only).
        inputs: what :func:`make_inputs` returned for this precision, size, accumulator and
            layout, to run on instead of drawing new ones from ``seed`` (a kernel timed in
            pairs with a library GEMM runs on the library's inputs; :mod:`analysis.gpu.paired`).

    Raises:
        ConfigError: the size does not tile, or the tensor maps cannot describe it;
        RuntimeError: a CUDA call failed.
    """

    def __init__(self, cubin: Path, kernel: str, precision: str, tiling: Tiling,
                 m: int, n: int, k: int, seed: int, *, accumulator: str | None = None,
                 b_layout: str = "col", tma: bool = False, inputs: tuple | None = None) -> None:
        from cuda.bindings import driver as cu

        self.cu = cu
        self.kernel, self.prec, self.tiling = kernel, precision_of(precision), tiling
        self.accumulator = accumulator
        self.m, self.n, self.k, self.seed = m, n, k, seed
        tiling.check_shape(kernel, self.prec, m, n, k)
        tma_shapes = tensor_map_shapes(kernel, self.prec, tiling, m, n, k) if tma else None
        if tma and b_layout != "col":
            raise ConfigError(f"{kernel}: the TMA kernels read B column-major (N rows of K), not b_layout={b_layout}")
        # inputs first: a refused accumulator or layout raises before any CUDA resource exists
        if inputs is None:
            inputs = make_inputs(self.prec, m, n, k, np.random.default_rng(seed), accumulator=accumulator,
                                 b_layout=b_layout)
        elif inputs[2].shape != (m, k) or inputs[3].shape != (n, k):
            raise ConfigError(f"{kernel}: inputs of A {inputs[2].shape} and B^T {inputs[3].shape} given for "
                              f"M={m} N={n} K={k}")
        a_dev, b_dev, self.a_ref, self.b_ref = inputs
        dev = primary_context(cu)
        self.module = _check(cu.cuModuleLoadData(Path(cubin).read_bytes()), f"cuModuleLoadData({cubin})")
        self.func = _check(cu.cuModuleGetFunction(self.module, kernel.encode()),
                           f"cuModuleGetFunction({kernel})")
        if tiling.smem_bytes:
            self._allow_dynamic_smem(dev)
        self.stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")

        self.c_bytes = m * n * 4
        self.d_a = self._upload(a_dev)
        self.d_b = self._upload(b_dev)
        self.d_c = _check(cu.cuMemAlloc(self.c_bytes), "cuMemAlloc(C)")
        if tma_shapes:
            self._write_tensor_maps(tma_shapes)
        # kernelParams: an array of pointers to each argument's value.
        self._argv = [np.array([int(self.d_a)], np.uint64), np.array([int(self.d_b)], np.uint64),
                      np.array([int(self.d_c)], np.uint64), np.array([m], np.int32),
                      np.array([n], np.int32), np.array([k], np.int32)]
        self._params = np.array([v.ctypes.data for v in self._argv], dtype=np.uint64)

    def _allow_dynamic_smem(self, dev) -> None:
        """Raise the kernel's dynamic shared-memory limit to ``tiling.smem_bytes`` (a launch
        asking for more than 48 KiB fails without it).

        Raises:
            ConfigError: the device allows less per block (the module is unloaded first).
        """
        cu, want = self.cu, self.tiling.smem_bytes
        optin = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
            "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
        static = _check(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                              self.func), "cuFuncGetAttribute(SHARED_SIZE_BYTES)")
        if want + static > optin:
            cu.cuModuleUnload(self.module)
            raise ConfigError(f"{self.kernel}: {want} bytes of dynamic (+ {static} static) shared memory per "
                              f"block, this GPU allows {optin}")
        _check(cu.cuFuncSetAttribute(self.func,
                                     cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     want), f"cuFuncSetAttribute({self.kernel}, MAX_DYNAMIC_SHARED_SIZE_BYTES)")

    def _write_tensor_maps(self, shapes: tuple[TensorMapShape, TensorMapShape]) -> None:
        """Encode the tensor maps of A and B and copy them into the module's globals
        :data:`TMA_GLOBALS` (synchronous copies: they are in place before any launch).

        Raises:
            RuntimeError: the module lacks a global, or it is not a tensor map's size.
        """
        cu = self.cu
        for name, shape, ptr in zip(TMA_GLOBALS, shapes, (self.d_a, self.d_b)):
            dptr, size = _check(cu.cuModuleGetGlobal(self.module, name.encode()), f"cuModuleGetGlobal({name})")
            if size != TENSOR_MAP_BYTES:
                raise RuntimeError(f"{self.kernel}: global {name} holds {size} bytes, a tensor map {TENSOR_MAP_BYTES}")
            raw = _encode_tensor_map(cu, ptr, shape)
            _check(cu.cuMemcpyHtoD(dptr, raw.ctypes.data, TENSOR_MAP_BYTES), f"cuMemcpyHtoD({name})")

    def _upload(self, host: np.ndarray):
        host = np.ascontiguousarray(host)
        ptr = _check(self.cu.cuMemAlloc(host.nbytes), "cuMemAlloc")
        _check(self.cu.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
        return ptr

    def poison(self) -> None:
        """Fill C with the poison pattern (NaN for FP32 C, an unreachable value for INT32)."""
        pattern = POISON_F32 if self.prec.c_dtype == np.float32 else POISON_S32
        _check(self.cu.cuMemsetD32Async(self.d_c, pattern, self.m * self.n, self.stream), "cuMemsetD32")

    def launch(self) -> None:
        """Enqueue one launch on the runner's stream (asynchronous)."""
        t = self.tiling
        gx, gy = t.grid(self.m, self.n)
        _check(self.cu.cuLaunchKernel(self.func, gx, gy, 1, t.threads, 1, 1, t.smem_bytes, self.stream,
                                      self._params.ctypes.data, 0),
               f"cuLaunchKernel({self.kernel})")

    def sync(self) -> None:
        _check(self.cu.cuStreamSynchronize(self.stream), f"{self.kernel} execution")

    def result(self) -> np.ndarray:
        """C copied back to the host, shape (M, N), float32 or int32."""
        out = np.empty((self.m, self.n), dtype=self.prec.c_dtype)
        _check(self.cu.cuMemcpyDtoH(out.ctypes.data, self.d_c, self.c_bytes), "cuMemcpyDtoH")
        return out

    def check(self, rows: np.ndarray | None = None, *, profiled: bool = False) -> CheckResult:
        """Poison C, launch once, compare with the float64 reference (all of C, or ``rows``).
        ``profiled``: the launch runs between ``cuProfilerStart`` and ``cuProfilerStop``, so
        that it is the one a profiler started with ``--profile-from-start off`` keeps."""
        self.poison()
        if profiled:
            _check(self.cu.cuProfilerStart(), "cuProfilerStart")
        try:
            self.launch()
            self.sync()
        finally:
            if profiled:
                _check(self.cu.cuProfilerStop(), "cuProfilerStop")
        return compare(self.result(), self.a_ref, self.b_ref, self.prec, rows, self.accumulator)

    def time(self, warmups: int, repeats: int, chunk: int = 100) -> Timing:
        """Event timings of this kernel's launches (see :func:`time_launches`)."""
        return time_launches(self.stream, self.launch, warmups, repeats, chunk)

    def close(self) -> None:
        for p in (self.d_a, self.d_b, self.d_c):
            self.cu.cuMemFree(p)
        self.cu.cuModuleUnload(self.module)
        self.cu.cuStreamDestroy(self.stream)


def check_and_time(cubin: Path, kernel: str, precision: str, n: int, tiling: Tiling,
                   warmups: int, repeats: int, seed: int, *, accumulator: str | None = None,
                   b_layout: str = "col", tma: bool = False) -> dict:
    """Check one kernel at M = N = K = n, then time it; returns the record written to JSON.
    ``accumulator`` and ``b_layout`` describe the kernel (see :func:`make_inputs`), ``tma``
    its tensor maps (see :class:`GemmRunner`).

    The record holds kernel, precision, n, seed, check outcome (max_abs_error, rel_fro_error,
    tolerance), timing (median/min/p25/p75/max in ns, warmups, repeats) and throughput
    (2*N^3 / median, in TFLOP/s for FP16 or TOP/s for INT8/INT4); ``gated`` tells whether
    the launches ran back to back behind a stream gate (see :meth:`GemmRunner.time`).

    Raises:
        CheckFailedError: the output is wrong; the message has the largest error and the
            first bad (row, col). No timing is taken then.
    """
    run = GemmRunner(cubin, kernel, precision, tiling, n, n, n, seed, accumulator=accumulator,
                     b_layout=b_layout, tma=tma)
    try:
        chk = run.check()
        if not chk.passed:
            raise CheckFailedError(
                f"{kernel} N={n}: {chk.bad_count} of {n * n} elements outside tolerance "
                f"({chk.tolerance}); max |C-ref| = {chk.max_abs_error:g}, first bad (row, col) = "
                f"{chk.first_bad}, seed {seed}")
        tim = run.time(warmups, repeats)
    finally:
        run.close()
    ops = gemm_ops(n, n, n)
    med = tim.median_ns
    return {
        "kernel": kernel, "precision": precision, "n": n, "seed": seed,
        "accumulator": accumulator, "b_layout": b_layout,
        "check": asdict(chk),
        "warmups": tim.warmups, "repeats": tim.repeats, "gated": tim.gated,
        "median_ns": med, "min_ns": min(tim.samples_ns), "p25_ns": tim.quantile_ns(0.25),
        "p75_ns": tim.quantile_ns(0.75), "max_ns": max(tim.samples_ns),
        "ops": ops, "throughput": ops / med / 1e3, "throughput_unit": run.prec.throughput_unit,
        "samples_ns": tim.samples_ns,
    }


def profile_target(cubin: Path, kernel: str, precision: str, n: int, tiling: Tiling,
                   warmups: int, seed: int, *, accumulator: str | None = None,
                   b_layout: str = "col", tma: bool = False) -> CheckResult:
    """The program ncu profiles, for one N: ``warmups`` launches, then one launch between
    ``cuProfilerStart`` and ``cuProfilerStop`` (the one ncu keeps, run with
    ``--profile-from-start off``), whose output is then checked on the rows of
    :func:`sample_rows` (the full check ran before, in check-time mode; the sample keeps
    the float64 reference off the profiling job's critical path at large N). Called once
    per N in one process, it gives one report with one launch per N, in call order.

    Raises:
        CheckFailedError: the profiled launch's output is wrong.
        RuntimeError: a CUDA call failed.
    """
    run = GemmRunner(cubin, kernel, precision, tiling, n, n, n, seed, accumulator=accumulator,
                     b_layout=b_layout, tma=tma)
    try:
        for _ in range(warmups):
            run.launch()
        run.sync()
        chk = run.check(sample_rows(n, tiling.block_m, np.random.default_rng(seed)), profiled=True)
    finally:
        run.close()
    if not chk.passed:
        raise CheckFailedError(f"{kernel} N={n}: profiled launch wrong: max |C-ref| = "
                               f"{chk.max_abs_error:g}, first bad (row, col) = {chk.first_bad}")
    return chk


def command(mode: str, cubin: Path | str, kernel: str, precision: str, n: int | str | Sequence[int | str],
            tiling: Tiling, **options: object) -> list[str]:
    """The harness command line (``python -m analysis.gpu.harness ...``) for one kernel and one
    N, or several (one process runs them in turn: check-time mode writes one record per N
    to ``out`` with ``{n}`` replaced, profile mode profiles one launch per N); ``options`` become ``--name value`` with ``_`` in names as ``-`` (e.g. warmups=3,
    out=path, b_layout="row"); options whose value is None or False are left out, and one
    whose value is True is a bare flag (tma=True: ``--tma``)."""
    cmd = [sys.executable, "-m", "analysis.gpu.harness", mode, "--cubin", str(cubin), "--kernel", kernel,
           "--precision", precision, "--n", *(str(v) for v in ([n] if isinstance(n, (int, str)) else n)),
           "--tiling", tiling.cli()]
    for name, value in options.items():
        if value is True:
            cmd.append(f"--{name.replace('_', '-')}")
        elif value is not None and value is not False:
            cmd += [f"--{name.replace('_', '-')}", str(value)]
    return cmd


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m analysis.gpu.harness", description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["check-time", "profile"])
    p.add_argument("--cubin", type=Path, required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--precision", required=True, choices=["fp16", "int8", "int4"])
    p.add_argument("--n", type=int, nargs="+", required=True,
                   help="M = N = K; several: one record each (check-time, --out with {n}), "
                        "one profiled launch each, in this order (profile)")
    p.add_argument("--tiling", default="64,32,64,4,2,2",
                   help="block_m,block_n,block_k_bytes,warps_m,warps_n,stages[,raster,smem_bytes[,producer_warps]]")
    p.add_argument("--warmups", type=int, default=10)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--seed", type=int, default=None, help="default: fresh from os.urandom")
    p.add_argument("--out", help="JSON record (check-time mode); {n} in it is replaced by N")
    p.add_argument("--accumulator", choices=[a for a in ACCUMULATORS if a],
                   help="f16: the kernel accumulates in FP16 (default: the precision's own)")
    p.add_argument("--b-layout", choices=B_LAYOUTS, default="col",
                   help="B in global memory: col = N rows of K (default), row = K rows of N")
    p.add_argument("--tma", action="store_true",
                   help="the kernel reads A and B through tensor maps the harness writes (wgmma kernels)")
    args = p.parse_args(argv)
    try:
        tiling = Tiling.parse(args.tiling)
    except ConfigError as exc:
        p.error(str(exc))
    if len(args.n) > 1 and args.out and "{n}" not in args.out:
        p.error("with several --n, --out must contain {n} (one record per N)")
    if args.out and args.mode == "profile":
        p.error("--out is for check-time mode (ncu writes the profile mode's report)")
    if len(set(args.n)) != len(args.n):
        p.error(f"--n {' '.join(map(str, args.n))}: an N given twice")
    try:  # every N before any CUDA work, so that a bad one leaves no record of the others
        for n in args.n:
            tiling.check_shape(args.kernel, precision_of(args.precision), n, n, n)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from analysis.gpu.device import detect_gpu

    if detect_gpu() is None:
        print("error: no NVIDIA GPU with a working driver (cuInit failed or found no device); the harness "
              "runs kernels, so it needs one", file=sys.stderr)
        return 1
    try:
        for n in args.n:
            # a fresh seed per N unless one is given (then every N uses it)
            seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
            t0 = time.perf_counter()
            if args.mode == "check-time":
                rec = check_and_time(args.cubin, args.kernel, args.precision, n, tiling,
                                     args.warmups, args.repeats, seed, accumulator=args.accumulator,
                                     b_layout=args.b_layout, tma=args.tma)
                rec["tiling"] = asdict(tiling)
                if args.out:
                    write_json(Path(args.out.replace("{n}", str(n))), rec)
                print(f"{args.kernel} N={n}: check passed (max |C-ref| {rec['check']['max_abs_error']:g}), "
                      f"median {rec['median_ns'] / 1e3:.2f} us over {rec['repeats']}, "
                      f"{rec['throughput']:.2f} {rec['throughput_unit']} [{time.perf_counter() - t0:.1f} s]",
                      flush=True)
            else:
                chk = profile_target(args.cubin, args.kernel, args.precision, n, tiling, args.warmups, seed,
                                     accumulator=args.accumulator, b_layout=args.b_layout, tma=args.tma)
                print(f"{args.kernel} N={n}: profiled launch checked, max |C-ref| {chk.max_abs_error:g}")
    except (CheckFailedError, ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
