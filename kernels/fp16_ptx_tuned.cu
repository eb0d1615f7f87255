// fp16_ptx_tuned: FP16 in, FP32 accumulate, in the tuned block of tuned_gemm.cuh. The
// registry builds it as a 128 x 256 block of 8 warps (2 x 4, warp tile 64 x 64), a K tile
// of 64 halves (128 bytes: 4 K steps of ldmatrix.x4 + 32 mma.sync m16n8k16 per barrier),
// a 3-stage cp.async pipeline in 144 KiB of dynamic shared memory with XOR-swizzled rows
// (ldmatrix without bank conflicts) and the grid rasterised in groups of 8 block rows; the
// tilings tried and their measured rates are in docs/perf-notes.md.
#include "tuned_gemm.cuh"

TUNED_GEMM_KERNEL(fp16_ptx_tuned, tuned::kPipelineSmemBytes) {
  tuned::pipelined_gemm<tuned::MmaF16F32>(A_, B_, C_, N, static_cast<int64_t>(K) * 2);
}
