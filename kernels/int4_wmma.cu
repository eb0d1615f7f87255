// int4_wmma: the study's INT4 baseline. WMMA m8n8k32 fragments of signed 4-bit inputs
// (wmma::experimental::precision::s4) with INT32 accumulators, loaded from the
// double-buffered cp.async tiles of gemm_common.cuh. A row-major, B column-major, two
// elements per byte along K; C row-major INT32. sm_89 runs it as IMMA.8832.S4; sm_90 has
// no S4 tensor instruction and the compiler emulates it with IMMA.8816.S8.
#include "wmma_gemm.cuh"

GEMM_KERNEL(int4_wmma) {
  gemm::wmma_gemm<8, 8, 32, nvcuda::wmma::experimental::precision::s4, int>(A_, B_, C_, N, K);
}
