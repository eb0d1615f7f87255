"""TMA tensor maps of the wgmma kernels that load tiles with the bulk tensor copy engine."""

from __future__ import annotations

import struct
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


def cubin_globals(cubin: bytes, source: str = "cubin") -> dict[str, int]:
    """The data objects a cubin defines: name -> size in bytes (its ``__device__`` globals, e.g.
    :data:`TMA_GLOBALS` and, built with EPI_TMA, :data:`C_TMA_GLOBAL`), read from the ELF symbol
    table. The harness asks this, not ``cuModuleGetGlobal``, whether a module has a global: a
    failing CUDA call is an error compute-sanitizer reports (its API-error checking is on by
    default), which failed memcheck of every TMA kernel without C's map.

    Layouts from the System V ABI's ELF-64 object file format: the header's ``e_shoff``
    (bytes 40-47), ``e_shentsize`` and ``e_shnum`` (bytes 58-61); section headers of 64 bytes
    (``sh_type`` at 4, ``sh_offset`` at 24, ``sh_size`` at 32, ``sh_link`` at 40, ``sh_entsize``
    at 56); SHT_SYMTAB = 2, whose ``sh_link`` names its string table; symbols of 24 bytes
    (``st_name`` u32, ``st_info`` u8 with the type in its low 4 bits, STT_OBJECT = 1,
    ``st_shndx`` u16 non-zero where defined, ``st_size`` u64 at 16).

    Raises:
        ConfigError: ``cubin`` is not a 64-bit little-endian ELF file (naming ``source``), or its
            tables run past its end.
    """
    if cubin[:6] != b"\x7fELF\x02\x01":
        raise ConfigError(f"{source}: not a 64-bit little-endian ELF file (a cubin), first bytes {cubin[:6]!r}")
    try:
        (shoff,) = struct.unpack_from("<Q", cubin, 40)
        shentsize, shnum = struct.unpack_from("<HH", cubin, 58)
        sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
        found: dict[str, int] = {}
        for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
            if sh_type != 2 or not entsize:
                continue
            str_offset = sections[link][4]
            for pos in range(offset, offset + size, entsize):
                name, info, _, shndx, _, sym_size = struct.unpack_from("<IBBHQQ", cubin, pos)
                if info & 0xF == 1 and shndx:
                    end = cubin.index(b"\0", str_offset + name)
                    found[cubin[str_offset + name:end].decode()] = sym_size
        return found
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: a truncated or malformed ELF symbol table ({exc})") from exc


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
