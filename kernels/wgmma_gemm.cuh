// The Hopper-native GEMM (sm_90a; registry study: false, tma: true): TMA bulk tensor
// copies into 128-byte-swizzled shared memory completing on mbarriers, a STAGES-deep
// producer/consumer pipeline, and warpgroup wgmma.mma_async reading both operands from
// shared memory through matrix descriptors. It keeps the study's problem and launcher
// signature (gemm_common.cuh: A row-major M x K, B column-major as N rows of K, C
// row-major, FP32 for FP16 inputs and INT32 for INT8, or FP16 from gemm<F16F32, true>
// (wg::store_f16); grid (N / BLOCK_N, M / BLOCK_M)).
//
// Block: PRODUCER_WARPS (4, one warpgroup) + WARPS_M (8, two warpgroups) warps = 384
// threads. Warpgroup 0 is the producer: it gives up registers (setmaxnreg.dec) and one of
// its threads issues, per K tile, the TMA copies of the A tile (BLOCK_M rows x 128 bytes
// of K) and the B tile (BLOCK_N rows x 128 bytes) into a free stage, after waiting on that
// stage's `empty` barrier; the copies complete on the stage's `full` barrier (arrive +
// expect_tx of the stage's bytes). Warpgroups 1 and 2 are consumers (setmaxnreg.inc): each
// owns 64 rows of the block and all BLOCK_N (256) columns, waits on `full`, issues the 4
// wgmma of the tile (one per 32 bytes of K: m64n256k16 FP16 or m64n256k32 INT8), commits
// them as a group, waits until only that group is pending, and then releases the previous
// tile's stage (one arrive per consumer warp on its `empty` barrier), so the tensor cores
// always have the next tile's wgmma queued. 128 accumulators per consumer thread.
//
// Two build parameters change how blocks of C are handed out (fp16_wgmma_cluster and
// int8_wgmma_cluster set both; docs/perf-notes.md):
//  - PERSISTENT=1: the grid is (1, P), P the SM count in whole clusters (the harness,
//    Tiling.grid), and each CTA loops over blocks of C; the stage/phase counters run on
//    across blocks, and the consumers release a block's last stage before storing C, so the
//    producer loads the next block's K tiles meanwhile.
//  - CLUSTER_M=2: clusters of two CTAs (__cluster_dims__(1, 2, 1)) compute vertically
//    adjacent blocks; each copies its half of their common B tile into both CTAs' stage with
//    one TMA multicast (B's box is BLOCK_N / 2 rows), each stage's `empty` barrier counts the
//    consumer warps of both CTAs, and a consumer warp releases a stage on both.
//
// The tensor maps (hopper::TensorMap) live in the globals wgmma_tma_a / wgmma_tma_b,
// written by the harness (analysis.harness.GemmRunner, tma kernels) before the launch:
// each matrix seen as bytes, rows of K bytes, box 128 bytes x BLOCK_M (A) or BLOCK_N / CLUSTER_M (B)
// rows, CU_TENSOR_MAP_SWIZZLE_128B.
#pragma once

#include <cstdint>

#include "hopper.cuh"
#include "tuned_gemm.cuh"  // tuned::raster_pid (RASTER): the block order that reuses L2
#include "c_tma.cuh"

#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 4
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
// EPI_TMA > 0: C through EPI_TMA shared-memory slots per consumer warpgroup and the bulk tensor
// copy engine (kernels/c_tma.cuh); 0: C stored from registers.
#ifndef EPI_TMA
#define EPI_TMA 0
#endif
// K_SERPENTINE=1 (PERSISTENT only): a CTA walks K backwards in its odd-numbered blocks, so a wave of
// blocks starts on the K tiles the wave before it read last, which may still be in L2.
#ifndef K_SERPENTINE
#define K_SERPENTINE 0
#endif
// STORE64=1: FP32 / INT32 C stored 16 bytes a lane, each warp store writing 8 rows x 64
// contiguous bytes (the 8-byte stores of the fragment as it is write 8 rows x 32 bytes).
#ifndef STORE64
#define STORE64 0
#endif

// CONSUMER_LAG=L > 0 (two consumer warpgroups): the second consumer warpgroup starts L K tiles
// after the first, meant to make the two store C at different times while the other's wgmma keep
// the tensor pipe busy (both still take every K tile of every block, so the copies are
// unchanged). L < STAGES: the first may run at most that far ahead of the second, whose releases
// free the stages. Measured (docs/perf-notes.md, 2026-12-05): the lag is given once, at the
// start, and the two fall back into step (162 cycles apart at the median block's start with
// L = 2), so their stores still coincide and neither rate changed.
#ifndef CONSUMER_LAG
#define CONSUMER_LAG 0
#endif

// L2_POLICY_A, L2_POLICY_B: the L2 eviction priority of the lines each operand's copies bring in
// (0: no hint, 1: evict_first, 2: evict_last; hopper::l2_policy). Meant for the persistent
// kernels' DRAM reads: a raster group's waves share their A panels, while each B panel is read
// by one wave only, so B's lines marked first to go may leave A's panels in L2 for the next wave.
// Measured on int8_wgmma_serpentine at N = 8192 (H200): A evict_last cut DRAM reads 12 % at the same
// rate; B evict_first raised them 8 % and cost 0.8 % (docs/perf-notes.md).
#ifndef L2_POLICY_A
#define L2_POLICY_A 0
#endif
#ifndef L2_POLICY_B
#define L2_POLICY_B 0
#endif

// STAGE_PAD=p: p bytes of nothing after each stage (stages kStageBytes + p apart); LAYOUT_OFFSET=x:
// x bytes of nothing before the first stage. Multiples of 1024 bytes (the swizzle's alignment);
// 0 and 0: the registered kernels. They tell whether the tiles' addresses in shared memory matter.
// Measured on int8_wgmma_serpentine (H100, N = 8192): 0.993-0.998x, no layout helps (docs/perf-notes.md).
#ifndef STAGE_PAD
#define STAGE_PAD 0
#endif
#ifndef LAYOUT_OFFSET
#define LAYOUT_OFFSET 0
#endif

namespace wg {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockKBytes = BLOCK_K_BYTES;
constexpr int kStages = STAGES;
constexpr int kConsumerWarps = WARPS_M * WARPS_N;
constexpr int kConsumers = kConsumerWarps / 4;  // consumer warpgroups
constexpr int kProducerWarps = PRODUCER_WARPS;
constexpr int kThreads = (kProducerWarps + kConsumerWarps) * 32;
constexpr int kTileA = kBlockM * kBlockKBytes;  // bytes per stage
constexpr int kTileB = kBlockN * kBlockKBytes;
constexpr int kStageBytes = kTileA + kTileB;
constexpr int kStepBytes = 32;                   // bytes of K per wgmma (k16 FP16, k32 INT8)
constexpr int kAlign = 1024;                     // the 128-byte swizzle pattern's repeat
constexpr int kClusterM = CLUSTER_M;             // CTAs per cluster, along M: they share B
constexpr int kTileBPart = kTileB / kClusterM;   // bytes of the B tile each CTA of a cluster copies
constexpr bool kPersistent = PERSISTENT != 0;    // one CTA per SM looping over tiles of C
constexpr int kRaster = tuned::kRaster;
constexpr bool kSerpentine = K_SERPENTINE != 0;
constexpr int kLag = CONSUMER_LAG;
constexpr uint32_t kLagBarrier = 3;              // named barrier of the lag (1 and 2: EPI_TMA's)
// Dynamic shared memory: the stages plus slack to align them to kAlign (the runtime only
// promises 16-byte alignment of the dynamic segment).
constexpr int kEpiSlots = EPI_TMA;               // C slots per consumer warpgroup (c_tma.cuh)
constexpr int kStageStride = kStageBytes + STAGE_PAD;  // stage s at kLayoutOffset + s x kStageStride
constexpr int kLayoutOffset = LAYOUT_OFFSET;
constexpr int kEpiOffset = kLayoutOffset + kStages * kStageStride;  // the C slots, after the stages
constexpr int kSmemBytes = kEpiOffset + kConsumers * kEpiSlots * ctma::kSlotBytes + kAlign;
static_assert(STAGE_PAD >= 0 && LAYOUT_OFFSET >= 0 && STAGE_PAD % kAlign == 0 && LAYOUT_OFFSET % kAlign == 0,
              "STAGE_PAD and LAYOUT_OFFSET: multiples of 1024 bytes");
// Registers after setmaxnreg: 128 producer threads keep 40, the 256 consumer threads get
// 232 (128 x 40 + 256 x 232 = 64512 of the SM's 65536).
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

static_assert(kBlockKBytes == 128, "the 128-byte swizzle needs tile rows of exactly 128 bytes of K");
static_assert(WARPS_N == 1 && kConsumerWarps % 4 == 0 && kBlockM == 64 * kConsumers,
              "consumer warps: WARPS_M = 4 per 64 rows of the block (one warpgroup each), WARPS_N = 1");
static_assert(kBlockN == 256, "the wgmma wrappers are n256");
static_assert(kProducerWarps == 4, "setmaxnreg acts on whole warpgroups: the producer is one");
static_assert(kBlockM <= 256 && kBlockN <= 256, "a TMA box has at most 256 rows");
static_assert(kStages >= 2, "the pipeline needs at least two stages");
static_assert(kClusterM == 1 || kClusterM == 2, "CLUSTER_M: 1 (no cluster) or 2 CTAs sharing each B tile");
static_assert(kRaster % kClusterM == 0, "RASTER: whole clusters per rasterisation group");
static_assert(!kSerpentine || kPersistent, "K_SERPENTINE reverses K in a CTA's odd-numbered blocks: PERSISTENT only");
static_assert(kLag >= 0 && kLag < kStages, "CONSUMER_LAG: 0 or fewer K tiles than the pipeline's stages");
static_assert(kLag == 0 || kConsumers == 2, "CONSUMER_LAG: the second of two consumer warpgroups lags the first");
static_assert(L2_POLICY_A >= 0 && L2_POLICY_A <= 2 && L2_POLICY_B >= 0 && L2_POLICY_B <= 2,
              "L2_POLICY_A, L2_POLICY_B: 0 (no hint), 1 (evict_first) or 2 (evict_last)");
static_assert(kTileBPart % kAlign == 0, "each CTA's part of B keeps the swizzle's 1024-byte alignment");

}  // namespace wg

// The tensor maps of A and B (the harness writes them with cuModuleGetGlobal + cuMemcpyHtoD;
// analysis.harness.TMA_GLOBALS names them).
__device__ hopper::TensorMap wgmma_tma_a;
__device__ hopper::TensorMap wgmma_tma_b;
#if EPI_TMA
__device__ hopper::TensorMap wgmma_tma_c;
#endif

namespace wg {

// FP16 x FP16 -> FP32 and INT8 x INT8 -> INT32: the accumulator type and one wgmma of
// 32 bytes of K.
struct F16F32 {
  using Acc = float;
  __device__ __forceinline__ static void mma(float (&d)[128], uint64_t a, uint64_t b, uint32_t accumulate) {
    hopper::wgmma_m64n256k16_f32_f16(d, a, b, accumulate);
  }
};
struct S8S32 {
  using Acc = int32_t;
  __device__ __forceinline__ static void mma(int32_t (&d)[128], uint64_t a, uint64_t b, uint32_t accumulate) {
    hopper::wgmma_m64n256k32_s32_s8(d, a, b, accumulate);
  }
};

// The release of stage s by one consumer warp: an arrival on the stage's `empty` barrier
// of every CTA of the cluster (each CTA's producer writes into the stage of all of them).
__device__ __forceinline__ void release(uint64_t* empty_s) { hopper::mbarrier_arrive_every_cta<kClusterM>(empty_s); }

// One operand tile's TMA copy: with the L2 policy `policy` where kPolicy (L2_POLICY_A or _B) is not 0,
// and multicast to the CTAs of `cta_mask` where that is not 0.
template <int kPolicy>
__device__ __forceinline__ void copy(void* dst, const hopper::TensorMap* map, int32_t c0, int32_t c1, uint64_t* bar,
                                     uint64_t policy, uint16_t cta_mask = 0) {
  if (cta_mask != 0) {
    if constexpr (kPolicy != 0) {
      hopper::tma_load_2d_multicast_hint(dst, map, c0, c1, bar, cta_mask, policy);
    } else {
      hopper::tma_load_2d_multicast(dst, map, c0, c1, bar, cta_mask);
    }
  } else if constexpr (kPolicy != 0) {
    hopper::tma_load_2d_hint(dst, map, c0, c1, bar, policy);
  } else {
    hopper::tma_load_2d(dst, map, c0, c1, bar);
  }
}

// The blocks of C this CTA computes, m and n: C's tiles of kClusterM block rows x one block
// column ("cluster tiles", one per cluster: its CTA of rank r takes block row kClusterM i + r)
// walked in the order of tuned::raster_pid (groups of kRaster block rows). Without
// kPersistent the grid is (N / BLOCK_N, M / BLOCK_M) and each cluster takes one tile; with
// it the grid is (1, P) and cluster j takes tiles j, j + P / kClusterM, ...
struct Tiles {
  int cols, rows, first, stride, count;
  uint32_t rank;
  __device__ __forceinline__ Tiles(int m, int n)
      : cols(n / kBlockN), rows(m / kBlockM / kClusterM), rank(kClusterM > 1 ? hopper::cluster_ctarank() : 0) {
    count = cols * rows;
    if constexpr (kPersistent) {
      first = blockIdx.y / kClusterM;
      stride = gridDim.y / kClusterM;
    } else {
      first = blockIdx.y / kClusterM * gridDim.x + blockIdx.x;
      stride = count;
    }
  }
  __device__ __forceinline__ tuned::BlockCoord block(int t) const {
    const tuned::BlockCoord c = tuned::raster_pid<kRaster / kClusterM>(t, cols, rows);
    return {c.m * kClusterM + static_cast<int>(rank), c.n};
  }
};

// The bits of an FP32 or INT32 accumulator (EPI_TMA stores 32-bit words).
template <typename Acc>
__device__ __forceinline__ uint32_t acc_bits(Acc v) {
  if constexpr (std::is_same_v<Acc, float>) {
    return __float_as_uint(v);
  } else {
    return static_cast<uint32_t>(v);
  }
}

// FP16 C (fp16_wgmma_cluster_f16c): the FP32 accumulators rounded to nearest FP16 and stored
// 16 bytes a lane. Per pair of column groups (j, j + 1) a lane holds four half2 words, items
// 0-3 = (row r, j), (row r + 8, j), (row r, j + 1), (row r + 8, j + 1), r = l / 4, and item i's
// 16 bytes are the words of the quad's four lanes (l % 4) in lane order. A 4 x 4 transpose in two
// butterfly steps (__shfl_xor_sync by 1, then by 2) gives lane q all of item q, so each warp store
// writes 16 rows x 32 bytes, whole sectors. Storing 4 bytes a lane from the fragment as it is ran
// slower than FP32 C (docs/gpu-runs/2026-12-02_fp16_c_development/).
__device__ __forceinline__ void store_f16(const float (&acc)[128], uint16_t* block, int c, int warp, int lane, int n) {
  const int q = lane % 4;
  const bool q0 = q & 1, q1 = q & 2;
  const int64_t row = c * 64 + warp * 16 + lane / 4 + (q0 ? 8 : 0);
  uint16_t* out = block + row * n + (q1 ? 8 : 0);
#pragma unroll
  for (int j = 0; j < 32; j += 2) {
    const uint32_t w0 = hopper::pack_f16x2(acc[4 * j], acc[4 * j + 1]);
    const uint32_t w1 = hopper::pack_f16x2(acc[4 * j + 2], acc[4 * j + 3]);
    const uint32_t w2 = hopper::pack_f16x2(acc[4 * j + 4], acc[4 * j + 5]);
    const uint32_t w3 = hopper::pack_f16x2(acc[4 * j + 6], acc[4 * j + 7]);
    // step 1 (xor 1): keep the items whose low bit is q0, with both lanes' words of them
    const uint32_t ra = __shfl_xor_sync(0xffffffffu, q0 ? w0 : w1, 1);
    const uint32_t rb = __shfl_xor_sync(0xffffffffu, q0 ? w2 : w3, 1);
    const uint32_t ka = q0 ? w1 : w0, kb = q0 ? w3 : w2;
    // the words of items q0 (a) and 2 + q0 (b) from lanes 2 q1 and 2 q1 + 1
    const uint32_t a0 = q0 ? ra : ka, a1 = q0 ? ka : ra, b0 = q0 ? rb : kb, b1 = q0 ? kb : rb;
    // step 2 (xor 2): keep item 2 q1 + q0 = q, send the other
    const uint32_t r0 = __shfl_xor_sync(0xffffffffu, q1 ? a0 : b0, 2);
    const uint32_t r1 = __shfl_xor_sync(0xffffffffu, q1 ? a1 : b1, 2);
    const uint32_t k0 = q1 ? b0 : a0, k1 = q1 ? b1 : a1;
    *reinterpret_cast<uint4*>(out + 8 * j) = q1 ? uint4{r0, r1, k0, k1} : uint4{k0, k1, r0, r1};
  }
}

// STORE64: one warp's 16 rows x 256 columns of the fragment (row0: C at the lane's first row,
// column 0 of the block) stored 16 bytes a lane. Lane q = 2a + b of a quad holds the pairs of
// column groups j at columns 8j + 2q + {0, 1}. For each 32-column group g and half h it keeps its
// pair of group 4g + 2h + b, sends that of 4g + 2h + 1 - b to lane q ^ 1 (__shfl_xor_sync by 1) and
// receives that lane's pair of 4g + 2h + b: it then holds columns 32g + 16h + 8b + 4a .. + 3, and
// the quad 64 contiguous bytes of the row.
template <typename Acc>
__device__ __forceinline__ void store64(const Acc (&acc)[128], Acc* row0, int lane, int n) {
  const int b = lane & 1, a = (lane >> 1) & 1;
  uint32_t* base = reinterpret_cast<uint32_t*>(row0 + 8 * b + 4 * a);
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {  // rows l / 4 and l / 4 + 8
#pragma unroll
    for (int g = 0; g < 8; ++g) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j0 = 4 * g + 2 * h;
        const uint32_t u00 = acc_bits(acc[4 * j0 + 2 * rh]), u01 = acc_bits(acc[4 * j0 + 2 * rh + 1]);
        const uint32_t u10 = acc_bits(acc[4 * j0 + 4 + 2 * rh]), u11 = acc_bits(acc[4 * j0 + 4 + 2 * rh + 1]);
        const uint32_t k0 = b ? u10 : u00, k1 = b ? u11 : u01;
        const uint32_t g0 = __shfl_xor_sync(0xffffffffu, b ? u00 : u10, 1);
        const uint32_t g1 = __shfl_xor_sync(0xffffffffu, b ? u01 : u11, 1);
        *reinterpret_cast<uint4*>(base + static_cast<int64_t>(8 * rh) * n + 32 * g + 16 * h) =
            b ? uint4{g0, g1, k0, k1} : uint4{k0, k1, g0, g1};
      }
    }
  }
}

// C = A B for M x N (m, n) of C, k_bytes bytes per row of A and per column of B. C holds the
// accumulator type (FP32 or INT32), or FP16 with kF16C (FP16 inputs only).
template <typename Mma, bool kF16C = false>
__device__ __forceinline__ void gemm(void* C_, int m, int n, int k_bytes) {
  static_assert(!kF16C || std::is_same_v<typename Mma::Acc, float>, "FP16 C rounds FP32 accumulators");
  using Acc = typename Mma::Acc;
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1));
  const Tiles tiles(m, n);
  const int k_tiles = k_bytes / kBlockKBytes;
  const int wgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      hopper::mbarrier_init(&full[s], 1);                            // the producer's arrive.expect_tx
      hopper::mbarrier_init(&empty[s], kConsumerWarps * kClusterM);  // one arrive per consumer warp of the cluster
    }
    hopper::fence_mbarrier_init();
    hopper::prefetch_tensormap(&wgmma_tma_a);
    hopper::prefetch_tensormap(&wgmma_tma_b);
  }
  __syncthreads();
  // every CTA's barriers are initialised before a peer multicasts into its stages or arrives on them
  if constexpr (kClusterM > 1) hopper::cluster_sync();

  // `it` counts the K tiles this CTA has gone through, over all its tiles of C: stage
  // it % kStages, phase parity (it / kStages) & 1.
  if (wgroup == 0) {
    hopper::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      [[maybe_unused]] uint64_t policy_a = 0, policy_b = 0;
      if constexpr (L2_POLICY_A != 0) policy_a = hopper::l2_policy<L2_POLICY_A>();
      if constexpr (L2_POLICY_B != 0) policy_b = hopper::l2_policy<L2_POLICY_B>();
      int it = 0;
      for (int t = tiles.first; t < tiles.count; t += tiles.stride) {
        const tuned::BlockCoord blk = tiles.block(t);
        const bool backwards = kSerpentine && ((t - tiles.first) / tiles.stride) % 2 == 1;
        for (int i = 0; i < k_tiles; ++i, ++it) {
          // the consumers need not know: only the order of the sum changes (INT32 sums exactly,
          // FP32 sums within rounding)
          const int kt = backwards ? k_tiles - 1 - i : i;
          const int s = it % kStages;
          const uint32_t parity = ((it / kStages) & 1) ^ 1;  // the consumers (of every CTA) are done with it
          hopper::mbarrier_wait(&empty[s], parity);
          uint8_t* tile = smem + kLayoutOffset + s * kStageStride;
          hopper::mbarrier_arrive_expect_tx(&full[s], kStageBytes);
          copy<L2_POLICY_A>(tile, &wgmma_tma_a, kt * kBlockKBytes, blk.m * kBlockM, &full[s], policy_a);
          // with clusters, this CTA's 1 / kClusterM of the shared B tile, into the same stage of every CTA
          copy<L2_POLICY_B>(tile + kTileA + tiles.rank * kTileBPart, &wgmma_tma_b, kt * kBlockKBytes,
                            blk.n * kBlockN + tiles.rank * (kBlockN / kClusterM), &full[s], policy_b,
                            kClusterM > 1 ? static_cast<uint16_t>((1u << kClusterM) - 1) : 0);
        }
      }
    }
  } else {
    hopper::setmaxnreg_inc<kConsumerRegs>();
    const int c = wgroup - 1;  // this warpgroup's 64 rows of the block
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const uint32_t base = hopper::smem_u32(smem);
    int it = 0;
    [[maybe_unused]] int boxes = 0;  // C boxes this warpgroup stored (EPI_TMA)
    // CONSUMER_LAG: the second warpgroup waits until the first has issued its first kLag K tiles
    [[maybe_unused]] bool lag_given = c == 1;
    if constexpr (kLag > 0) {
      if (c == 1) hopper::named_barrier_sync(kLagBarrier, 256);
    }
    for (int t = tiles.first; t < tiles.count; t += tiles.stride) {
      const tuned::BlockCoord blk = tiles.block(t);
      Acc acc[128];  // written first by the wgmma of K tile 0 with scale-d false
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % kStages;
        hopper::mbarrier_wait(&full[s], (it / kStages) & 1);
        const uint32_t a = base + kLayoutOffset + s * kStageStride + c * 64 * kBlockKBytes;
        const uint32_t b = base + kLayoutOffset + s * kStageStride + kTileA;
        hopper::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kBlockKBytes / kStepBytes; ++ks) {
          Mma::mma(acc, hopper::desc_k_major_sw128(a + ks * kStepBytes),
                   hopper::desc_k_major_sw128(b + ks * kStepBytes), kt > 0 || ks > 0);
        }
        hopper::wgmma_commit();
        hopper::wgmma_wait<1>();  // K tile it - 1's wgmma are done: its stage may be refilled
        if (kt > 0 && lane == 0) release(&empty[(it - 1) % kStages]);
        if constexpr (kLag > 0) {
          if (!lag_given && it + 1 == kLag) {
            hopper::named_barrier_arrive(kLagBarrier, 256);
            lag_given = true;
          }
        }
      }
      hopper::wgmma_wait<0>();
      hopper::fence_operands(acc);
      // the tile's last stage, which the producer refills with the next tile's K tile while
      // this warpgroup stores C
      if (kPersistent && lane == 0) release(&empty[(it - 1) % kStages]);

      // Accumulators to C: warp w of the warpgroup holds rows 16w .. 16w + 15 of its 64;
      // lane l, registers 4j .. 4j + 3: rows l / 4 and l / 4 + 8, columns 8j + 2 (l % 4) + {0, 1}.
      if constexpr (kF16C) {
        store_f16(acc, static_cast<uint16_t*>(C_) + static_cast<int64_t>(blk.m) * kBlockM * n +
                           static_cast<int64_t>(blk.n) * kBlockN, c, warp, lane, n);
        continue;
      }
#if EPI_TMA
      if constexpr (kEpiSlots > 0) {
        static_assert(sizeof(Acc) == 4, "EPI_TMA stores 4-byte C");
        ctma::store_fragment<kEpiSlots, 32>(
            [&](int i) { return acc_bits(acc[i]); }, smem + kEpiOffset + c * kEpiSlots * ctma::kSlotBytes,
            boxes, &wgmma_tma_c, blk.n * kBlockN * 4, blk.m * kBlockM + c * 64, warp, lane, 1 + c,
            threadIdx.x % 128 == 0);
        continue;
      }
#endif
      const int64_t row = static_cast<int64_t>(blk.m) * kBlockM + c * 64 + warp * 16 + lane / 4;
      if constexpr (STORE64 != 0) {
        store64(acc, static_cast<Acc*>(C_) + row * n + static_cast<int64_t>(blk.n) * kBlockN, lane, n);
        continue;
      }
      Acc* out = static_cast<Acc*>(C_) + row * n + static_cast<int64_t>(blk.n) * kBlockN + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        using Acc2 = std::conditional_t<std::is_same_v<Acc, float>, float2, int2>;
        *reinterpret_cast<Acc2*>(out + 8 * j) = Acc2{acc[4 * j], acc[4 * j + 1]};
        *reinterpret_cast<Acc2*>(out + 8 * n + 8 * j) = Acc2{acc[4 * j + 2], acc[4 * j + 3]};
      }
    }
    // a CTA with fewer than kLag K tiles in all lets the second warpgroup go at the end
    if constexpr (kLag > 0) {
      if (!lag_given) hopper::named_barrier_arrive(kLagBarrier, 256);
    }
    // every copy of C complete before the CTA's shared memory goes
    if constexpr (kEpiSlots > 0) {
      if (threadIdx.x % 128 == 0) hopper::bulk_wait<0>();
    }
  }
  // no CTA leaves while a peer may still arrive on its barriers
  if constexpr (kClusterM > 1) hopper::cluster_sync();
}

}  // namespace wg

// The launcher: the study's signature, one block of kThreads per SM (the register cap at
// entry setmaxnreg needs), dynamic shared memory kSmemBytes; SMEM_BYTES, when given (the
// registry's tiling.smem_bytes), must equal it: the harness launches with that many bytes.
// With CLUSTER_M 2 the cluster shape (1, 2, 1) is compiled in (__cluster_dims__): the grid's
// y extent must be even, which the harness checks.
#if CLUSTER_M > 1
#define WGMMA_CLUSTER_DIMS __cluster_dims__(1, CLUSTER_M, 1)
#else
#define WGMMA_CLUSTER_DIMS
#endif
#define WGMMA_GEMM_KERNEL(name)                                                                          \
  static_assert(!(SMEM_BYTES_GIVEN) || wg::kSmemBytes == (SMEM_BYTES_VALUE),                             \
                #name ": tiling.smem_bytes in the registry differs from the shared memory it lays out"); \
  extern "C" __global__ void __launch_bounds__(wg::kThreads, 1) WGMMA_CLUSTER_DIMS                        \
      name(const void* __restrict__ A_, const void* __restrict__ B_, void* __restrict__ C_, int M, int N, int K)
