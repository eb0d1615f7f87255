"""TMA tensor maps of the wgmma kernels that load tiles with the bulk tensor copy engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.errors import ConfigError
from analysis.precision import Precision
from analysis.gpu.harness.driver import _check
from analysis.gpu.harness.tiling import Tiling


#: The __device__ globals a TMA kernel (registry ``tma: true``) reads the tensor maps of A and
#: B from (kernels/wgmma_gemm.cuh); the harness writes them before the first launch.
TMA_GLOBALS = ("wgmma_tma_a", "wgmma_tma_b")
#: The __device__ global a kernel storing C through the copy engine (build parameter EPI_TMA
#: of kernels/wgmma_gemm.cuh and kernels/int4_wgmma.cuh; kernels/c_tma.cuh) reads C's tensor
#: map from; the harness writes it where the module has it.
C_TMA_GLOBAL = "wgmma_tma_c"
#: C's box in such a kernel: 64 rows (one m64 wgmma fragment) x 128 bytes (the 128-byte
#: swizzle's span: 32 four-byte columns), kernels/c_tma.cuh kBoxRows and kBoxBytes.
C_BOX_ROWS, C_BOX_ROW_BYTES = 64, 128
#: Bytes of one CUtensorMap (CUDA driver API, cuTensorMapEncodeTiled: 128 opaque bytes).
TENSOR_MAP_BYTES = 128
#: The shared-memory swizzle of a TMA kernel's tiles, by the bytes of K in a tile row: the
#: row must be exactly as wide as the swizzle's span (CUDA Driver API, CUtensorMapSwizzle:
#: the inner box dimension times the element size at most the span). 128: the wgmma
#: kernels' FP16/INT8 rows (kernels/wgmma_gemm.cuh); 64: packed INT4 rows
#: (kernels/int4_wgmma.cuh).
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
    wide as one of :data:`TMA_SWIZZLES`, each dimension a multiple of its box; B's box
    block_n / cluster_m rows, the part of a B tile each CTA of a cluster copies).

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
    if tiling.block_n % tiling.cluster_m:
        raise ConfigError(f"{kernel}: block_n={tiling.block_n} does not split among cluster_m={tiling.cluster_m} CTAs")
    # in a cluster each CTA copies (multicasts) its 1 / cluster_m of the B tile
    shapes = (TensorMapShape("A", m, k_bytes, tiling.block_m, tiling.block_k_bytes),
              TensorMapShape("B", n, k_bytes, tiling.block_n // tiling.cluster_m, tiling.block_k_bytes))
    for sh in shapes:
        if not 1 <= sh.box_rows <= 256:
            raise ConfigError(f"{kernel}: the {sh.name} box has {sh.box_rows} rows; a TMA box has 1 to 256")
        if sh.rows > 2**32 or sh.row_bytes > 2**32 or sh.row_bytes >= 2**40:
            raise ConfigError(f"{kernel}: {sh.name} ({sh.rows} x {sh.row_bytes} bytes) exceeds a tensor "
                              "map's 2**32 elements per dimension")
    return shapes


def c_tensor_map_shape(kernel: str, tiling: Tiling, m: int, n: int, c_itemsize: int) -> TensorMapShape:
    """The tensor map of C (M rows of N elements of ``c_itemsize`` bytes, row-major) for a kernel
    that stores C through the copy engine in boxes of :data:`C_BOX_ROWS` rows x
    :data:`C_BOX_ROW_BYTES` bytes (kernels/c_tma.cuh), after checking what cuTensorMapEncodeTiled
    and the kernel's boxes need: 4-byte C (FP32 or INT32), rows a multiple of 16 bytes, blocks of
    C made of whole boxes.

    Raises:
        ConfigError: C's element size, or a block of C that the boxes do not tile, saying which.
    """
    if c_itemsize != 4:
        raise ConfigError(f"{kernel}: C through the copy engine (global {C_TMA_GLOBAL}) needs 4-byte C "
                          f"(FP32 or INT32), not {c_itemsize}-byte elements")
    if tiling.block_m % C_BOX_ROWS or tiling.block_n * c_itemsize % C_BOX_ROW_BYTES:
        raise ConfigError(f"{kernel}: a {tiling.block_m} x {tiling.block_n} block of C is not made of whole "
                          f"{C_BOX_ROWS} x {C_BOX_ROW_BYTES // c_itemsize} boxes")
    if n * c_itemsize % 16:
        raise ConfigError(f"{kernel}: N={n} gives rows of C of {n * c_itemsize} bytes; a tensor map's row stride "
                          "must be a multiple of 16 bytes")
    if n * c_itemsize > 2**32 or m > 2**32:
        raise ConfigError(f"{kernel}: C ({m} x {n}) exceeds a tensor map's 2**32 elements per dimension")
    return TensorMapShape("C", m, n * c_itemsize, C_BOX_ROWS, C_BOX_ROW_BYTES)


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
