// Register-only mma.sync loops: the tensor-instruction ceilings of this GPU, one kernel
// per shape the GEMM kernels use (f16 m16n8k16 with f32 accumulators, s8 m16n8k32 and
// s4 m16n8k64 with s32). No memory traffic inside the loop; kChains independent
// accumulators per warp hide the instruction latency. Launcher: (int iters, void* out),
// out holding one 32-bit word per thread so the loop is not optimised away.
// Work per launch: gridDim.x * blockDim.x / 32 warps * iters * kChains * 2*16*8*K ops.
#include "../ptx.cuh"

namespace {

constexpr int kChains = 8;

template <typename Acc, void (*MMA)(Acc (&)[4], const uint32_t (&)[4], uint32_t, uint32_t)>
__device__ __forceinline__ void mma_loop(int iters, void* out_) {
  // Operands that the compiler cannot fold: FP16 1.0 pairs (0x3c00) or small integers
  // from the lane index; either way the tensor unit does the same work.
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t a[4] = {0x3c003c00u ^ lane, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u ^ (lane << 16)};
  const uint32_t b0 = 0x3c003c00u, b1 = 0x3c003c00u ^ lane;
  Acc d[kChains][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) MMA(d[c], a, b0, b1);
  }
  Acc s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  static_cast<Acc*>(out_)[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

}  // namespace

extern "C" __global__ void peak_mma_m16n8k16_f16_f32(int iters, void* out) {
  mma_loop<float, ptx::mma_m16n8k16_f16_f32>(iters, out);
}

extern "C" __global__ void peak_mma_m16n8k32_s8_s32(int iters, void* out) {
  mma_loop<int32_t, ptx::mma_m16n8k32_s8_s32>(iters, out);
}

extern "C" __global__ void peak_mma_m16n8k64_s4_s32(int iters, void* out) {
  mma_loop<int32_t, ptx::mma_m16n8k64_s4_s32>(iters, out);
}
