// int8_wmma: the study's INT8 baseline. WMMA m16n16k16 fragments of signed 8-bit
// inputs with INT32 accumulators, loaded from the double-buffered cp.async tiles of
// gemm_common.cuh. A row-major, B column-major, C row-major INT32.
#include <mma.h>

#include "gemm_common.cuh"

using namespace nvcuda;

namespace {
constexpr int kFragM = 16, kFragN = 16, kFragK = 16;
constexpr int kFm = gemm::kWarpM / kFragM;
constexpr int kFn = gemm::kWarpN / kFragN;
constexpr int kLdm = gemm::kRowBytes;                  // elements = bytes for INT8
constexpr int kKSteps = gemm::kBlockKBytes / kFragK;
}  // namespace

GEMM_KERNEL(int8_wmma) {
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  auto* C = static_cast<int*>(C_);
  __shared__ gemm::SharedTiles tiles;

  wmma::fragment<wmma::accumulator, kFragM, kFragN, kFragK, int> acc[kFm][kFn];
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j) wmma::fill_fragment(acc[i][j], 0);

  const int wr = gemm::warp_row0(), wc = gemm::warp_col0();
  gemm::pipelined_mainloop(A, B, static_cast<int64_t>(K), tiles, [&](int s) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      wmma::fragment<wmma::matrix_a, kFragM, kFragN, kFragK, signed char, wmma::row_major> a[kFm];
      wmma::fragment<wmma::matrix_b, kFragM, kFragN, kFragK, signed char, wmma::col_major> b[kFn];
#pragma unroll
      for (int i = 0; i < kFm; ++i)
        wmma::load_matrix_sync(
            a[i], reinterpret_cast<const signed char*>(&tiles.a[s][wr + i * kFragM][kk * kFragK]), kLdm);
#pragma unroll
      for (int j = 0; j < kFn; ++j)
        wmma::load_matrix_sync(
            b[j], reinterpret_cast<const signed char*>(&tiles.b[s][wc + j * kFragN][kk * kFragK]), kLdm);
#pragma unroll
      for (int i = 0; i < kFm; ++i)
#pragma unroll
        for (int j = 0; j < kFn; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  });

  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * gemm::kBlockM + wr;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * gemm::kBlockN + wc;
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j)
      wmma::store_matrix_sync(C + (row0 + i * kFragM) * N + col0 + j * kFragN, acc[i][j], N,
                              wmma::mem_row_major);
}
