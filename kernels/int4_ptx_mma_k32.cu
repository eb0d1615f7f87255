// int4_ptx_mma_k32: int4_ptx_mma_k64 with each K = 64 step split into two
// mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32.
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_mma_k32) { gemm::mma_gemm<gemm::TwoMmas<int32_t, ptx::mma_m16n8k32_s4_s32>>(A_, B_, C_, N, static_cast<int64_t>(K) / 2); }
