// int4_wmma: the study's INT4 baseline. WMMA m8n8k32 fragments of signed 4-bit inputs
// (wmma::experimental::precision::s4) with INT32 accumulators, loaded from the
// double-buffered cp.async tiles of gemm_common.cuh. A row-major, B column-major,
// two elements per byte along K; C row-major INT32.
#include <mma.h>

#include "gemm_common.cuh"

using namespace nvcuda;
using s4 = wmma::experimental::precision::s4;

namespace {
constexpr int kFragM = 8, kFragN = 8, kFragK = 32;
constexpr int kFm = gemm::kWarpM / kFragM;
constexpr int kFn = gemm::kWarpN / kFragN;
constexpr int kLdm = gemm::kRowBytes * 2;                    // elements: two per byte
constexpr int kKSteps = gemm::kBlockKBytes / (kFragK / 2);   // 16 bytes per fragment K
}  // namespace

GEMM_KERNEL(int4_wmma) {
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
  gemm::pipelined_mainloop(A, B, static_cast<int64_t>(K) / 2, tiles, [&](int s) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      wmma::fragment<wmma::matrix_a, kFragM, kFragN, kFragK, s4, wmma::row_major> a[kFm];
      wmma::fragment<wmma::matrix_b, kFragM, kFragN, kFragK, s4, wmma::col_major> b[kFn];
#pragma unroll
      for (int i = 0; i < kFm; ++i)
        wmma::load_matrix_sync(a[i], &tiles.a[s][wr + i * kFragM][kk * kFragK / 2], kLdm);
#pragma unroll
      for (int j = 0; j < kFn; ++j)
        wmma::load_matrix_sync(b[j], &tiles.b[s][wc + j * kFragN][kk * kFragK / 2], kLdm);
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
