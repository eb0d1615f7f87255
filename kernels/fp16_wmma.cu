// fp16_wmma: the study's FP16 baseline. WMMA m16n16k16 fragments (FP16 inputs,
// FP32 accumulators) loaded from the double-buffered cp.async tiles of
// gemm_common.cuh. A row-major, B column-major, C row-major FP32.
#include <cuda_fp16.h>

#include "wmma_gemm.cuh"

GEMM_KERNEL(fp16_wmma) { gemm::wmma_gemm<16, 16, 16, half, float>(A_, B_, C_, N, K); }
