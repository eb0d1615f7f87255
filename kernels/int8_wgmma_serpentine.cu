// int8_wgmma_serpentine: int8_wgmma_cluster (persistent, clusters of two CTAs sharing B) with
// less DRAM traffic and whole 64-byte row pieces of C per warp store (kernels/wgmma_gemm.cuh):
//  - K_SERPENTINE: a CTA walks K backwards in its odd-numbered blocks, so a wave of blocks
//    starts on the K tiles the wave before it read last, some of them still in L2;
//  - the registry's raster 16: a wave of 66 clusters covers 16 block rows x about 8 block
//    columns of C (32.5 MiB of A and B panels at N = 8192) instead of 8 x 16.5 (41 MiB);
//  - STORE64: C stored 16 bytes a lane, each warp store 8 rows x 64 contiguous bytes.
// Measured against int8_wgmma_cluster in docs/perf-notes.md (DRAM reads 775 -> 524 MB at N = 8192).
#define K_SERPENTINE 1
#define STORE64 1
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(int8_wgmma_serpentine) {
  wg::gemm<wg::S8S32>(C_, M, N, K);
}
