// int8_wmma: the study's INT8 baseline. WMMA m16n16k16 fragments of signed 8-bit
// inputs with INT32 accumulators, loaded from the double-buffered cp.async tiles of
// gemm_common.cuh. A row-major, B column-major, C row-major INT32.
#include "wmma_gemm.cuh"

GEMM_KERNEL(int8_wmma) { gemm::wmma_gemm<16, 16, 16, signed char, int>(A_, B_, C_, N, K); }
