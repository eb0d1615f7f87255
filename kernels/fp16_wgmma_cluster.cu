// fp16_wgmma_cluster: fp16_wgmma (kernels/wgmma_gemm.cuh, sm_90a) made persistent and run in
// clusters of two CTAs: one CTA per SM loops over 128 x 256 blocks of C (the producer
// warpgroup loads the next block's K tiles while the consumers store C), and the two CTAs of
// a cluster compute vertically adjacent blocks, each copying half of their common B tile into
// both CTAs' shared memory with one TMA multicast (build parameters CLUSTER_M=2, PERSISTENT=1
// from the registry's tiling). Measured against fp16_wgmma in docs/perf-notes.md.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma_cluster) {
  wg::gemm<wg::F16F32>(C_, M, N, K * 2);
}
