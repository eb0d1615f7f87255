// int8_wgmma: INT8 in, INT32 accumulate, on Hopper's own path (kernels/wgmma_gemm.cuh,
// sm_90a only): TMA into 128-byte-swizzled shared memory on mbarriers, STAGES stages, one
// producer warpgroup and two consumer warpgroups issuing wgmma.mma_async m64n256k32 from
// shared-memory descriptors; 128 x 256 blocks, K tile 128 bytes. Versions and their
// measured rates: docs/perf-notes.md.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(int8_wgmma) {
  wg::gemm<wg::S8S32>(C_, M, N, K);
}
