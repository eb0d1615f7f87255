// fp16_wgmma_serpentine: fp16_wgmma_cluster (persistent, clusters of two CTAs sharing B) with
// int8_wgmma_serpentine's three changes (kernels/wgmma_gemm.cuh):
//  - K_SERPENTINE: a CTA walks K backwards in its odd-numbered blocks, so a wave of blocks
//    starts on the K tiles the wave before it read last, some of them still in L2;
//  - the registry's raster 16: a wave of 66 clusters covers 16 block rows x about 8 block
//    columns of C instead of 8 x 16.5 (fewer bytes of A and B panels per wave);
//  - STORE64: FP32 C stored 16 bytes a lane after one SHFL.BFLY per pair, each warp store
//    8 rows x 64 contiguous bytes (STG.E.128).
// Measured against fp16_wgmma_cluster in docs/perf-notes.md (DRAM reads 1.60 -> 1.15 GB at N = 8192).
#define K_SERPENTINE 1
#define STORE64 1
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma_serpentine) {
  wg::gemm<wg::F16F32>(C_, M, N, K * 2);
}
