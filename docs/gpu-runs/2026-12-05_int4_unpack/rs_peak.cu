// Development ceilings for the INT4 kernel's consumer (kernels/int4_wgmma.cuh): s8 wgmma loops
// with register accumulators only, as kernels/ceilings/wgmma_peak.cu's, in the forms the INT4
// consumers issue. Each warpgroup issues, per loop iteration, the wgmma of one 128-byte K tile
// of a 64 x 256 output as one commit group and keeps one group in flight (wait_group 1):
//  - rs_peak_ss_n256:   4 x m64n256k32, A and B from shared memory (the registered ceiling's form);
//  - rs_peak_ss_n128x2: 8 x m64n128k32 (two n128 halves of the 256 columns), A and B from shared memory;
//  - rs_peak_rs_n256:   4 x m64n256k32, A from registers (held fixed), B from shared memory;
//  - rs_peak_rs_n128x2: 8 x m64n128k32, A from registers (held fixed): the INT4 consumer's issue;
//  - rs_peak_rs_n128x2_lds: the same, with each K tile's A read from shared memory (16 ld.shared.u32
//    a thread, in int4_wgmma.cuh's 64-byte-swizzled layout) and converted (nibbles to bytes, 3 integer instructions a word) into the other of two
//    register sets before its wgmma, as the INT4 consumer does (no barriers, no B unpacking).
// Operands: s8 uniform in [-128, 127] (wgmma_peak.cu's random fill). Launch: one block per SM,
// blockDim.x / 128 warpgroups (2, as the INT4 kernel's consumers), (int iters, void* out).
// Work per launch: gridDim.x * blockDim.x / 128 * iters * 2 * 64 * 256 * 128 ops.
#include "hopper.cuh"
#include "ptx.cuh"  // ptx::ld_shared_u32
#include "ceilings/operand_fill.cuh"

namespace {

constexpr int kTileA = 64 * 128;
constexpr int kTileB = 256 * 128;

using ceiling_fill::fmix32;  // wgmma_peak.cu's random fill

// D (64 x 128, INT32) += A * B, both from shared memory (K-major).
__device__ __forceinline__ void ss_m64n128k32(int32_t (&d)[64], uint64_t desc_a, uint64_t desc_b, uint32_t acc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8\n"
      "{" HOPPER_WGMMA_D64 "}, %64, %65, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(acc)
      : "memory");
}

// Byte offset of 16-byte chunk c of row r in a tile of 64-byte rows, 64-byte swizzle (int4_wgmma.cuh's
// layout of the packed A the INT4 consumers read).
__device__ __forceinline__ uint32_t sw64(int r, int c) { return r * 64 + ((c ^ ((r >> 1) & 3)) << 4); }

enum class Form { kSsN256, kSsN128x2, kRsN256, kRsN128x2, kRsN128x2Lds };

template <Form F>
__device__ __forceinline__ void loop(int iters, void* out_) {
  __shared__ alignas(1024) uint8_t tiles[kTileA + kTileB];
  for (int i = threadIdx.x; i < (kTileA + kTileB) / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(tiles)[i] = fmix32(i * 0x9e3779b9u + blockIdx.x * 0x7f4a7c15u + 1u);
  hopper::fence_proxy_async_shared();
  __syncthreads();
  const uint32_t a = hopper::smem_u32(tiles), b = a + kTileA;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32 % 4;
  int32_t d0[64], d1[64], d[128];
  uint32_t af[2][2][4][4];  // [buffer][half][k step][register]
#pragma unroll
  for (int x = 0; x < 2; ++x)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
#pragma unroll
        for (int r = 0; r < 4; ++r) af[x][h][ks][r] = fmix32(threadIdx.x * 131 + x * 97 + h * 31 + ks * 7 + r);
  hopper::wgmma_fence();
  for (int it = 0; it < iters; ++it) {
    const int x = it & 1;
    if constexpr (F == Form::kRsN128x2Lds) {
      // this K tile's packed A (64 rows x 64 bytes, 64-byte rows of the A tile's first half) to registers
      uint32_t w[2][2][4];
      const int row = warp * 16 + lane / 4;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          w[h][0][ks] = ptx::ld_shared_u32(a + sw64(row + 64 * h, ks) + 4 * (lane % 4));
          w[h][1][ks] = ptx::ld_shared_u32(a + sw64(row + 64 * h + 8, ks) + 4 * (lane % 4));
        }
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          af[x][h][ks][0] = (w[h][0][ks] << 4) & 0xf0f0f0f0u;
          af[x][h][ks][1] = (w[h][1][ks] << 4) & 0xf0f0f0f0u;
          af[x][h][ks][2] = w[h][0][ks] & 0xf0f0f0f0u;
          af[x][h][ks][3] = w[h][1][ks] & 0xf0f0f0f0u;
        }
      hopper::wgmma_fence();
    }
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const uint64_t db = hopper::desc_k_major_sw128(b + ks * 32);
      const uint32_t acc = it > 0 || ks > 0;
      if constexpr (F == Form::kSsN256) {
        hopper::wgmma_m64n256k32_s32_s8(d, hopper::desc_k_major_sw128(a + ks * 32), db, acc);
      } else if constexpr (F == Form::kRsN256) {
        hopper::wgmma_m64n256k32_s32_s8_rs(d, af[x][0][ks], db, acc);
      } else if constexpr (F == Form::kSsN128x2) {
        ss_m64n128k32(d0, hopper::desc_k_major_sw128(a + ks * 32), db, acc);
        ss_m64n128k32(d1, hopper::desc_k_major_sw128(a + ks * 32), hopper::desc_k_major_sw128(b + 128 * 128 + ks * 32), acc);
      } else {
        hopper::wgmma_m64n128k32_s32_s8_rs(d0, af[x][0][ks], db, acc);
        hopper::wgmma_m64n128k32_s32_s8_rs(d1, af[x][1][ks], hopper::desc_k_major_sw128(b + 128 * 128 + ks * 32), acc);
      }
    }
    hopper::wgmma_commit();
    hopper::wgmma_wait<1>();
  }
  hopper::wgmma_wait<0>();
  int32_t s = 0;
  if constexpr (F == Form::kSsN256 || F == Form::kRsN256) {
    hopper::fence_operands(d);
#pragma unroll
    for (int i = 0; i < 128; ++i) s += d[i];
  } else {
    hopper::fence_operands(d0);
    hopper::fence_operands(d1);
#pragma unroll
    for (int i = 0; i < 64; ++i) s += d0[i] + d1[i];
  }
  static_cast<int32_t*>(out_)[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

}  // namespace

#define RS_PEAK(name, form) \
  extern "C" __global__ void __launch_bounds__(256, 1) name(int iters, void* out) { loop<form>(iters, out); }
RS_PEAK(rs_peak_ss_n256, Form::kSsN256)
RS_PEAK(rs_peak_ss_n128x2, Form::kSsN128x2)
RS_PEAK(rs_peak_rs_n256, Form::kRsN256)
RS_PEAK(rs_peak_rs_n128x2, Form::kRsN128x2)
RS_PEAK(rs_peak_rs_n128x2_lds, Form::kRsN128x2Lds)
