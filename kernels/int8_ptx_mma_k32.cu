// int8_ptx_mma_k32: int8_wmma with the WMMA calls replaced by hand-written PTX:
// ldmatrix.x4 for the A and B fragments and mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32,
// one m16n8k32 per 16 x 8 output tile per 32-element K step (the public study code
// issues m16n8k16 twice per K = 32 step instead: that is int8_ptx_mma_k16 here). Same
// tiles, pipeline and layouts as the baseline: A row-major, B column-major, C row-major INT32.
#include "mma_gemm.cuh"

GEMM_KERNEL(int8_ptx_mma_k32) { gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k32_s8_s32>>(A_, B_, C_, N, static_cast<int64_t>(K)); }
