// int8_ptx_manual_pack: int8_ptx_mma_k32 with the fragments read by 32-bit ld.shared per
// register instead of ldmatrix (no prmt needed: each register is 4 contiguous bytes of
// the column-major B tile).
#include "mma_gemm.cuh"

GEMM_KERNEL(int8_ptx_manual_pack) {
  gemm::mma_gemm<gemm::OneMmaS32<ptx::mma_m16n8k32_s8_s32>, gemm::SharedLoad32>(A_, B_, C_, N, static_cast<int64_t>(K));
}
