// int8_wgmma_cluster: int8_wgmma (kernels/wgmma_gemm.cuh, sm_90a) made persistent and run in
// clusters of two CTAs: one CTA per SM loops over 128 x 256 blocks of C (the producer
// warpgroup loads the next block's K tiles while the consumers store C), and the two CTAs of
// a cluster compute vertically adjacent blocks, each copying half of their common B tile into
// both CTAs' shared memory with one TMA multicast (build parameters CLUSTER_M=2, PERSISTENT=1
// from the registry's tiling). Measured against int8_wgmma in docs/perf-notes.md.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(int8_wgmma_cluster) {
  wg::gemm<wg::S8S32>(C_, M, N, K);
}
