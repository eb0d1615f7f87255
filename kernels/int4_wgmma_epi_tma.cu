// int4_wgmma_epi_tma: int4_wgmma_persistent (kernels/int4_wgmma.cuh, PERSISTENT=1 from the
// registry's tiling) with C stored through the bulk tensor copy engine (EPI_TMA=4,
// kernels/c_tma.cuh): each consumer warpgroup writes its accumulators one 64 x 32 box at a time
// into 4 shared-memory slots of 8 KiB beside the 4 stages, and one of its threads stores each
// box (UTMASTG), so the last boxes of a block drain while the next block's wgmma run. Measured
// against int4_wgmma_persistent in docs/perf-notes.md: +1.7 to +3.5 % at N = 8192 in every
// development call that timed the two together.
#define EPI_TMA 4
#include "int4_wgmma.cuh"

INT4_WGMMA_KERNEL(int4_wgmma_epi_tma) {
  i4wg::gemm(C_, M, N, K, B_);
}
