// fp16_wgmma_cluster_f16c: fp16_wgmma_cluster (kernels/wgmma_gemm.cuh, sm_90a; persistent, clusters
// of two CTAs sharing B by TMA multicast) writing C in FP16, as cuBLAS does through torch.matmul:
// the FP32 accumulators are rounded to nearest FP16 and stored 16 bytes a lane after a transpose
// within each quad of lanes (wg::store_f16), whole 32-byte sectors per row. C is M x N FP16
// (registry c_dtype: float16). Measured against fp16_wgmma_cluster in docs/perf-notes.md.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma_cluster_f16c) {
  wg::gemm<wg::F16F32, true>(C_, M, N, K * 2);
}
