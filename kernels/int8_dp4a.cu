// int8_dp4a: INT8 GEMM without tensor cores: the same tiles and double-buffered cp.async
// pipeline as int8_wmma, with each lane computing 8 outputs of its warp tile by dp4a
// (four s8 x s8 products summed into s32 per instruction) on 32-bit ld.shared words.
// A row-major, B column-major, C row-major INT32.
#include "gemm_common.cuh"

namespace {
constexpr int kOutPerLane = gemm::kWarpM * gemm::kWarpN / 32;  // 8 with 16 x 16 warp tiles
constexpr int kLanesPerRow = gemm::kWarpN / kOutPerLane;       // lanes sharing one row of C
static_assert(gemm::kWarpN % kOutPerLane == 0, "a lane's outputs lie in one row");
}  // namespace

GEMM_KERNEL(int8_dp4a) {
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  auto* C = static_cast<int32_t*>(C_);
  __shared__ gemm::SharedTiles tiles;

  const int lane = threadIdx.x % 32;
  const int wr = gemm::warp_row0(), wc = gemm::warp_col0();
  const int row = wr + lane / kLanesPerRow;
  const int col = wc + (lane % kLanesPerRow) * kOutPerLane;
  int32_t acc[kOutPerLane] = {};

  gemm::pipelined_mainloop(A, B, static_cast<int64_t>(K), tiles, [&](int s) {
#pragma unroll
    for (int k = 0; k < gemm::kBlockKBytes; k += 4) {
      const int a = *reinterpret_cast<const int*>(&tiles.a[s][row][k]);
#pragma unroll
      for (int j = 0; j < kOutPerLane; ++j)
        acc[j] = __dp4a(a, *reinterpret_cast<const int*>(&tiles.b[s][col + j][k]), acc[j]);
    }
  });

  int32_t* c = C + (static_cast<int64_t>(blockIdx.y) * gemm::kBlockM + row) * N +
               static_cast<int64_t>(blockIdx.x) * gemm::kBlockN + col;
#pragma unroll
  for (int j = 0; j < kOutPerLane; j += 4)
    *reinterpret_cast<int4*>(c + j) = make_int4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3]);
}
