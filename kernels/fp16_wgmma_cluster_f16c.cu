// fp16_wgmma_cluster_f16c: fp16_wgmma_cluster (kernels/wgmma_gemm.cuh, sm_90a; persistent, clusters
// of two CTAs sharing B by TMA multicast) writing C in FP16, as cuBLAS does through torch.matmul:
// the FP32 accumulators are rounded to nearest FP16 and stored 16 bytes a lane after a transpose
// within each quad of lanes (wg::store_f16), whole 32-byte sectors per row. C is M x N FP16
// (harness --c-dtype float16). Not yet in the registry: its entry, and the run that measured it
// against fp16_wgmma_cluster, are in docs/gpu-runs/2026-12-03_registry_f16c/.
#include "wgmma_gemm.cuh"

WGMMA_GEMM_KERNEL(fp16_wgmma_cluster_f16c) {
  wg::gemm<wg::F16F32, true>(C_, M, N, K * 2);
}
