// fp16_ptx_3stage: fp16_ptx_mma_k16 with a 3-stage cp.async pipeline (stages: 3 in the
// kernel registry; the loop waits with cp.async.wait_group 2, i.e. stages - 1, so two
// tiles stay in flight).
#include "mma_gemm.cuh"

GEMM_KERNEL(fp16_ptx_3stage) {
  gemm::mma_gemm<gemm::OneMmaF32<ptx::mma_m16n8k16_f16_f32>>(A_, B_, C_, N, static_cast<int64_t>(K) * 2);
}
