// C through the bulk tensor copy engine: a consumer warpgroup writes its m64 x n wgmma
// accumulator fragment into small shared-memory slots, one TMA box (64 rows x 128 bytes,
// 32 four-byte columns) at a time, and one of its threads stores each box to C with
// cp.async.bulk.tensor (hopper::tma_store_2d). The copy engine drains a box while the
// warpgroup fills the next slot, and the last boxes of a block of C while it runs the next
// block's wgmma (persistent kernels). Build parameter EPI_TMA of kernels/wgmma_gemm.cuh and
// kernels/int4_wgmma.cuh: the slots per consumer warpgroup (0: C stored from registers).
//
// Slot layout: the 128-byte swizzle of CU_TENSOR_MAP_SWIZZLE_128B (16-byte chunk c of row r
// at chunk c ^ (r % 8)). A warp's 8-byte stores (STS.64) of 8 rows x 4 lanes then take 5
// shared-memory wavefronts each as profiled, not the 2 their 256 bytes need: each half warp's
// 4 rows fall into 4 of the 8 chunks. 16-byte stores after a lane swap, with no conflicts,
// took 2.8 instead of 5 and ran no faster (docs/gpu-runs/2026-12-04_c_tma/, sts128.patch).
// The tensor map of C (global wgmma_tma_c, written by the harness where the module has it)
// sees C as rows of N x 4 bytes, box 128 bytes x 64 rows, that swizzle.
#pragma once

#include <cstdint>

#include "hopper.cuh"

namespace ctma {

constexpr int kBoxRows = 64;                       // one m64 fragment
constexpr int kBoxBytes = 128;                     // 32 columns of 4 bytes: one swizzle row
constexpr int kSlotBytes = kBoxRows * kBoxBytes;   // 8 KiB, a multiple of the swizzle's 1024

// Store one warpgroup's m64 x (8 kGroups) fragment of 4-byte values to C at byte column
// `x_bytes` and row `y`: `word(i)` is register i of the fragment as 32 bits (the wgmma D
// layout: lane l of warp w holds, in registers 4j .. 4j + 3, rows 16w + l / 4 and
// 16w + l / 4 + 8, columns 8j + 2 (l % 4) + {0, 1}). `count` counts the boxes this warpgroup
// has stored (slot count % kSlots); `leader` is one thread of the warpgroup, the only one
// that issues and waits for the copies; `bar_id` a named barrier of the warpgroup's 128
// threads. Before a slot is written again, its last copy must have read it
// (cp.async.bulk.wait_group.read kSlots - 1).
template <int kSlots, int kGroups, typename Word>
__device__ __forceinline__ void store_fragment(Word word, uint8_t* slots, int& count, const hopper::TensorMap* map,
                                               int32_t x_bytes, int32_t y, int warp, int lane, uint32_t bar_id,
                                               bool leader) {
  static_assert(kSlots >= 1 && kGroups % 4 == 0, "whole boxes of 4 column groups, at least one slot");
  const int q = lane % 4, r = lane / 4;  // rows r and r + 8 of the warp's 16; r == row % 8
#pragma unroll
  for (int b = 0; b < kGroups / 4; ++b, ++count) {
    uint8_t* slot = slots + (count % kSlots) * kSlotBytes;
    if (leader) hopper::bulk_wait_read<kSlots - 1>();
    hopper::named_barrier_sync(bar_id, 128);
    const uint32_t base = hopper::smem_u32(slot);
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = 4 * (4 * b + jj) + 2 * h;
        const uint32_t chunk = static_cast<uint32_t>(2 * jj + (q >> 1)) ^ static_cast<uint32_t>(r);
        hopper::st_shared_v2(base + (warp * 16 + r + 8 * h) * kBoxBytes + chunk * 16 + 8 * (q & 1), word(i),
                             word(i + 1));
      }
    }
    hopper::fence_proxy_async_shared();
    hopper::named_barrier_sync(bar_id, 128);
    if (leader) {
      hopper::tma_store_2d(map, slot, x_bytes + b * kBoxBytes, y);
      hopper::bulk_commit();
    }
  }
}

}  // namespace ctma
