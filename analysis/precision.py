"""Element types of the GEMM kernels: storage, accumulation and how to count work.

Every kernel computes C = A * B with A (M x K) row-major, B (K x N) column-major, i.e.
stored as N rows of K elements, and C (M x N) row-major.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Precision:
    """One input precision.

    Attributes:
        name: ``fp16``, ``int8`` or ``int4``.
        bits: bits per stored input element (INT4 packs two per byte along K).
        lo, hi: inclusive range of the random inputs drawn for checks.
        c_dtype: numpy dtype of C as the kernel writes it (float32 or int32).
        throughput_unit: ``TFLOP/s`` for floating point, ``TOP/s`` for integers.
        exact: whether the result must match the reference exactly.
    """

    name: str
    bits: int
    lo: float
    hi: float
    c_dtype: np.dtype
    throughput_unit: str
    exact: bool

    def row_bytes(self, k: int) -> int:
        """Bytes of one row of A (or one column of B) holding ``k`` elements."""
        return k * self.bits // 8


PRECISIONS: dict[str, Precision] = {
    "fp16": Precision("fp16", 16, -1.0, 1.0, np.dtype(np.float32), "TFLOP/s", exact=False),
    "int8": Precision("int8", 8, -128, 127, np.dtype(np.int32), "TOP/s", exact=True),
    "int4": Precision("int4", 4, -8, 7, np.dtype(np.int32), "TOP/s", exact=True),
}


#: The C dtypes a kernel may write instead of its precision's ``c_dtype``, by their registry
#: name (``c_dtype``): FP16 C, FP32 accumulators rounded to nearest (FP16 inputs only).
C_DTYPES = {"float16": np.dtype(np.float16)}


def kernel_c_dtype(spec: dict) -> np.dtype:
    """The dtype of C a registry entry's kernel writes: its ``c_dtype`` (:data:`C_DTYPES`) where
    it gives one, else its precision's. Raises KeyError for an unknown name of either."""
    name = spec.get("c_dtype")
    if name is None:
        return precision_of(spec["precision"]).c_dtype
    try:
        return C_DTYPES[name]
    except KeyError:
        raise KeyError(f"unknown c_dtype {name!r}; expected one of {sorted(C_DTYPES)}") from None


def gemm_ops(m: int, n: int, k: int) -> int:
    """Operations of one GEMM: 2*M*N*K (a multiply and an add per inner-product term)."""
    return 2 * m * n * k


def precision_of(name: str) -> Precision:
    """Look up a precision by name; raises KeyError naming the valid ones."""
    try:
        return PRECISIONS[name]
    except KeyError:
        raise KeyError(f"unknown precision {name!r}; expected one of {sorted(PRECISIONS)}") from None


#: The vendor library GEMM each precision is measured against, by its references.csv name
#: (analysis.gpu.references): cuBLAS FP16 and cuBLASLt INT8. cuBLAS and cuBLASLt have no INT4 GEMM.
LIBRARY_NAMES = {"fp16": "cublas_fp16", "int8": "cublaslt_int8"}
#: The vendor GEMM of a precision that writes C in the dtype our kernels write (``c_dtype``),
#: where the one of LIBRARY_NAMES does not: cuBLAS FP16 writing FP32 C (``torch.mm`` with
#: ``out_dtype=torch.float32``), beside cuBLAS writing FP16 C. It is timed and paired like the
#: library (analysis.gpu.references), so that a pair can compare kernels that write the same bytes.
SAME_OUTPUT_NAMES = {"fp16": "cublas_fp16_f32out"}
#: The Triton GEMM of each precision (analysis.gpu.triton_gemm), by its references.csv name.
TRITON_NAMES = {"fp16": "triton_fp16", "int8": "triton_int8"}
#: Every reference GEMM a kernel may be timed in pairs with (paired.csv ``library``), per
#: precision: the library, the one writing the kernels' C dtype where there is one, and Triton.
PAIRED_REFERENCES = {p: [t[p] for t in (LIBRARY_NAMES, SAME_OUTPUT_NAMES, TRITON_NAMES) if p in t]
                     for p in LIBRARY_NAMES}
