// fp16_wgmma: FP16 in, FP32 accumulate, on Hopper's own path (kernels/wgmma_gemm.cuh,
// sm_90a only): TMA into 128-byte-swizzled shared memory on mbarriers, STAGES stages, one
// producer warpgroup and two consumer warpgroups issuing wgmma.mma_async m64n256k16 from
// shared-memory descriptors; 128 x 256 blocks, K tile 64 halves. A and B are read through
// the tensor maps the harness writes (A and B also arrive as arguments: the one launcher
// signature). Versions and their measured rates: docs/perf-notes.md.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma) {
  wg::gemm<wg::F16F32>(C_, M, N, K * 2);
}
