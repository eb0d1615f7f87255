// The body shared by the ldmatrix + mma.sync kernels: per 32-byte K step of the
// shared-memory tile, ldmatrix.x4 loads the A fragment of each m16 tile and the B
// fragments of two n8 tiles, and an MMA policy issues the tensor instructions.
//
// One byte layout serves every precision (PTX ISA, "Matrix Fragments for mma.m16n8k*"):
// the four 32-bit A registers hold rows g and g+8 (g = lane / 4) at bytes 4*(lane % 4)
// .. +3 and the same 16 bytes further along K; the two B registers hold column g at the
// same bytes. That is f16 m16n8k16, s8 m16n8k32 and s4 m16n8k64 with one instruction,
// or f16 m16n8k8, s8 m16n8k16 and s4 m16n8k32 with two (each on half the registers).
// The m16n8 accumulator layout is the same for all: d0, d1 at row g, columns
// 2*(lane % 4) + {0, 1}; d2, d3 at row g + 8.
#pragma once

#include <type_traits>

#include "gemm_common.cuh"

namespace gemm {

// One 32-byte K step on one 16 x 8 output tile: d += A(16 x 32 B) * B(32 B x 8).
// Policies: Acc (accumulator register type, four per m16n8 tile in the layout above),
// Out (C's element type), step(d, a, b0, b1) and out(d, c), the four C values of a tile.
template <typename AccT>
struct StoreAsIs {
  using Acc = AccT;
  using Out = AccT;
  __device__ __forceinline__ static void out(const Acc (&d)[4], Out (&c)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) c[i] = d[i];
  }
};

template <void (*MMA)(float (&)[4], const uint32_t (&)[4], uint32_t, uint32_t)>
struct OneMmaF32 : StoreAsIs<float> {
  __device__ __forceinline__ static void step(Acc (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    MMA(d, a, b0, b1);
  }
};

template <void (*MMA)(int32_t (&)[4], const uint32_t (&)[4], uint32_t, uint32_t)>
struct OneMmaS32 : StoreAsIs<int32_t> {
  __device__ __forceinline__ static void step(Acc (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    MMA(d, a, b0, b1);
  }
};

// FP16 accumulators: the tile's four values live as two .f16x2 registers, d[0] = (row g)
// and d[1] = (row g + 8), each holding columns 2*(lane % 4) + {0, 1}; d[2], d[3] stay
// unused. They are widened to FP32 (exactly) when C is stored, so C stays FP32.
template <void (*MMA)(uint32_t (&)[2], const uint32_t (&)[4], uint32_t, uint32_t)>
struct OneMmaF16 {
  using Acc = uint32_t;
  using Out = float;
  __device__ __forceinline__ static void step(Acc (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    uint32_t h[2] = {d[0], d[1]};
    MMA(h, a, b0, b1);
    d[0] = h[0];
    d[1] = h[1];
  }
  __device__ __forceinline__ static void out(const Acc (&d)[4], Out (&c)[4]) {
    const float2 lo = ptx::f16x2_to_f32x2(d[0]);
    const float2 hi = ptx::f16x2_to_f32x2(d[1]);
    c[0] = lo.x;
    c[1] = lo.y;
    c[2] = hi.x;
    c[3] = hi.y;
  }
};

// Half-K instructions, issued twice per step: first on (a0, a1, b0), then on (a2, a3, b1).
template <typename AccT, void (*MMA)(AccT (&)[4], const uint32_t (&)[2], uint32_t)>
struct TwoMmas : StoreAsIs<AccT> {
  using Acc = AccT;
  __device__ __forceinline__ static void step(Acc (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    const uint32_t lo[2] = {a[0], a[1]};
    const uint32_t hi[2] = {a[2], a[3]};
    MMA(d, lo, b0);
    MMA(d, hi, b1);
  }
};

// Fragment loaders for one 32-byte K step at byte k0 of a stage, built once per thread
// (lane-dependent offsets computed up front). load_a fills the four A registers of the
// m16 tile at row0; load_b fills b0, b1 of the n8 tile at n0 and b0, b1 of the one at
// n0 + 8. The four 8 x 16-byte matrices of A are {rows 0-7, 8-15} x {bytes 0-15, 16-31};
// those of B are {n 0-7: bytes 0-15, 16-31; n 8-15: bytes 0-15, 16-31}.

// ldmatrix with AW (A) and BW (B) matrices per instruction: 4, 2 or 1. Lanes 8i..8i+7
// give the row addresses of matrix i of each instruction.
template <int AW, int BW, int RB = kRowBytes>
struct Ldmatrix {
  static_assert((AW == 1 || AW == 2 || AW == 4) && (BW == 1 || BW == 2 || BW == 4), "x1, x2 or x4");
  int a_row, a_col, b_row, b_col;

  __device__ __forceinline__ explicit Ldmatrix(int lane)
      : a_row(AW == 4 ? lane % 16 : AW == 2 ? lane % 16 : lane % 8),
        a_col(AW == 4 ? (lane / 16) * 16 : 0),
        b_row(BW == 4 ? lane % 8 + (lane / 16) * 8 : lane % 8),
        b_col(BW == 1 ? 0 : ((lane / 8) % 2) * 16) {}

  __device__ __forceinline__ void load_a(uint32_t (&a)[4], uint8_t (*t)[RB], int row0, int k0) const {
    if constexpr (AW == 4) {
      ptx::ldmatrix_x4(a, &t[row0 + a_row][k0 + a_col]);
    } else if constexpr (AW == 2) {  // matrices {0, 1}, then {2, 3}
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t r[2];
        ptx::ldmatrix_x2(r, &t[row0 + a_row][k0 + h * 16]);
        a[2 * h] = r[0];
        a[2 * h + 1] = r[1];
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint32_t r[1];
        ptx::ldmatrix_x1(r, &t[row0 + a_row + (i % 2) * 8][k0 + (i / 2) * 16]);
        a[i] = r[0];
      }
    }
  }

  __device__ __forceinline__ void load_b(uint32_t (&b)[4], uint8_t (*t)[RB], int n0, int k0) const {
    if constexpr (BW == 4) {
      ptx::ldmatrix_x4(b, &t[n0 + b_row][k0 + b_col]);
    } else if constexpr (BW == 2) {  // one n8 tile per instruction
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t r[2];
        ptx::ldmatrix_x2(r, &t[n0 + h * 8 + b_row][k0 + b_col]);
        b[2 * h] = r[0];
        b[2 * h + 1] = r[1];
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint32_t r[1];
        ptx::ldmatrix_x1(r, &t[n0 + (i / 2) * 8 + b_row][k0 + (i % 2) * 16]);
        b[i] = r[0];
      }
    }
  }
};

// No ldmatrix: each lane reads its own fragment registers with 32-bit ld.shared. With B
// column-major every register is 4 contiguous bytes of the tile, so nothing needs packing.
struct SharedLoad32 {
  int g, c;  // fragment row (lane / 4) and byte column (4 * (lane % 4))

  __device__ __forceinline__ explicit SharedLoad32(int lane) : g(lane / 4), c(4 * (lane % 4)) {}

  __device__ __forceinline__ static uint32_t lds32(const uint8_t* p) {
    return *reinterpret_cast<const uint32_t*>(p);
  }
  __device__ __forceinline__ void load_a(uint32_t (&a)[4], uint8_t (*t)[kRowBytes], int row0, int k0) const {
    a[0] = lds32(&t[row0 + g][k0 + c]);
    a[1] = lds32(&t[row0 + g + 8][k0 + c]);
    a[2] = lds32(&t[row0 + g][k0 + c + 16]);
    a[3] = lds32(&t[row0 + g + 8][k0 + c + 16]);
  }
  __device__ __forceinline__ void load_b(uint32_t (&b)[4], uint8_t (*t)[kRowBytes], int n0, int k0) const {
    b[0] = lds32(&t[n0 + g][k0 + c]);
    b[1] = lds32(&t[n0 + g][k0 + c + 16]);
    b[2] = lds32(&t[n0 + 8 + g][k0 + c]);
    b[3] = lds32(&t[n0 + 8 + g][k0 + c + 16]);
  }
};

// The warp's MMAs on one shared-memory stage: kSteps 32-byte K steps of the A tile
// (rows of t_a) and the B tile (rows of t_b, B being column-major), into acc.
template <typename Policy, int kSteps, typename Loader, int RB>
__device__ __forceinline__ void warp_tile_mma(typename Policy::Acc (&acc)[kWarpM / 16][kWarpN / 8][4],
                                              const Loader& load, uint8_t (*t_a)[RB], uint8_t (*t_b)[RB],
                                              int wr, int wc) {
  constexpr int kMmaM = 16, kMmaN = 8, kStepBytes = 32;
  constexpr int kFm = kWarpM / kMmaM;  // m16 tiles per warp
  constexpr int kFn = kWarpN / kMmaN;  // n8 tiles per warp (even)
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
    uint32_t a[kFm][4], b[kFn / 2][4];
#pragma unroll
    for (int i = 0; i < kFm; ++i) load.load_a(a[i], t_a, wr + i * kMmaM, kk * kStepBytes);
#pragma unroll
    for (int j = 0; j < kFn / 2; ++j) load.load_b(b[j], t_b, wc + j * 2 * kMmaN, kk * kStepBytes);
#pragma unroll
    for (int i = 0; i < kFm; ++i)
#pragma unroll
      for (int j = 0; j < kFn; ++j)
        Policy::step(acc[i][j], a[i], b[j / 2][(j % 2) * 2], b[j / 2][(j % 2) * 2 + 1]);
  }
}

// Write the warp's m16n8 accumulators to C (row-major, N columns), two elements per
// store, converted by Policy::out.
template <typename Policy>
__device__ __forceinline__ void store_c(const typename Policy::Acc (&acc)[kWarpM / 16][kWarpN / 8][4],
                                        typename Policy::Out* C, int N, int wr, int wc, int lane) {
  using Out = typename Policy::Out;
  constexpr int kMmaM = 16, kMmaN = 8;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kBlockM + wr + lane / 4;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kBlockN + wc + 2 * (lane % 4);
  using Out2 = typename std::conditional<std::is_same<Out, float>::value, float2, int2>::type;
#pragma unroll
  for (int i = 0; i < kWarpM / kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < kWarpN / kMmaN; ++j) {
      Out v[4];
      Policy::out(acc[i][j], v);
      Out* c = C + (row0 + i * kMmaM) * N + col0 + j * kMmaN;
      *reinterpret_cast<Out2*>(c) = Out2{v[0], v[1]};
      *reinterpret_cast<Out2*>(c + 8 * static_cast<int64_t>(N)) = Out2{v[2], v[3]};
    }
}

template <typename Policy, typename Loader = Ldmatrix<4, 4>, bool kCacheL1 = false>
__device__ __forceinline__ void mma_gemm(const void* A_, const void* B_, void* C_, int N,
                                         int64_t k_bytes) {
  using Acc = typename Policy::Acc;
  __shared__ SharedTiles tiles;

  Acc acc[kWarpM / 16][kWarpN / 8][4] = {};
  const int lane = threadIdx.x % 32;
  const int wr = warp_row0(), wc = warp_col0();
  const Loader load(lane);

  pipelined_mainloop<kCacheL1>(static_cast<const uint8_t*>(A_), static_cast<const uint8_t*>(B_), k_bytes,
                               tiles, [&](int s) {
    warp_tile_mma<Policy, kBlockKBytes / 32>(acc, load, tiles.a[s], tiles.b[s], wr, wc);
  });
  store_c<Policy>(acc, static_cast<typename Policy::Out*>(C_), N, wr, wc, lane);
}

}  // namespace gemm
