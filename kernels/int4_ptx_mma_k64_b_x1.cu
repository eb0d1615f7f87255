// int4_ptx_mma_k64_b_x1: int4_ptx_mma_k64 with the B fragments loaded by four ldmatrix.x1
// per pair of n8 tiles (k64 ablation: B ldmatrix width).
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_mma_k64_b_x1) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>, gemm::Ldmatrix<4, 1>>(A_, B_, C_, N, static_cast<int64_t>(K) / 2);
}
