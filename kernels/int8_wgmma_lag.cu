// int8_wgmma_lag: int8_wgmma_serpentine with its two consumer warpgroups CONSUMER_LAG K tiles
// apart (kernels/wgmma_gemm.cuh). Without stores the registered kernel's tensor pipe was busy
// 99.3 % of active cycles against 91.0 % with them (docs/perf-notes.md, the INT8 ablations):
// both warpgroups store C at once, with no wgmma queued. Started two K tiles apart, one
// warpgroup was to store while the other's wgmma run, with the same blocks, copies and stages.
// Measured (docs/perf-notes.md, 2026-12-05): the warpgroups fall back into step after the start,
// and the rate and the tensor pipe's busy share are those of the serpentine kernel.
#define K_SERPENTINE 1
#define STORE64 1
#ifndef CONSUMER_LAG
#define CONSUMER_LAG 2
#endif
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(int8_wgmma_lag) {
  wg::gemm<wg::S8S32>(C_, M, N, K);
}
