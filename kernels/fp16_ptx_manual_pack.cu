// fp16_ptx_manual_pack: fp16_ptx_mma_k16 with the fragments read by 32-bit ld.shared per
// register instead of ldmatrix. With B column-major each register is 4 contiguous bytes
// of the tile, so no packing instructions are needed (the study, with row-major B,
// packed halves with mov).
#include "mma_gemm.cuh"

GEMM_KERNEL(fp16_ptx_manual_pack) {
  gemm::mma_gemm<gemm::OneMmaF32<ptx::mma_m16n8k16_f16_f32>, gemm::SharedLoad32>(A_, B_, C_, N, static_cast<int64_t>(K) * 2);
}
