// The body shared by the WMMA baselines (fp16_wmma, int8_wmma, int4_wmma): a warp tile
// of FM x FN WMMA fragments fed from the cp.async pipeline of gemm_common.cuh, stored
// straight to global memory. Each baseline file instantiates it with its fragment shape
// and element types, so the three differ only in those.
#pragma once

#include <mma.h>

#include "gemm_common.cuh"

namespace gemm {

// How a WMMA fragment of element type T is addressed in shared memory.
template <typename T>
struct WmmaElem {
  static constexpr int kBits = 8 * sizeof(T);
  using Ptr = const T*;
};
template <>
struct WmmaElem<nvcuda::wmma::experimental::precision::s4> {
  static constexpr int kBits = 4;
  using Ptr = const void*;  // sub-byte fragments take an untyped pointer
};

// C = A * B for the block (blockIdx.x, blockIdx.y) with WMMA fragments of shape
// FRAG_M x FRAG_N x FRAG_K, inputs of element type In, accumulators of type Acc
// (also C's type). A row-major, B column-major, C row-major.
template <int FRAG_M, int FRAG_N, int FRAG_K, typename In, typename Acc>
__device__ __forceinline__ void wmma_gemm(const void* A_, const void* B_, void* C_, int N, int K) {
  using namespace nvcuda;
  using Elem = WmmaElem<In>;
  constexpr int kFm = kWarpM / FRAG_M;                             // fragments per warp along M
  constexpr int kFn = kWarpN / FRAG_N;                             // fragments per warp along N
  constexpr int kLdm = kRowBytes * 8 / Elem::kBits;                // smem leading dimension, elements
  constexpr int kFragKBytes = FRAG_K * Elem::kBits / 8;
  constexpr int kKSteps = kBlockKBytes / kFragKBytes;              // fragments per K tile
  const auto* A = static_cast<const uint8_t*>(A_);
  const auto* B = static_cast<const uint8_t*>(B_);
  auto* C = static_cast<Acc*>(C_);
  __shared__ SharedTiles tiles;

  wmma::fragment<wmma::accumulator, FRAG_M, FRAG_N, FRAG_K, Acc> acc[kFm][kFn];
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j) wmma::fill_fragment(acc[i][j], Acc(0));

  const int wr = warp_row0(), wc = warp_col0();
  pipelined_mainloop(A, B, static_cast<int64_t>(K) * Elem::kBits / 8, tiles, [&](int s) {
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      wmma::fragment<wmma::matrix_a, FRAG_M, FRAG_N, FRAG_K, In, wmma::row_major> a[kFm];
      wmma::fragment<wmma::matrix_b, FRAG_M, FRAG_N, FRAG_K, In, wmma::col_major> b[kFn];
#pragma unroll
      for (int i = 0; i < kFm; ++i)
        wmma::load_matrix_sync(
            a[i], reinterpret_cast<typename Elem::Ptr>(&tiles.a[s][wr + i * FRAG_M][kk * kFragKBytes]), kLdm);
#pragma unroll
      for (int j = 0; j < kFn; ++j)
        wmma::load_matrix_sync(
            b[j], reinterpret_cast<typename Elem::Ptr>(&tiles.b[s][wc + j * FRAG_N][kk * kFragKBytes]), kLdm);
#pragma unroll
      for (int i = 0; i < kFm; ++i)
#pragma unroll
        for (int j = 0; j < kFn; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  });

  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kBlockM + wr;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kBlockN + wc;
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j)
      wmma::store_matrix_sync(C + (row0 + i * FRAG_M) * N + col0 + j * FRAG_N, acc[i][j], N,
                              wmma::mem_row_major);
}

}  // namespace gemm
