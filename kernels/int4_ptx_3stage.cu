// int4_ptx_3stage: int4_ptx_mma_k64 with a 3-stage cp.async pipeline (stages: 3 in the
// kernel registry; wait_group 2).
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_3stage) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>>(A_, B_, C_, N, static_cast<int64_t>(K) / 2);
}
