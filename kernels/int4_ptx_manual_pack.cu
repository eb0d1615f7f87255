// int4_ptx_manual_pack: int4_ptx_mma_k64 with the fragments read by 32-bit ld.shared per
// register instead of ldmatrix.
#include "mma_gemm.cuh"

GEMM_KERNEL(int4_ptx_manual_pack) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>, gemm::SharedLoad32>(A_, B_, C_, N, static_cast<int64_t>(K) / 2);
}
