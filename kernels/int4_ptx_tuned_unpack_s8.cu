// int4_ptx_tuned_unpack_s8: INT4 in memory, INT8 on the tensor cores, in the tuned block of
// tuned_gemm.cuh (128 x 256 block of 8 warps, 64 x 64 warp tiles, rasterised grid). The
// packed K tiles (BLOCK_K_BYTES bytes per row = 2 * BLOCK_K_BYTES INT4) arrive by cp.async
// in a STAGES-deep pipeline; each is unpacked once, by the whole block, into one of two
// INT8 tiles (XOR-swizzled rows of 2 * BLOCK_K_BYTES bytes), which the warps multiply
// with ldmatrix.x4 + mma.sync m16n8k32 .s8 exactly as int8_ptx_tuned does.
//
// The unpacking of tile kt + 1 is issued between the MMAs of tile kt (other INT8 buffer),
// so the integer pipe works while the tensor pipe does; one barrier per K tile orders both.
// (After the last tile the block unpacks a stale stage into the INT8 tile nobody reads
// again: no branch in the loop, so the compiler can interleave the two.)
// Nibbles are unpacked without reordering them into K order: a 32-bit word of 8 INT4
// becomes the word of its 4 low nibbles (elements 0, 2, 4, 6) and the word of its 4 high
// ones (1, 3, 5, 7). The same permutation of K applies to the rows of A and the columns of
// B, so every dot product, and C, is unchanged (the sum over K does not depend on order).
// Each nibble lands in the top half of its byte, i.e. as 16 times its value, so the MMAs
// accumulate 256 C and the epilogue shifts right by 8 (exact). |256 C| <= 256 * 64 * K
// stays below 2^31 for K < 131072.
// Shared memory: STAGES packed stages + 2 INT8 tiles = (STAGES + 4) x (BLOCK_M + BLOCK_N)
// x BLOCK_K_BYTES bytes.
#include "tuned_gemm.cuh"

namespace {

using namespace tuned;

constexpr int kPackedRowBytes = kBlockKBytes;
constexpr int kS8RowBytes = 2 * kBlockKBytes;
constexpr int kRows = kBlockM + kBlockN;  // A rows, then B rows (B column-major: N rows of K)
constexpr int kPackedStageBytes = kRows * kPackedRowBytes;
constexpr int kS8TileBytes = kRows * kS8RowBytes;
constexpr int kSmemBytes = kStages * kPackedStageBytes + 2 * kS8TileBytes;

using S8Swizzle = Swizzle<kS8RowBytes>;
// One unpack item: one 16-byte chunk (32 INT4) of a packed row -> two 16-byte chunks of INT8.
constexpr int kPackedChunks = kPackedRowBytes / 16;
constexpr int kItems = kRows * kPackedChunks / kThreads;  // items per thread per K tile
static_assert(kRows * kPackedChunks % kThreads == 0, "threads must share the unpacking evenly");
static_assert(S8Swizzle::keeps_pattern(kBlockM), "B's INT8 rows follow A's in one swizzled tile");
static_assert(kStages >= 3, "tile kt + 1 is unpacked while tile kt is multiplied: three stages at least");

// Eight INT4 (two per byte, element 2j in the low nibble of byte j) -> eight INT8, each 16
// times its element: x = the low nibbles moved up (elements 0, 2, 4, 6), y = the high nibbles
// (1, 3, 5, 7), the other nibble of each byte cleared. A byte whose top four bits are the
// nibble n and whose low four are 0 reads as s8 16 v, v the signed value of n, so no sign
// extension is needed: 3 integer instructions per word instead of 7.
__device__ __forceinline__ uint2 unpack_s4x8_x16(uint32_t w) {
  return make_uint2((w << 4) & 0xf0f0f0f0u, w & 0xf0f0f0f0u);
}

// Unpack item `item` of the packed stage at `packed` into the INT8 tile at `s8`: packed
// chunk c of a row (rows consecutive, unswizzled) -> INT8 chunks 2c and 2c + 1 of that row.
__device__ __forceinline__ void unpack_item(uint32_t s8, uint32_t packed, int item) {
  const int row = item / kPackedChunks, chunk = item % kPackedChunks;
  const uint4 w = ptx::ld_shared_v4(packed + row * kPackedRowBytes + chunk * 16);
  const uint2 e0 = unpack_s4x8_x16(w.x), e1 = unpack_s4x8_x16(w.y), e2 = unpack_s4x8_x16(w.z),
              e3 = unpack_s4x8_x16(w.w);
  ptx::st_shared_v4(s8 + S8Swizzle::offset(row, 2 * chunk), make_uint4(e0.x, e0.y, e1.x, e1.y));
  ptx::st_shared_v4(s8 + S8Swizzle::offset(row, 2 * chunk + 1), make_uint4(e2.x, e2.y, e3.x, e3.y));
}

}  // namespace

TUNED_GEMM_KERNEL(int4_ptx_tuned_unpack_s8, kSmemBytes) {
  using Frag = FragAddr<kS8RowBytes>;
  constexpr int kSteps = Frag::kSteps;
  extern __shared__ __align__(128) uint8_t smem[];

  const int64_t k_bytes = static_cast<int64_t>(K) / 2;
  const uint32_t smem0 = ptx::smem_u32(smem);
  const uint32_t s8_0 = smem0 + kStages * kPackedStageBytes;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row0 = (warp / kWarpsN) * kWarpM, warp_col0 = (warp % kWarpsN) * kWarpN;
  const BlockCoord blk = raster_block();
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  const TileCopy<kBlockM, kPackedRowBytes, false> copy_a(A + blk.m * kBlockM * k_bytes, k_bytes);
  const TileCopy<kBlockN, kPackedRowBytes, false> copy_b(B + blk.n * kBlockN * k_bytes, k_bytes);
  const Frag frag(lane, warp_row0, warp_col0, kBlockM * kS8RowBytes);
  const int k_tiles = static_cast<int>(k_bytes / kBlockKBytes);

  auto issue = [&](int kt) {
    const uint32_t s = smem0 + (kt % kStages) * kPackedStageBytes;
    copy_a.issue(s, kt);
    copy_b.issue(s + kBlockM * kPackedRowBytes, kt);
  };
  auto packed = [&](int kt) { return smem0 + (kt % kStages) * kPackedStageBytes; };
  auto s8 = [&](int kt) { return s8_0 + (kt % 2) * kS8TileBytes; };

  int32_t acc[kFragM][kFragN][4] = {};
  uint32_t fa[2][kFragM][4], fb[2][kFragN / 2][4];

  // Tiles 0 .. kStages - 2 in flight; tile 0 unpacked once tiles 0 and 1 have landed.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) issue(s);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<kStages - 3>();
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kItems; ++i) unpack_item(s8(0), packed(0), threadIdx.x + i * kThreads);

  for (int kt = 0; kt < k_tiles; ++kt) {
    // INT8 tile kt complete and visible; packed tile kt + 1 landed (each thread waited);
    // every warp is done with INT8 tile kt - 1 and packed stage kt - 1.
    __syncthreads();
    if (kt + kStages - 1 < k_tiles) issue(kt + kStages - 1);  // into the stage of tile kt - 1
    ptx::cp_async_commit();
    frag.load(fa[0], fb[0], s8(kt), 0);
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      if (ks + 1 < kSteps) frag.load(fa[(ks + 1) % 2], fb[(ks + 1) % 2], s8(kt), ks + 1);
#pragma unroll
      for (int i = 0; i < kItems; ++i)
        if (i % kSteps == ks) unpack_item(s8(kt + 1), packed(kt + 1), threadIdx.x + i * kThreads);
      warp_mma<MmaS8S32>(acc, fa[ks % 2], fb[ks % 2]);
    }
    ptx::cp_async_wait<kStages - 3>();  // packed tile kt + 2 has landed
  }
  ptx::cp_async_wait<0>();
  // Every product was (16 a) (16 b) = 256 a b, so every sum is a multiple of 256: C exactly.
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] >>= 8;
  store_c(acc, static_cast<int32_t*>(C_), N, blk, warp_row0, warp_col0, lane);
}
