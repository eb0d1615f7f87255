// fp16_ptx_mma_k16: fp16_wmma with hand-written PTX: ldmatrix.x4 for A and B and
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32. B is column-major here, so its
// fragments load with plain ldmatrix (the study, with row-major B, used .x2.trans).
// Same tiles, pipeline and layouts as the baseline; C row-major FP32.
#include "mma_gemm.cuh"

GEMM_KERNEL(fp16_ptx_mma_k16) { gemm::mma_gemm<gemm::OneMmaF32<ptx::mma_m16n8k16_f16_f32>>(A_, B_, C_, N, static_cast<int64_t>(K) * 2); }
