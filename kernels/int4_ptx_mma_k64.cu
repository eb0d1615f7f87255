// int4_ptx_mma_k64: int4_wmma with hand-written PTX: ldmatrix.x4 for A and B and
// mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32, one per 16 x 8 output tile per
// 64-element K step. sm_89 has it natively (IMMA.16864.S4); sm_90 has no S4 tensor
// instruction and the compiler emulates it with IMMA ... S8 and unpacking. A row-major,
// B column-major, two elements per byte; C row-major INT32.
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_mma_k64) { gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>>(A_, B_, C_, N, static_cast<int64_t>(K) / 2); }
