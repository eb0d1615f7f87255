// int8_ptx_mma_k16: int8_ptx_mma_k32 with the K = 32 step split into two
// mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 (the public study code's "k32" kernel).
// Same ldmatrix.x4 loads, tiles and pipeline.
#include "mma_gemm.cuh"

GEMM_KERNEL(int8_ptx_mma_k16) { gemm::mma_gemm<gemm::TwoMmas<int32_t, ptx::mma_m16n8k16_s8_s32>>(A_, B_, C_, N, static_cast<int64_t>(K)); }
