// int4_ptx_mma_k64_b_trans: int4_ptx_mma_k64 with B stored transposed in global memory,
// i.e. row-major K x N (N/2 bytes per row, two elements per byte along N, the lower n in
// the low nibble) instead of column-major (k64 ablation: B layout). A block's B tile is
// then 128 rows of K with 16 bytes each (its 32 columns), N/2 bytes apart: each cp.async
// moves 16 bytes, half a 32-byte sector, where the column-major layout moves whole rows
// of 64 bytes. The staged tile is transposed nibble by nibble in shared memory into the
// column-major tile int4_ptx_mma_k64 reads, after which the same ldmatrix.x4 and
// mma.sync m16n8k64 follow.
#include "mma_gemm.cuh"

namespace {

using gemm::kBlockKBytes;
using gemm::kBlockM;
using gemm::kBlockN;
using gemm::kRowBytes;
using gemm::kStages;
using gemm::kThreads;

constexpr int kTileK = 2 * kBlockKBytes;  // K elements per tile (two per byte)
constexpr int kBRowBytes = kBlockN / 2;   // bytes of one K row of the B tile
static_assert(kBRowBytes % 16 == 0, "BLOCK_N must be a multiple of 32 for 16-byte cp.async");

struct alignas(128) TransTiles {
  uint8_t a[kStages][kBlockM][kRowBytes];          // A tiles, as in every kernel
  uint8_t bt[kStages][kTileK][kBRowBytes + 16];    // B tiles as they arrive (K rows, padded)
  uint8_t b[kBlockN][kRowBytes];                   // the current B tile, column-major
};

// Column-major word (n, bytes 4w..4w+3) = K elements 8w..8w+7 of column n: eight nibbles,
// one from each of eight K rows of the row-major tile. Lanes take consecutive n, so the
// byte reads of a warp fall in one row (a broadcast).
__device__ __forceinline__ void transpose_b(uint8_t (*dst)[kRowBytes], const uint8_t (*src)[kBRowBytes + 16]) {
  constexpr int kWords = kBlockN * kBlockKBytes / 4;
#pragma unroll
  for (int i = threadIdx.x; i < kWords; i += kThreads) {
    const int n = i % kBlockN, w = i / kBlockN;
    const int shift = 4 * (n % 2);
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) word |= ((src[8 * w + j][n / 2] >> shift) & 0xfu) << (4 * j);
    *reinterpret_cast<uint32_t*>(&dst[n][4 * w]) = word;
  }
}

}  // namespace

GEMM_KERNEL(int4_ptx_mma_k64_b_trans) {
  using Policy = gemm::OneMmaS32<ptx::mma_m16n8k64_s4_s32>;
  __shared__ TransTiles tiles;

  int32_t acc[gemm::kWarpM / 16][gemm::kWarpN / 8][4] = {};
  const int lane = threadIdx.x % 32;
  const int wr = gemm::warp_row0(), wc = gemm::warp_col0();
  const gemm::Ldmatrix<4, 4> load(lane);

  const int64_t k_bytes = static_cast<int64_t>(K) / 2;  // bytes per row of A
  const int64_t ldb = N / 2;                            // bytes per row of B
  const uint8_t* a_block = static_cast<const uint8_t*>(A_) + static_cast<int64_t>(blockIdx.y) * kBlockM * k_bytes;
  const uint8_t* b_block = static_cast<const uint8_t*>(B_) + static_cast<int64_t>(blockIdx.x) * kBRowBytes;

  gemm::stage_pipeline(static_cast<int>(k_bytes / kBlockKBytes), [&](int s, int kt) {
    gemm::load_tile_async<kBlockM>(tiles.a[s], a_block + kt * kBlockKBytes, k_bytes);
    const uint8_t* b_tile = b_block + static_cast<int64_t>(kt) * kTileK * ldb;
#pragma unroll
    for (int c = threadIdx.x; c < kTileK * kBRowBytes / 16; c += kThreads) {
      const int row = c / (kBRowBytes / 16), col = (c % (kBRowBytes / 16)) * 16;
      ptx::cp_async_cg_16(&tiles.bt[s][row][col], b_tile + row * ldb + col);
    }
  }, [&](int s) {
    transpose_b(tiles.b, tiles.bt[s]);
    __syncthreads();
    gemm::warp_tile_mma<Policy, kBlockKBytes / 32>(acc, load, tiles.a[s], tiles.b, wr, wc);
  });
  gemm::store_c<Policy>(acc, static_cast<int32_t*>(C_), N, wr, wc, lane);
}
