// int4_wgmma_persistent: int4_wgmma_unpack_s8 (kernels/int4_wgmma.cuh, sm_90a) made
// persistent (build parameter PERSISTENT=1 from the registry's tiling): one CTA per SM loops
// over the 256 x 128 blocks of C, its producer warpgroup copying and unpacking the next
// block's first K tiles while the consumers store C. Measured against int4_wgmma_unpack_s8
// in docs/perf-notes.md.
#include "int4_wgmma.cuh"

INT4_WGMMA_KERNEL(int4_wgmma_persistent) {
  i4wg::gemm(C_, M, N, K, B_);
}
