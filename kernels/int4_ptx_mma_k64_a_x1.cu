// int4_ptx_mma_k64_a_x1: int4_ptx_mma_k64 with the A fragment loaded by four ldmatrix.x1
// (k64 ablation: A ldmatrix width).
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_mma_k64_a_x1) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>, gemm::Ldmatrix<1, 4>>(A_, B_, C_, N, static_cast<int64_t>(K) / 2);
}
