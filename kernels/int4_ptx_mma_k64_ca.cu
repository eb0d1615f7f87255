// int4_ptx_mma_k64_ca: int4_ptx_mma_k64 with tiles copied by cp.async.ca (cached in L1
// too) instead of cp.async.cg (L2 only) (k64 ablation: cache operator).
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_mma_k64_ca) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>, gemm::Ldmatrix<4, 4>, true>(A_, B_, C_, N, static_cast<int64_t>(K) / 2);
}
