// Warpgroup MMA loops from shared-memory descriptors with register accumulators only: the
// tensor-instruction ceilings of Hopper's own path (sm_90a), one kernel per shape the wgmma
// kernels issue (f16 m64n256k16 with f32 accumulators, s8 m64n256k32 with s32). Each block
// holds one 64 x 128-byte A tile and one 256 x 128-byte B tile in 128-byte-swizzled shared
// memory (written once, before the loop) and each of its warpgroups issues, per loop
// iteration, the four wgmma of one 128-byte K tile as one commit group, keeping one group
// in flight (wait_group 1), as the consumers of kernels/wgmma_gemm.cuh do; no global memory
// traffic inside the loop. One block per SM, blockDim.x / 128 warpgroups (the GEMM kernels
// have two consumer warpgroups). Launcher: (int iters, void* out), out holding one 32-bit
// word per thread so the loop is not optimised away.
// Work per launch: gridDim.x * blockDim.x / 128 warpgroups * iters * 4 * 2*64*256*K ops.
// Two operand fills: the `peak_*` kernels hold FP16 1.0 pairs (near-constant bits); the
// `peak_*_random` ones hold values drawn like the GEMMs' inputs (analysis.gpu.harness.
// make_inputs: s8 uniform in [-128, 127], f16 uniform in [-1, 1]), different in every block.
// On a GPU held at its power limit the operands' bits set the power the tensor cores draw,
// so the two fills bound the same instruction at two powers.
// Development loops (not measured by the workflow's references): `peak_*_random_rot` take each
// warpgroup's A from a 64-row quarter of the random B tile instead of the shared A tile, the
// quarter (warpgroup + iteration) mod 4. So the SM's warpgroups multiply different A, and each
// warpgroup's A changes at every loop iteration, as a GEMM's operands do at every K tile; the
// shared memory read per wgmma and the instruction stream are those of the other loops.
#include <cuda_fp16.h>

#include "../hopper.cuh"
#include "operand_fill.cuh"

namespace {

constexpr int kGroup = 4;          // wgmma per commit group: 128 bytes of K in 32-byte steps
constexpr int kTileA = 64 * 128;   // bytes: 64 rows of 128 bytes of K
constexpr int kTileB = 256 * 128;  // bytes: 256 rows of 128 bytes of K

enum class Fill { kOnes, kRandomS8, kRandomF16 };

using ceiling_fill::fmix32;

// One 32-bit word of the operand tiles: word i of block `block`.
template <Fill F>
__device__ __forceinline__ uint32_t operand_word(uint32_t i, uint32_t block) {
  if constexpr (F == Fill::kOnes) {
    // FP16 1.0 pairs (0x3c00), or the bytes 0x00 and 0x3c for s8: operands the compiler cannot fold
    return 0x3c003c00u ^ (i & 0x00010001u);
  } else {
    const uint32_t h = fmix32(i * 0x9e3779b9u + block * 0x7f4a7c15u + 1u);
    if constexpr (F == Fill::kRandomS8) {
      return h;  // four uniform bytes: s8 uniform in [-128, 127]
    } else {  // two FP16 uniform in [-1, 1], from 16 bits each
      const __half lo = __float2half_rn(static_cast<float>(h & 0xffffu) * (2.0f / 65535.0f) - 1.0f);
      const __half hi = __float2half_rn(static_cast<float>(h >> 16) * (2.0f / 65535.0f) - 1.0f);
      return static_cast<uint32_t>(__half_as_ushort(lo)) | (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
    }
  }
}

template <typename Acc, void (*MMA)(Acc (&)[128], uint64_t, uint64_t, uint32_t), Fill F, bool kRotateA = false>
__device__ __forceinline__ void wgmma_loop(int iters, void* out_) {
  __shared__ alignas(1024) uint8_t tiles[kTileA + kTileB];  // 1024-byte aligned: swizzle base offset 0
  for (int i = threadIdx.x; i < (kTileA + kTileB) / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(tiles)[i] = operand_word<F>(i, blockIdx.x);
  }
  hopper::fence_proxy_async_shared();  // the generic-proxy stores, visible to wgmma's reads
  __syncthreads();
  const uint32_t b = hopper::smem_u32(tiles) + kTileA;
  const uint32_t warpgroup = threadIdx.x / 128;
  Acc d[128];  // written first with scale-d false
  hopper::wgmma_fence();
  for (int it = 0; it < iters; ++it) {
    // the shared A tile, or a 64-row quarter of B (8 KiB, 1024-byte aligned: same swizzle phase)
    const uint32_t a = kRotateA ? b + ((warpgroup + it) & 3u) * kTileA : b - kTileA;
#pragma unroll
    for (int ks = 0; ks < kGroup; ++ks) {
      MMA(d, hopper::desc_k_major_sw128(a + ks * 32), hopper::desc_k_major_sw128(b + ks * 32), it > 0 || ks > 0);
    }
    hopper::wgmma_commit();
    hopper::wgmma_wait<1>();
  }
  hopper::wgmma_wait<0>();
  hopper::fence_operands(d);
  Acc s = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += d[i];
  static_cast<Acc*>(out_)[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k16_f16_f32(int iters, void* out) {
  wgmma_loop<float, hopper::wgmma_m64n256k16_f32_f16, Fill::kOnes>(iters, out);
}

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k32_s8_s32(int iters, void* out) {
  wgmma_loop<int32_t, hopper::wgmma_m64n256k32_s32_s8, Fill::kOnes>(iters, out);
}

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k16_f16_f32_random(int iters, void* out) {
  wgmma_loop<float, hopper::wgmma_m64n256k16_f32_f16, Fill::kRandomF16>(iters, out);
}

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k32_s8_s32_random(int iters, void* out) {
  wgmma_loop<int32_t, hopper::wgmma_m64n256k32_s32_s8, Fill::kRandomS8>(iters, out);
}

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k16_f16_f32_random_rot(int iters, void* out) {
  wgmma_loop<float, hopper::wgmma_m64n256k16_f32_f16, Fill::kRandomF16, true>(iters, out);
}

extern "C" __global__ void __launch_bounds__(384, 1) peak_wgmma_m64n256k32_s8_s32_random_rot(int iters, void* out) {
  wgmma_loop<int32_t, hopper::wgmma_m64n256k32_s32_s8, Fill::kRandomS8, true>(iters, out);
}
