// Tiling, shared-memory layout, the cp.async tile pipeline and the launcher
// signature shared by every GEMM kernel in this directory.
//
// Problem: C = A * B with
//   A  M x K, row-major        (lda = K elements)
//   B  K x N, column-major     (stored as N rows of K elements, ldb = K)
//   C  M x N, row-major        (ldc = N elements; f32 for FP16 inputs, s32 for INT8/INT4)
// INT4 elements are packed two per byte along K, the element with the lower k index
// in the low nibble (the order mma.sync .s4 and wmma s4 expect).
//
// Tile sizes are build parameters (nvcc -D...); the defaults are the study's:
// 8 warps as a 4 x 2 grid of 16 x 16 warp tiles, block tile 64 x 32, and a K tile of
// 64 bytes per row (32 FP16, 64 INT8 or 128 INT4 elements).
#pragma once

#include <cstdint>

#include "ptx.cuh"

#ifndef BLOCK_M
#define BLOCK_M 64
#endif
#ifndef BLOCK_N
#define BLOCK_N 32
#endif
#ifndef BLOCK_K_BYTES
#define BLOCK_K_BYTES 64
#endif
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 2
#endif

namespace gemm {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockKBytes = BLOCK_K_BYTES;
constexpr int kWarpsM = WARPS_M;
constexpr int kWarpsN = WARPS_N;
constexpr int kStages = STAGES;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBlockM / kWarpsM;  // rows of C per warp
constexpr int kWarpN = kBlockN / kWarpsN;  // columns of C per warp
// Shared-memory row stride: one 16-byte pad per row moves the 8 rows read by one
// ldmatrix (or wmma load) onto 8 distinct 16-byte bank groups (80 mod 128 cycles
// through all 8), so those reads are free of bank conflicts.
constexpr int kSmemPadBytes = 16;
constexpr int kRowBytes = kBlockKBytes + kSmemPadBytes;

static_assert(kBlockKBytes % 32 == 0, "BLOCK_K_BYTES must be a multiple of 32");
static_assert(kBlockM % kWarpsM == 0 && kBlockN % kWarpsN == 0, "warps must tile the block");
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tiles must be multiples of 16x16");
static_assert(kStages >= 2, "the pipeline needs at least two stages");

// One pipeline stage per index: the A tile (BLOCK_M rows of K) and the B tile
// (BLOCK_N rows of K, B being column-major), each row padded to kRowBytes.
struct alignas(128) SharedTiles {
  uint8_t a[kStages][kBlockM][kRowBytes];
  uint8_t b[kStages][kBlockN][kRowBytes];
};

// Issue the cp.async copies of one ROWS x kBlockKBytes tile. Consecutive threads take
// consecutive 16-byte chunks of a row, so a warp reads whole 32-byte sectors.
template <int ROWS, bool kCacheL1 = false>
__device__ __forceinline__ void load_tile_async(uint8_t (*dst)[kRowBytes], const uint8_t* src,
                                                int64_t ld_bytes) {
  constexpr int kChunksPerRow = kBlockKBytes / 16;
  constexpr int kChunks = ROWS * kChunksPerRow;
#pragma unroll
  for (int c = threadIdx.x; c < kChunks; c += kThreads) {
    const int row = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 16;
    if constexpr (kCacheL1) {
      ptx::cp_async_ca_16(&dst[row][col], src + row * ld_bytes + col);
    } else {
      ptx::cp_async_cg_16(&dst[row][col], src + row * ld_bytes + col);
    }
  }
}

// The multistage cp.async pipeline over k_tiles K tiles. `load_stage(stage, kt)` issues
// the cp.async copies of K tile kt into stage buffer `stage`; `compute(stage)` consumes
// that stage once its copies have landed. With kStages = 2 this is the double buffer of
// the study's baselines: tile k+1 is in flight while tile k is computed.
template <typename LoadStage, typename Compute>
__device__ __forceinline__ void stage_pipeline(int k_tiles, LoadStage&& load_stage, Compute&& compute) {
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_stage(next % kStages, next);
    ptx::cp_async_commit();
    ptx::cp_async_wait<kStages - 1>();  // tile kt has landed
    __syncthreads();
    compute(kt % kStages);
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
}

// The main loop over K of every kernel with A row-major and B column-major: the A and B
// tiles of the block go to tiles.a[stage] / tiles.b[stage], consumed by `compute(stage)`.
// k_bytes: bytes per row of A and per column of B (K * bits per element / 8).
// kCacheL1: cp.async.ca (also cache in L1) instead of cp.async.cg (L2 only).
template <bool kCacheL1 = false, typename Compute>
__device__ __forceinline__ void pipelined_mainloop(const uint8_t* A, const uint8_t* B,
                                                   int64_t k_bytes, SharedTiles& tiles,
                                                   Compute&& compute) {
  const uint8_t* a_block = A + static_cast<int64_t>(blockIdx.y) * kBlockM * k_bytes;
  const uint8_t* b_block = B + static_cast<int64_t>(blockIdx.x) * kBlockN * k_bytes;
  stage_pipeline(static_cast<int>(k_bytes / kBlockKBytes), [&](int s, int kt) {
    load_tile_async<kBlockM, kCacheL1>(tiles.a[s], a_block + kt * kBlockKBytes, k_bytes);
    load_tile_async<kBlockN, kCacheL1>(tiles.b[s], b_block + kt * kBlockKBytes, k_bytes);
  }, compute);
}

// Warp coordinates inside the block tile.
__device__ __forceinline__ int warp_row0() { return (threadIdx.x / 32) / kWarpsN * kWarpM; }
__device__ __forceinline__ int warp_col0() { return (threadIdx.x / 32) % kWarpsN * kWarpN; }

}  // namespace gemm

// The one launcher signature of every kernel: grid (N / BLOCK_N, M / BLOCK_M),
// block kThreads, no dynamic shared memory. M, N, K are in elements and must be
// multiples of BLOCK_M, BLOCK_N and the K tile; the host refuses other sizes.
#define GEMM_KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(gemm::kThreads)                     \
      name(const void* __restrict__ A_, const void* __restrict__ B_, void* __restrict__ C_, \
           int M, int N, int K)
