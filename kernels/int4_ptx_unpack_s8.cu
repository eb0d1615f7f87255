// int4_ptx_unpack_s8: INT4 in memory, INT8 on the tensor cores. Each packed K tile is
// copied by cp.async as in int4_ptx_mma_k64, then unpacked once in shared memory to
// sign-extended INT8 (LOP3 + IMAD + PRMT per 32-bit word), and multiplied by
// ldmatrix.x4 + mma.sync m16n8k32 .s8 (native IMMA.16832.S8 on sm_89 and sm_90).
// Asks whether unpacking once per tile beats the compiler's emulation of s4 mma.sync on
// sm_90 (which unpacks the fragments again for every instruction); the answer measured on
// the H200 is in docs/measurements.md.
#include "mma_gemm.cuh"

namespace {

using gemm::kBlockKBytes;
using gemm::kBlockM;
using gemm::kBlockN;
using gemm::kRowBytes;
using gemm::kThreads;

// Unpacked rows: two INT8 per packed byte, plus the 16-byte pad (row stride 144 bytes =
// 16 mod 128, so the 8 rows of an ldmatrix land on distinct 16-byte bank groups).
constexpr int kS8RowBytes = 2 * kBlockKBytes + gemm::kSmemPadBytes;

struct UnpackedTiles {
  uint8_t a[kBlockM][kS8RowBytes];
  uint8_t b[kBlockN][kS8RowBytes];
};

// Eight signed nibbles (element 2j in the low nibble of byte j) -> eight INT8 in two words.
__device__ __forceinline__ uint2 unpack_s4x8(uint32_t w) {
  uint32_t lo = w & 0x0f0f0f0fu;         // elements 0, 2, 4, 6
  uint32_t hi = (w >> 4) & 0x0f0f0f0fu;  // elements 1, 3, 5, 7
  lo |= ((lo >> 3) & 0x01010101u) * 0xf0u;  // sign bit 3 -> bits 4-7 of each byte (no carry
  hi |= ((hi >> 3) & 0x01010101u) * 0xf0u;  // between bytes: 0xf0 * 1 fits in one)
  return make_uint2(ptx::prmt<0x5140>(lo, hi), ptx::prmt<0x7362>(lo, hi));
}

template <int ROWS>
__device__ __forceinline__ void unpack_tile(uint8_t (*dst)[kS8RowBytes], const uint8_t (*src)[kRowBytes]) {
  constexpr int kWordsPerRow = kBlockKBytes / 4;
#pragma unroll
  for (int w = threadIdx.x; w < ROWS * kWordsPerRow; w += kThreads) {
    const int row = w / kWordsPerRow, col = (w % kWordsPerRow) * 4;
    *reinterpret_cast<uint2*>(&dst[row][2 * col]) =
        unpack_s4x8(*reinterpret_cast<const uint32_t*>(&src[row][col]));
  }
}

}  // namespace

GEMM_KERNEL(int4_ptx_unpack_s8) {
  using Policy = gemm::OneMmaS32<ptx::mma_m16n8k32_s8_s32>;
  __shared__ gemm::SharedTiles tiles;
  __shared__ UnpackedTiles s8;

  int32_t acc[gemm::kWarpM / 16][gemm::kWarpN / 8][4] = {};
  const int lane = threadIdx.x % 32;
  const int wr = gemm::warp_row0(), wc = gemm::warp_col0();
  const gemm::Ldmatrix<4, 4, kS8RowBytes> load(lane);

  gemm::pipelined_mainloop(static_cast<const uint8_t*>(A_), static_cast<const uint8_t*>(B_),
                           static_cast<int64_t>(K) / 2, tiles, [&](int s) {
    unpack_tile<kBlockM>(s8.a, tiles.a[s]);
    unpack_tile<kBlockN>(s8.b, tiles.b[s]);
    __syncthreads();
    gemm::warp_tile_mma<Policy, 2 * kBlockKBytes / 32>(acc, load, s8.a, s8.b, wr, wc);
  });
  gemm::store_c<Policy>(acc, static_cast<int32_t*>(C_), N, wr, wc, lane);
}
