// fp16_ptx_k8: fp16_ptx_mma_k16 with each K = 16 step split into two
// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32.
#include "mma_gemm.cuh"

GEMM_KERNEL(fp16_ptx_k8) { gemm::mma_gemm<gemm::TwoMmas<float, ptx::mma_m16n8k8_f16_f32>>(A_, B_, C_, N, static_cast<int64_t>(K) * 2); }
