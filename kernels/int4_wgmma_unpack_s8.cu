// int4_wgmma_unpack_s8: INT4 in memory, INT8 on the tensor cores through Hopper's own path
// (kernels/int4_wgmma.cuh, sm_90a): TMA of the packed tiles, B unpacked to INT8 by the
// producer warpgroup, A unpacked into the consumers' wgmma registers; one block of C per CTA.
#include "int4_wgmma.cuh"

INT4_WGMMA_KERNEL(int4_wgmma_unpack_s8) {
  i4wg::gemm(C_, M, N, K, B_);
}
