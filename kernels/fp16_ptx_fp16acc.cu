// fp16_ptx_fp16acc: fp16_ptx_mma_k16 with FP16 accumulators:
// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16, two .f16x2 accumulator registers per
// 16 x 8 output tile instead of four f32. The accumulators are widened to FP32 (exactly)
// when C is stored, so C stays FP32 like every FP16 kernel's. FP16 accumulation rounds
// every partial sum to 11 significant bits, so the harness checks this kernel exactly on
// integer-valued inputs in {-1, 0, 1}: every partial sum is then an integer, which FP16
// holds exactly unless it passes 2048 in magnitude (probability under 1e-100 at K <= 8192).
#include "mma_gemm.cuh"

GEMM_KERNEL(fp16_ptx_fp16acc) { gemm::mma_gemm<gemm::OneMmaF16<ptx::mma_m16n8k16_f16_f16>>(A_, B_, C_, N, static_cast<int64_t>(K) * 2); }
