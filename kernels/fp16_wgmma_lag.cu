// fp16_wgmma_lag: fp16_wgmma_serpentine with its two consumer warpgroups CONSUMER_LAG K tiles
// apart (kernels/wgmma_gemm.cuh). Both warpgroups store C at once, with no wgmma queued: left
// out, the stores bounded the epilogue at +3.3 % for fp16_wgmma (docs/perf-notes.md, ping-pong
// section). Started two K tiles apart, one warpgroup was to store while the other's wgmma run,
// with the same blocks, copies and stages. Measured (docs/perf-notes.md, 2026-12-05): the
// warpgroups fall back into step after the start, and the rate and the tensor pipe's busy share
// are those of the serpentine kernel.
#define K_SERPENTINE 1
#define STORE64 1
#ifndef CONSUMER_LAG
#define CONSUMER_LAG 2
#endif
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma_lag) {
  wg::gemm<wg::F16F32>(C_, M, N, K * 2);
}
