// int8_ptx_mma_k32: int8_wmma with the WMMA calls replaced by hand-written PTX:
// ldmatrix.x4 for the A and B fragments and mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.
// One m16n8k32 instruction per 16x8 output tile per 32-element K step (the public
// study code issues m16n8k16 twice per K = 32 step instead). Same tiles, pipeline and
// layouts as the baseline: A row-major, B column-major, C row-major INT32.
#include "gemm_common.cuh"

namespace {
constexpr int kMmaM = 16, kMmaN = 8, kMmaKBytes = 32;
constexpr int kFm = gemm::kWarpM / kMmaM;          // m16 tiles per warp
constexpr int kFn = gemm::kWarpN / kMmaN;          // n8 tiles per warp (even)
constexpr int kKSteps = gemm::kBlockKBytes / kMmaKBytes;
}  // namespace

GEMM_KERNEL(int8_ptx_mma_k32) {
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  auto* C = static_cast<int32_t*>(C_);
  __shared__ gemm::SharedTiles tiles;

  int32_t acc[kFm][kFn][4] = {};
  const int lane = threadIdx.x % 32;
  const int wr = gemm::warp_row0(), wc = gemm::warp_col0();
  // ldmatrix.x4 row addresses. A: tiles {rows 0-7, 8-15} x {k bytes 0-15, 16-31} give
  // a0..a3 of the m16n8k32 A fragment. B (N rows of K): tiles {n 0-7: k 0-15, k 16-31,
  // n 8-15: k 0-15, k 16-31} give b0, b1 of two adjacent n8 tiles.
  const int a_row = lane % 16, a_col = (lane / 16) * 16;
  const int b_row = lane % 8 + (lane / 16) * 8, b_col = ((lane / 8) % 2) * 16;

  gemm::pipelined_mainloop(A, B, static_cast<int64_t>(K), tiles, [&](int s) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      uint32_t a[kFm][4], b[kFn / 2][4];
#pragma unroll
      for (int i = 0; i < kFm; ++i)
        ptx::ldmatrix_x4(a[i], &tiles.a[s][wr + i * kMmaM + a_row][kk * kMmaKBytes + a_col]);
#pragma unroll
      for (int j = 0; j < kFn / 2; ++j)
        ptx::ldmatrix_x4(b[j], &tiles.b[s][wc + j * 2 * kMmaN + b_row][kk * kMmaKBytes + b_col]);
#pragma unroll
      for (int i = 0; i < kFm; ++i)
#pragma unroll
        for (int j = 0; j < kFn; ++j)
          ptx::mma_m16n8k32_s8_s32(acc[i][j], a[i], b[j / 2][(j % 2) * 2], b[j / 2][(j % 2) * 2 + 1]);
    }
  });

  // Accumulator layout: d0, d1 at (row lane/4, cols 2*(lane%4) + {0,1}); d2, d3 at row + 8.
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * gemm::kBlockM + wr + lane / 4;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * gemm::kBlockN + wc + 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j) {
      int32_t* c = C + (row0 + i * kMmaM) * N + col0 + j * kMmaN;
      *reinterpret_cast<int2*>(c) = make_int2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<int2*>(c + 8 * static_cast<int64_t>(N)) = make_int2(acc[i][j][2], acc[i][j][3]);
    }
}
