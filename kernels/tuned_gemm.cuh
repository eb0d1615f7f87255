// Tiling, swizzled shared-memory layout, multistage cp.async pipeline and main loop of
// the tuned mma.sync kernels (registry: study: false). They keep the study's problem and
// launcher contract (gemm_common.cuh: A row-major M x K, B column-major as N rows of K,
// C row-major, FP32 for FP16 inputs and INT32 for integers; grid (N / BLOCK_N,
// M / BLOCK_M), WARPS_M * WARPS_N * 32 threads) and change how a block works:
//
//  - large block tiles (default 128 x 256, 8 warps as 2 x 4, warp tile 64 x 64), so each
//    byte brought into shared memory feeds more MMAs;
//  - the tiles of all STAGES pipeline stages in dynamic shared memory (SMEM_BYTES per
//    block, raised above 48 KiB by the harness with cuFuncSetAttribute);
//  - rows of BLOCK_K_BYTES without padding, the 16-byte chunks of a row permuted by an
//    XOR with the row index ("swizzle") so that the 8 rows one ldmatrix phase reads fall
//    on 8 different 16-byte bank groups;
//  - ldmatrix of the next 32-byte K step issued before the MMAs of the current one
//    (fragments double-buffered in registers), one __syncthreads per K tile;
//  - blocks rasterised in groups of RASTER block rows, so that the blocks resident at
//    one time share A and B tiles in L2.
//
// All shapes are build parameters (nvcc -D, from the registry's per-kernel tiling).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ptx.cuh"

#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 256
#endif
#ifndef BLOCK_K_BYTES
#define BLOCK_K_BYTES 64
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef RASTER
#define RASTER 1
#endif

namespace tuned {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockKBytes = BLOCK_K_BYTES;  // bytes of K per tile row, as stored in global memory
constexpr int kWarpsM = WARPS_M;
constexpr int kWarpsN = WARPS_N;
constexpr int kStages = STAGES;
constexpr int kRaster = RASTER;  // block rows per rasterisation group (1: plain row order)
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBlockM / kWarpsM;
constexpr int kWarpN = kBlockN / kWarpsN;
constexpr int kFragM = kWarpM / 16;  // m16 tiles per warp
constexpr int kFragN = kWarpN / 8;   // n8 tiles per warp
constexpr int kStepBytes = 32;       // bytes of K per MMA: f16 m16n8k16, s8 m16n8k32

static_assert(kBlockM % kWarpsM == 0 && kBlockN % kWarpsN == 0, "warps must tile the block");
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tiles must be multiples of 16 x 16");
static_assert(kStages >= 2, "the pipeline needs at least two stages");
static_assert(kRaster >= 1, "RASTER is a number of block rows (1 = no grouping)");

// One tile of ROWS rows of ROW_BYTES bytes in shared memory, 16-byte chunks swizzled.
// A row of ROW_BYTES holds kChunks chunks; 128 bytes (one pass over the 32 banks) hold
// kRowsPerLine rows. Chunk c of row r is stored at chunk c ^ ((r / kRowsPerLine) % kPhases):
// the 8 rows r0 .. r0 + 7 (r0 a multiple of kRowsPerLine) read at one logical chunk c then
// land on 8 distinct 16-byte bank groups, so an ldmatrix phase is conflict-free.
template <int ROW_BYTES>
struct Swizzle {
  static constexpr int kChunks = ROW_BYTES / 16;
  static constexpr int kRowsPerLine = kChunks >= 8 ? 1 : 8 / kChunks;
  static constexpr int kPhases = kChunks >= 8 ? 8 : kChunks;
  static_assert(ROW_BYTES % 32 == 0 && (kChunks & (kChunks - 1)) == 0,
                "tile rows must be a power-of-two number (>= 2) of 16-byte chunks");

  // Byte offset of logical chunk `chunk` of row `row` inside the tile.
  __device__ __forceinline__ static constexpr uint32_t offset(int row, int chunk) {
    return static_cast<uint32_t>(row * ROW_BYTES + ((chunk ^ ((row / kRowsPerLine) % kPhases)) << 4));
  }
  // Moving by `rows` rows keeps every chunk's XOR (so a fixed byte offset moves the tile).
  static constexpr bool keeps_pattern(int rows) { return (rows / kRowsPerLine) % kPhases == 0 && rows % kRowsPerLine == 0; }
};

// The block this CTA computes: grid (N / kBlockN, M / kBlockM) walked in groups of
// kRaster block rows, down the rows of a group first, so that consecutive CTAs (which
// run at the same time) reuse each other's B tiles and a group's A tiles in L2.
struct BlockCoord {
  int m, n;  // block row and block column
};

// Block `pid` of a grid of `cols` x `rows` blocks (pid = row * cols + col) in the walk of
// raster_block, groups of GROUP rows.
template <int GROUP>
__device__ __forceinline__ BlockCoord raster_pid(int pid, int cols, int rows) {
  const int per_group = GROUP * cols;
  const int group = pid / per_group;
  const int first = group * GROUP;
  const int height = min(rows - first, GROUP);
  const int in_group = pid - group * per_group;
  return {first + in_group % height, in_group / height};
}

__device__ __forceinline__ BlockCoord raster_block() {
  if constexpr (kRaster == 1) {
    return {static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  } else {
    return raster_pid<kRaster>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);
  }
}

// cp.async copies of one ROWS x ROW_BYTES tile, rows `row_stride_bytes` apart in global
// memory: consecutive threads take consecutive 16-byte chunks (whole 32-byte sectors per
// warp), each thread's chunk and destination computed once (dst0/src0), then moved by
// whole passes of kThreads chunks.
template <int ROWS, int ROW_BYTES, bool kSwizzled>
struct TileCopy {
  using Sw = Swizzle<ROW_BYTES>;
  static constexpr int kChunks = ROW_BYTES / 16;
  static constexpr int kRowsPerPass = kThreads / kChunks;
  static constexpr int kPasses = ROWS / kRowsPerPass;
  static_assert(kThreads % kChunks == 0 && ROWS % kRowsPerPass == 0, "threads must cover the tile in whole passes");
  static_assert(!kSwizzled || Sw::keeps_pattern(kRowsPerPass), "a pass must keep the swizzle pattern");

  uint32_t dst0;        // this thread's chunk in the tile (bytes from the tile's start)
  const uint8_t* src0;  // its source in global memory at K tile 0
  int64_t stride;       // bytes between rows in global memory

  __device__ __forceinline__ TileCopy(const uint8_t* tile_src, int64_t row_stride_bytes) : stride(row_stride_bytes) {
    const int row = threadIdx.x / kChunks, chunk = threadIdx.x % kChunks;
    dst0 = kSwizzled ? Sw::offset(row, chunk) : static_cast<uint32_t>(row * ROW_BYTES + chunk * 16);
    src0 = tile_src + row * row_stride_bytes + chunk * 16;
  }

  // Issue the copies of K tile kt into the tile at shared address `tile`.
  __device__ __forceinline__ void issue(uint32_t tile, int kt) const {
    const uint8_t* src = src0 + static_cast<int64_t>(kt) * ROW_BYTES;
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      ptx::cp_async_cg_16_shared(tile + dst0 + p * kRowsPerPass * ROW_BYTES, src + p * kRowsPerPass * stride);
  }
};

// ldmatrix.x4 addressing of one warp's fragments in a swizzled tile with rows of
// ROW_BYTES. A (m16 x 32 bytes of K): lanes 0-15 give rows 0-15 at the step's first
// chunk, lanes 16-31 the same rows at its second, so the four registers are (rows 0-7,
// 8-15) x (bytes 0-15, 16-31): the m16n8k16 f16 / m16n8k32 s8 A fragment. B (two n8 tiles
// x 32 bytes of K): lanes 0-7 / 8-15 give n 0-7 at the first / second chunk, lanes 16-31
// the same for n 8-15: b0, b1 of the first n8 tile, then of the second. Per K step the
// lane's offset is precomputed; the m16 / n16 sub-tiles of the warp are constant offsets
// from it (16 rows keep the swizzle pattern).
template <int ROW_BYTES>
struct FragAddr {
  using Sw = Swizzle<ROW_BYTES>;
  static constexpr int kSteps = ROW_BYTES / kStepBytes;
  static_assert(Sw::keeps_pattern(16), "16 rows must keep the swizzle pattern");
  uint32_t a[kSteps], b[kSteps];

  __device__ __forceinline__ FragAddr(int lane, int warp_row0, int warp_col0, uint32_t b_tile_offset) {
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      a[ks] = Sw::offset(warp_row0 + lane % 16, 2 * ks + lane / 16);
      b[ks] = b_tile_offset + Sw::offset(warp_col0 + lane % 8 + (lane / 16) * 8, 2 * ks + (lane / 8) % 2);
    }
  }

  // Fragments of K step ks of the stage at shared address `stage`.
  __device__ __forceinline__ void load(uint32_t (&fa)[kFragM][4], uint32_t (&fb)[kFragN / 2][4], uint32_t stage,
                                       int ks) const {
#pragma unroll
    for (int i = 0; i < kFragM; ++i) ptx::ldmatrix_x4_shared(fa[i], stage + a[ks] + i * 16 * ROW_BYTES);
#pragma unroll
    for (int j = 0; j < kFragN / 2; ++j) ptx::ldmatrix_x4_shared(fb[j], stage + b[ks] + j * 16 * ROW_BYTES);
  }
};

// The MMA of one 16 x 8 tile and one 32-byte K step, and C's element type.
struct MmaF16F32 {
  using Acc = float;
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    ptx::mma_m16n8k16_f16_f32(d, a, b0, b1);
  }
};

struct MmaS8S32 {
  using Acc = int32_t;
  __device__ __forceinline__ static void mma(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    ptx::mma_m16n8k32_s8_s32(d, a, b0, b1);
  }
};

// All MMAs of the warp tile for one K step, n8 tiles in serpentine order (the B
// fragment of the last MMA of row i is the first of row i + 1).
template <typename Mma>
__device__ __forceinline__ void warp_mma(typename Mma::Acc (&acc)[kFragM][kFragN][4], const uint32_t (&fa)[kFragM][4],
                                         const uint32_t (&fb)[kFragN / 2][4]) {
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int jj = 0; jj < kFragN; ++jj) {
      const int j = (i % 2) ? kFragN - 1 - jj : jj;
      Mma::mma(acc[i][j], fa[i], fb[j / 2][(j % 2) * 2], fb[j / 2][(j % 2) * 2 + 1]);
    }
}

// The warp's accumulators to C (row-major, N columns): each lane stores two adjacent
// elements of rows g and g + 8 (g = lane / 4) per 16 x 8 tile, so the four lanes of a row
// write one 32-byte sector.
template <typename Acc>
__device__ __forceinline__ void store_c(const Acc (&acc)[kFragM][kFragN][4], Acc* C, int N, BlockCoord blk,
                                        int warp_row0, int warp_col0, int lane) {
  using Acc2 = typename std::conditional<std::is_same<Acc, float>::value, float2, int2>::type;
  const int64_t row0 = static_cast<int64_t>(blk.m) * kBlockM + warp_row0 + lane / 4;
  const int64_t col0 = static_cast<int64_t>(blk.n) * kBlockN + warp_col0 + 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j) {
      Acc* c = C + (row0 + i * 16) * N + col0 + j * 8;
      *reinterpret_cast<Acc2*>(c) = Acc2{acc[i][j][0], acc[i][j][1]};
      *reinterpret_cast<Acc2*>(c + 8 * static_cast<int64_t>(N)) = Acc2{acc[i][j][2], acc[i][j][3]};
    }
}

// Shared memory of the one-buffer-per-stage kernels: kStages x (A tile + B tile).
constexpr int kTileABytes = kBlockM * kBlockKBytes;
constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockKBytes;
constexpr int kPipelineSmemBytes = kStages * kStageBytes;

// C = A * B for FP16 (Mma = MmaF16F32) or INT8 (MmaS8S32) inputs: the block's A and B
// tiles of each K tile are copied by cp.async into stage kt % kStages, kStages - 1 tiles
// ahead, and multiplied from there. k_bytes: bytes per row of A and per column of B.
//
// Per K tile, with kSteps = kBlockKBytes / 32 K steps: at step 0 the copies of tile
// kt + kStages - 1 are issued into the stage tile kt - 1 used (every warp left it at the
// barrier of tile kt - 1); at the last step the thread waits for tile kt + 1, and a
// barrier makes it visible to all, before that step's ldmatrix of tile kt + 1's first
// fragments. Fragments of step ks + 1 are loaded before the MMAs of step ks.
template <typename Mma>
__device__ __forceinline__ void pipelined_gemm(const void* A_, const void* B_, void* C_, int N, int64_t k_bytes) {
  using Acc = typename Mma::Acc;
  using Frag = FragAddr<kBlockKBytes>;
  constexpr int kSteps = Frag::kSteps;
  static_assert(kSteps % 2 == 0, "an even number of K steps per tile (the fragment buffers alternate)");
  extern __shared__ __align__(128) uint8_t smem[];

  const uint32_t smem0 = ptx::smem_u32(smem);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row0 = (warp / kWarpsN) * kWarpM, warp_col0 = (warp % kWarpsN) * kWarpN;
  const BlockCoord blk = raster_block();
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  const TileCopy<kBlockM, kBlockKBytes, true> copy_a(A + blk.m * kBlockM * k_bytes, k_bytes);
  const TileCopy<kBlockN, kBlockKBytes, true> copy_b(B + blk.n * kBlockN * k_bytes, k_bytes);
  const Frag frag(lane, warp_row0, warp_col0, kTileABytes);
  const int k_tiles = static_cast<int>(k_bytes / kBlockKBytes);

  auto issue = [&](int stage, int kt) {
    const uint32_t s = smem0 + stage * kStageBytes;
    copy_a.issue(s, kt);
    copy_b.issue(s + kTileABytes, kt);
  };

  Acc acc[kFragM][kFragN][4] = {};
  uint32_t fa[2][kFragM][4], fb[2][kFragN / 2][4];

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) issue(s, s);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<kStages - 2>();  // tile 0 has landed
  __syncthreads();

  int read_stage = 0, write_stage = kStages - 1;
  frag.load(fa[0], fb[0], smem0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks == kSteps - 1) {
        ptx::cp_async_wait<kStages - 2>();  // tile kt + 1 has landed
        __syncthreads();
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
      }
      frag.load(fa[(ks + 1) % 2], fb[(ks + 1) % 2], smem0 + read_stage * kStageBytes, (ks + 1) % kSteps);
      if (ks == 0) {
        if (kt + kStages - 1 < k_tiles) issue(write_stage, kt + kStages - 1);
        ptx::cp_async_commit();
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
      }
      warp_mma<Mma>(acc, fa[ks % 2], fb[ks % 2]);
    }
  }
  ptx::cp_async_wait<0>();
  store_c(acc, static_cast<Acc*>(C_), N, blk, warp_row0, warp_col0, lane);
}

}  // namespace tuned

#ifdef SMEM_BYTES
#define SMEM_BYTES_GIVEN 1
#define SMEM_BYTES_VALUE SMEM_BYTES
#else
#define SMEM_BYTES_GIVEN 0
#define SMEM_BYTES_VALUE 0
#endif

// The launcher of the tuned kernels: the study's signature (GEMM_KERNEL in
// gemm_common.cuh), at most one block of kThreads per SM asked of the register allocator
// (the 64 x 64 warp tile holds 128 accumulators per thread), dynamic shared memory.
// SMEM_BYTES, when given (the registry's tiling.smem_bytes), must equal what the kernel
// lays out: the harness launches with that many bytes.
#define TUNED_GEMM_KERNEL(name, smem_bytes)                                                         \
  static_assert(!(SMEM_BYTES_GIVEN) || (smem_bytes) == (SMEM_BYTES_VALUE),                            \
                #name ": tiling.smem_bytes in the registry differs from the shared memory it lays out"); \
  extern "C" __global__ void __launch_bounds__(tuned::kThreads, 1)                                  \
      name(const void* __restrict__ A_, const void* __restrict__ B_, void* __restrict__ C_, int M, int N, int K)
