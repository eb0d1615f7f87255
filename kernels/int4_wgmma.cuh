// The INT4 GEMM on Hopper's own path (sm_90a; registry study: false, tma: true; kernels
// int4_wgmma_unpack_s8 and int4_wgmma_persistent): INT4 in memory, INT8 on the tensor cores.
// H100/H200 have no s4 wgmma, so each packed K tile is unpacked to INT8 once and multiplied
// by wgmma.mma_async .s8:
//
//  - TMA copies the packed tiles (A: BLOCK_M rows, B: BLOCK_N rows, BLOCK_K_BYTES = 64
//    bytes = 128 INT4 of K each) into a STAGES-deep ring, 64-byte swizzled
//    (CU_TENSOR_MAP_SWIZZLE_64B: the 16-byte chunk c of row r at c ^ ((r / 2) % 4), so the
//    8 rows a quarter warp reads at one chunk fall on 8 bank groups), completing on
//    `packed_full`;
//  - the producer warpgroup unpacks B into the stage's INT8 B tile, laid out as TMA would
//    write it with the 128-byte swizzle (rows of 128 bytes, chunk c of row r at c ^ (r % 8)),
//    fences it to the async proxy and arrives on `b_full`;
//  - each of the two consumer warpgroups owns BLOCK_M / 2 rows and reads its packed A rows
//    straight into the A registers of wgmma.mma_async m64nBLOCK_Nk32 .s8 (A from registers,
//    B from the INT8 tile by descriptor): A is never stored unpacked.
//
// The registry's 256 x 128 block makes the unpacked operand (B) the smaller one: per K tile
// shared memory carries 24 KiB of TMA writes, 16 KiB of A reads, 8 + 16 KiB of unpacking
// and 64 KiB of wgmma B reads (docs/perf-notes.md has the 128 x 256 block measured too).
//
// Nibbles are not reordered into K order (as in int4_ptx_tuned_unpack_s8): a 32-bit word of
// 8 INT4 becomes the word of its 4 low nibbles and the word of its 4 high ones, each nibble
// in the top half of its byte (16 times its value, 3 integer instructions per word). The
// packed chunk c of a row (words w[4c .. 4c + 3]) becomes INT8 chunks 2c (low nibbles) and
// 2c + 1 (high nibbles), i.e. K step c of the wgmma; a consumer lane (g = lane / 4, t =
// lane % 4) loads word w[4c + t] of rows g and g + 8 and holds exactly the bytes 4t .. 4t +
// 3 and 16 + 4t .. 16 + 4t + 3 its A fragment needs (hopper.cuh,
// wgmma_m64n256k32_s32_s8_rs). Both operands get the same order, so every dot product, and
// C, is unchanged. Every product is (16 a)(16 b) = 256 a b, so the epilogue shifts right by
// 8 (exact; |256 C| < 2^31 for K < 131072).
//
// Barriers per stage: packed_full (TMA bytes), packed_empty (4 producer warps, done
// unpacking B, + 8 consumer warps, done reading A), b_full (4 producer warps), b_empty (8
// consumer warps, their wgmma on the INT8 B complete; with CLUSTER_M=2 b_full also counts the
// other CTA's half of the INT8 B tile as copied bytes, and b_empty both CTAs' 16 consumer warps).
// Shared memory: STAGES x (INT8 B + packed A + packed B) + 1024 bytes of alignment slack; with
// PACKED_STAGES = P other than STAGES, STAGES INT8 B tiles then P x (packed A + packed B),
// packed_full and packed_empty per packed stage, b_full and b_empty per INT8 B stage.
//
// PERSISTENT=1 (int4_wgmma_persistent; the harness's Tiling.grid): the grid is (1, P), P the
// SM count or the blocks of C if fewer, and each CTA loops over blocks of C in the order of
// tuned::raster_pid. Its K tiles are numbered over all its blocks (`it`: stage it % STAGES,
// phase (it / STAGES) & 1), so the producer copies and unpacks the next block's first tiles
// while the consumers store C; the consumers release a block's last INT8 B stage before
// storing. Its blocks take K tiles in pairs only (an even count: Tiling.check_shape), so that
// a block's last tile and the next block's first use different A registers. PERSISTENT=0:
// one block per CTA, grid (N / BLOCK_N, M / BLOCK_M).
#pragma once

#include <cstdint>

#include "hopper.cuh"
#include "tuned_gemm.cuh"  // tuned::raster_block (RASTER), ptx:: shared-memory loads and stores
#include "c_tma.cuh"

// PRODUCER_WARPS: 4 (one producer warpgroup, the registered kernels) or 8 (two, 512 threads:
// each producer thread unpacks half as many packed chunks a K tile, or with PRODUCER_ALTERNATE
// whole K tiles, every other one). Measured without PRODUCER_ALTERNATE: 0.83x the registered
// kernel at N = 8192 on an H200 (docs/perf-notes.md).
#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 4
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
// PRODUCER_ALTERNATE=1 (with PRODUCER_WARPS=8, the persistent build): the two producer warpgroups
// take alternate K tiles, each a whole tile (4 packed chunks a thread) and its copies, instead of
// both halves of every tile. Each warpgroup's path (its two waits, the unpacking, the fence and
// the arrivals, and its thread 0's copies) then has two K tiles' time, where the 4-warp producer's
// path is as long as a K tile's period (docs/perf-notes.md, 2026-12-07); the shared-memory
// traffic per K tile is unchanged. Registers 256 x 56 + 256 x 200. 0: the registered kernels.
#ifndef PRODUCER_ALTERNATE
#define PRODUCER_ALTERNATE 0
#endif
// EPI_TMA > 0: C through EPI_TMA shared-memory slots per consumer warpgroup and the bulk tensor
// copy engine (kernels/c_tma.cuh); 0: C stored from registers.
#ifndef EPI_TMA
#define EPI_TMA 0
#endif
// UNPACK_GROUP = G: the producer warpgroup takes G consecutive K tiles per iteration, reading
// all their packed B chunks before it writes the first INT8 chunk, so that the shared-memory
// loads of one tile wait under the other's; G = 1 unpacks one tile at a time. UNPACK_EARLY=1
// (with G = 2): each tile's INT8 B is fenced and released as soon as it is written, not after
// the group's last tile. Both are for the persistent build (whose tile counts are even).
// Measured on an H200 at N = 8192: 0.834x and 0.759x the registered kernel; their profile
// shows a group's first tile waiting for the second tile's copy (docs/perf-notes.md).
// UNPACK_BASE_ADDR alone: 1.009x.
#ifndef UNPACK_GROUP
#define UNPACK_GROUP 1
#endif
#ifndef UNPACK_EARLY
#define UNPACK_EARLY 0
#endif
// UNPACK_BASE_ADDR=1: the producer thread's chunk addresses as one base plus an immediate per
// chunk (its chunks are 32 rows apart, which leaves both swizzles' XOR terms unchanged), so
// that the addresses need no registers of their own.
#ifndef UNPACK_BASE_ADDR
#define UNPACK_BASE_ADDR 0
#endif
// PACKED_STAGES = P (default STAGES): the packed tiles get a ring of their own, P stages of packed
// A and B after STAGES INT8 B tiles, so a copy can go out P K tiles ahead of the tile being
// unpacked while the INT8 B ring stays STAGES deep. Each side counts its packed stage and phase
// along instead of dividing by P. Equal to STAGES it is the interleaved layout of the registered
// kernels. Measured: 5 and 6 packed stages 0.91x the registered kernel at N = 8192 on an H200,
// with its wgmma slower to complete (docs/perf-notes.md).
#ifndef PACKED_STAGES
#define PACKED_STAGES STAGES
#endif
// SPLIT_RINGS=1: the layout of a packed ring of its own (the STAGES INT8 B tiles first, then the
// packed stages) even where PACKED_STAGES equals STAGES, so that the layout's cost can be told
// from a deeper ring's. A STAGES deeper than PACKED_STAGES gives the INT8 B tiles the deeper ring.
// Measured on an H100 at N = 8192: the split layout alone 0.90x the registered kernel, 6 INT8 B
// stages beside 4 packed 0.92x (docs/perf-notes.md, 2026-12-06).
#ifndef SPLIT_RINGS
#define SPLIT_RINGS 0
#endif
// UNPACK_LOAD_FIRST=1: the producer reads a tile's packed B into its registers before it waits for
// the tile's INT8 B stage to be free (b_empty), so that the loads' latency passes under that wait;
// 0 (the registered kernels): after it. Measured: 0.99x (the producer then waits longer for the stage).
#ifndef UNPACK_LOAD_FIRST
#define UNPACK_LOAD_FIRST 0
#endif
// PRODUCER_SYNCWARP=1: every producer warp rejoins its threads (__syncwarp) at the start of each
// K tile. A warp whose threads leave a try_wait loop (hopper::mbarrier_wait, one loop a thread) at
// different rounds can stay split through the loop, each part issuing the tile's instructions
// again: in the --set full launches of 2026-12-07 the unpacking's LDS.128 and STS.128 ran at 31.77
// threads an execution in int4_wgmma_epi_tma and 25.65 with PRODUCER_ALTERNATE (docs/perf-notes.md).
// 0 (the registered kernels): no rejoin. Not measured on a GPU.
#ifndef PRODUCER_SYNCWARP
#define PRODUCER_SYNCWARP 0
#endif
// Where the interleaved layout (PACKED_STAGES equal to STAGES, no SPLIT_RINGS) puts each stage's
// tiles in its slot of kStageBytes: LAYOUT_ROTATE=r puts stage s's INT8 B tile in slot (s + r) %
// STAGES (the packed tiles of stage s stay in slot s), and LAYOUT_B8_LAST=1 puts the INT8 B tile
// after the packed tiles in its slot instead of before them. 0 and 0: the registered kernels.
// The split layout, the same tiles at other addresses, cost 10 % at equal ring depths. Measured on
// an H100 at N = 8192: every rotation 0.88-0.89x, B8 last 1.01x (docs/perf-notes.md, 2026-12-06).
#ifndef LAYOUT_ROTATE
#define LAYOUT_ROTATE 0
#endif
#ifndef LAYOUT_B8_LAST
#define LAYOUT_B8_LAST 0
#endif
// Where the stages lie in shared memory as a whole (interleaved layout): LAYOUT_PAD=p bytes of
// nothing after each stage's slot (the slots kStageBytes + p apart), LAYOUT_OFFSET=x bytes of
// nothing before the first stage, and LAYOUT_EPI_FIRST=1 the C slots (EPI_TMA) first and the
// stages after them. Multiples of 1024 bytes (the swizzles' alignment). 0, 0, 0: the registered
// kernels. They tell whether the tiles' addresses themselves matter, not only where the tiles
// of one stage lie relative to each other. Measured on an H100 at N = 8192: every such build
// within 0.5 % of its base, so what matters is which tiles share a slot (docs/perf-notes.md).
// B_GLOBAL=D > 0: the producer reads its packed B chunks from global memory into registers, D K
// tiles ahead of the tile it unpacks (a ring of D x 4 chunks a thread, ld.global.nc), instead of
// TMA into shared memory and LDS: the copy engine brings packed A only, and each K tile takes 16
// KiB less shared-memory traffic (8 KiB of TMA writes, 8 KiB of loads), whose latency sat on the
// producer's path while the wgmma read B. 0: the registered kernels. Measured on an H100 at
// N = 8192: 0.78x its base for D = 1, 2 and 3 alike, the consumers then waiting on their own
// wgmma (docs/perf-notes.md); kept as a build parameter, registered nowhere.
#ifndef B_GLOBAL
#define B_GLOBAL 0
#endif
// COPY_ROTATE=1: the copy of packed tile j = it + STAGES (after unpacking tile it) is issued by lane 0
// of producer warp j % 4 instead of always by thread 0, so that no one warp carries every copy (its
// wait for the packed stage, expect_tx, two TMA copies) on its unpacking path; every producer
// warp's lane 0 counts the copies along. 0: the registered kernels. Measured on an H100 at N = 8192:
// 0.990-0.992x int4_wgmma_epi_tma in two calls; no warp then stays last, but the K tile's period
// does not shorten (docs/perf-notes.md, 2026-12-07).
#ifndef COPY_ROTATE
#define COPY_ROTATE 0
#endif
#ifndef LAYOUT_PAD
#define LAYOUT_PAD 0
#endif
#ifndef LAYOUT_OFFSET
#define LAYOUT_OFFSET 0
#endif
#ifndef LAYOUT_EPI_FIRST
#define LAYOUT_EPI_FIRST 0
#endif
// TILE_CLOCKS=1 (development builds only): lane 0 of each producer warp and of warp 0 of each
// consumer warpgroup writes clock() (32 bits) at three points of each K tile into int4_tile_clocks (the
// first kClockTiles K tiles of CTAs 0 .. kClockCtas - 1), which the host reads back: where a K
// tile's time goes, tile by tile. 0: the registered kernels.
// TILE_CLOCKS=2: the same clock reads kept in shared memory (kClockSmemTiles K tiles from
// kClockFirst, every CTA below kClockCtas2) and copied to int4_tile_clocks at each role's end. In
// TILE_CLOCKS=1 the mbarrier arrivals and the copy's expect_tx (release semantics) follow global
// stores of clock values and may wait for them (docs/perf-notes.md); shared-memory stores do not
// leave the SM.
#ifndef TILE_CLOCKS
#define TILE_CLOCKS 0
#endif
// CLUSTER_M=2 (the registry's tiling with cluster_m: 2; the persistent build only): clusters of two CTAs
// (__cluster_dims__(1, 2, 1)) compute vertically adjacent blocks, which share their B tile. Each CTA's
// producer copies (TMA) and unpacks only its half of the B tile's rows (BLOCK_N / 2; the harness
// gives B's tensor map a box of that many rows), writes it into its own INT8 B stage and copies it
// into the same stage of the other CTA with the bulk copy engine (cp.async.bulk shared::cta to
// shared::cluster: each producer warp its own rows, after its fence), which completes the bytes on
// that CTA's b_full. So each producer unpacks half as many packed chunks a K tile. Each b_empty counts
// the consumer warps of both CTAs (the other CTA's producer writes into the stage too), and a
// consumer warp releases a stage in both. 1: the registered kernels. Measured on an H100 at
// N = 8192: 0.873x int4_wgmma_epi_tma, the consumers then waiting longer for B (docs/perf-notes.md,
// 2026-12-07).
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
// WAIT_BOTH=1: the producer waits for its packed tile and for a free INT8 B stage in one loop
// whose try_waits are issued back to back (hopper::mbarrier_wait_both), instead of one wait after
// the other, each a round trip to the barrier unit (meant to overlap them). 0: the registered kernels.
#ifndef WAIT_BOTH
#define WAIT_BOTH 0
#endif

namespace i4wg {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kPackedRowBytes = BLOCK_K_BYTES;      // 64: 128 INT4 of K
constexpr int kS8RowBytes = 2 * BLOCK_K_BYTES;      // 128: one 128-byte swizzle row
constexpr int kStages = STAGES;
constexpr int kConsumerWarps = WARPS_M * WARPS_N;
constexpr int kConsumers = kConsumerWarps / 4;      // consumer warpgroups
constexpr int kRowsPerConsumer = kBlockM / kConsumers;
constexpr int kHalves = kRowsPerConsumer / 64;      // m64 wgmma per consumer and K step
constexpr int kThreads = (PRODUCER_WARPS + kConsumerWarps) * 32;
constexpr int kProducerThreads = PRODUCER_WARPS * 32;
constexpr bool kAlternate = PRODUCER_ALTERNATE != 0;
// the producer threads that share one K tile's unpacking, and the producer warps that arrive on
// its barriers: all of them, or one warpgroup with PRODUCER_ALTERNATE
constexpr int kUnpackThreads = kAlternate ? 128 : kProducerThreads;
constexpr int kTileWarps = kUnpackThreads / 32;
constexpr int kPackedA = kBlockM * kPackedRowBytes;  // bytes per stage
constexpr int kPackedB = kBlockN * kPackedRowBytes;
constexpr int kS8B = kBlockN * kS8RowBytes;
constexpr int kStageBytes = kS8B + kPackedA + kPackedB;  // INT8 B first: its 1024-byte alignment
constexpr int kPackedStages = PACKED_STAGES;
constexpr bool kSplitRings = SPLIT_RINGS != 0 || kPackedStages != kStages;
constexpr int kPackedStageBytes = kPackedA + kPackedB;
constexpr int kSlotStride = kStageBytes + LAYOUT_PAD;  // interleaved layout: slot s at s x kSlotStride
constexpr int kEpiSlots = EPI_TMA;  // C slots per consumer warpgroup (c_tma.cuh)
constexpr int kEpiBytes = kConsumers * kEpiSlots * ctma::kSlotBytes;
// where the stages start, and where the C slots do: after every stage (the same offset either
// layout), or first (LAYOUT_EPI_FIRST)
constexpr int kStagesOffset = LAYOUT_OFFSET + (LAYOUT_EPI_FIRST ? kEpiBytes : 0);
constexpr int kStagesBytes = kStages * kS8B + kPackedStages * kPackedStageBytes + kStages * LAYOUT_PAD;
constexpr int kEpiOffset = LAYOUT_EPI_FIRST ? 0 : kStagesOffset + kStagesBytes;
constexpr int kAlign = 1024;
constexpr bool kPersistent = PERSISTENT != 0;
constexpr int kRaster = tuned::kRaster;
constexpr int kSmemBytes = kStagesOffset + kStagesBytes + (LAYOUT_EPI_FIRST ? 0 : kEpiBytes) + kAlign;
constexpr int kSteps = kS8RowBytes / 32;                              // wgmma k32 steps per K tile
constexpr int kClusterM = CLUSTER_M;  // CTAs per cluster along M, sharing each B tile
constexpr int kUnpackRows = kBlockN / kClusterM;  // the B tile's rows this CTA's producer unpacks
constexpr int kItems = kUnpackRows * kPackedRowBytes / 16 / kUnpackThreads;  // packed 16-byte chunks per producer thread
// Registers after setmaxnreg: 128 x 88 + 256 x 208 (64512 of the SM's 65536) where a producer
// thread holds 8 packed chunks (BLOCK_N 256), 128 x 56 + 256 x 224 (64512) where it holds 4
// (BLOCK_N 128) and a consumer twice as many A registers, and 256 x 40 + 256 x 216 (65536, all
// of them: 512 threads of 128 at entry) where two producer warpgroups hold 2 each.
// With B_GLOBAL the producer's ring of packed B takes 16 registers a K tile: 128 x 56 + 256 x 224 (1
// tile ahead), 128 x 80 + 256 x 208 (2), 128 x 96 + 256 x 200 (3).
// With 224 consumer registers ptxas kept the consumers' wgmma asynchronous in every build; with 216
// or fewer it serialized them (C7512, a `WARPGROUP.DEPBAR.LE gsb0, 0x0` after each) in all but
// PRODUCER_WARPS=8 with PACKED_STAGES=6. Giving the consumers 224 spills other producers: B_GLOBAL=2
// spills 148 bytes at 56 producer registers, the alternating producers 52 bytes at 32. The
// serialized builds are kept to reproduce their measurements; tests/test_wgmma.py says which they are.
constexpr int kProducerGroups = PRODUCER_WARPS / 4;
constexpr int kBGlobal = B_GLOBAL;
constexpr int kProducerRegs = kBGlobal == 3 ? 96 : kBGlobal == 2 ? 80 : kBGlobal ? 56 : kItems == 8 ? 88 : kItems == 4 ? 56 : 40;
// With PRODUCER_ALTERNATE 256 producer threads hold 4 chunks each: 256 x 56 + 256 x 200.
// With CLUSTER_M=2 one producer warpgroup holds 2 chunks a thread: 128 x 40 + 256 x 232 (64512).
constexpr int kConsumerRegs = kBGlobal == 3 || kAlternate ? 200 : kBGlobal == 2 ? 208 : kBGlobal ? 224 : kItems == 8 ? 208 : kItems == 4 ? 224 : kClusterM > 1 ? 232 : 216;

// setmaxnreg.inc waits until the CTA's pool holds the registers it asks for, and the pool is what
// the launch gave: every thread's registers at entry, 65536 / kThreads rounded down to a multiple
// of 8 (what ptxas gave every build of this kernel: 168 registers at 384 threads, 128 at 512). A
// split beyond it hangs every consumer warpgroup at its setmaxnreg.
constexpr int kEntryRegs = 65536 / kThreads / 8 * 8;
static_assert(kProducerThreads * kProducerRegs + kConsumerWarps * 32 * kConsumerRegs <= kThreads * kEntryRegs,
              "the registers after setmaxnreg exceed the CTA's pool at launch");
static_assert(kPackedRowBytes == 64, "packed rows of 64 bytes (the 64-byte swizzle) unpack to one 128-byte row");
static_assert((PRODUCER_WARPS == 4 || PRODUCER_WARPS == 8) && WARPS_N == 1 && kConsumerWarps % 4 == 0 && kRowsPerConsumer % 64 == 0,
              "one or two producer warpgroups; WARPS_M = 4 per consumer warpgroup, each 64 x kHalves rows");
static_assert((kBlockN == 128 && kHalves == 2) || (kBlockN == 256 && kHalves == 1),
              "128 accumulators per consumer thread: 2 x m64n128 or 1 x m64n256 per K step");
static_assert(kUnpackRows * 4 % kUnpackThreads == 0, "whole packed chunks per producer thread");
static_assert(kClusterM == 1 || (kClusterM == 2 && PERSISTENT && UNPACK_GROUP == 1 && !kBGlobal && PRODUCER_WARPS == 4 &&
                                 !TILE_CLOCKS && !COPY_ROTATE && tuned::kRaster % kClusterM == 0),
              "CLUSTER_M 2: the persistent build (the one run on a GPU), one producer warpgroup unpacking one K tile "
              "at a time, the packed B by TMA, no clock reads or rotated copies, whole clusters per rasterisation group");
static_assert(kStageBytes % kAlign == 0 && kS8B % kAlign == 0, "every stage keeps the swizzles' 1024-byte alignment");
static_assert(kStages >= 2, "the pipeline needs at least two stages");
constexpr int kGroup = UNPACK_GROUP;
constexpr int kClockCtas = 8, kClockTiles = 256;  // TILE_CLOCKS: the CTAs and K tiles recorded
constexpr int kClockCtas2 = 160, kClockFirst = 72, kClockSmemTiles = 24;  // TILE_CLOCKS=2: the CTAs, the first K tile, the K tiles
constexpr int kClockValues = TILE_CLOCKS == 2 ? kClockCtas2 * kClockSmemTiles * 6 * 3 : kClockCtas * kClockTiles * 6 * 3;
static_assert(kGroup == 1 || (kGroup == 2 && kPersistent && kStages % 2 == 0),
              "UNPACK_GROUP 2: persistent (an even count of K tiles) and an even count of stages, so a "
              "group's tiles share one phase");
static_assert(!UNPACK_EARLY || kGroup == 2, "UNPACK_EARLY needs UNPACK_GROUP 2");
static_assert(!kSplitRings || (kGroup == 1 && kPackedStages >= 2 && kPackedStageBytes % kAlign == 0),
              "PACKED_STAGES other than STAGES: one K tile at a time (UNPACK_GROUP 1), at least two packed stages");
static_assert(!UNPACK_LOAD_FIRST || kGroup == 1, "UNPACK_LOAD_FIRST: one K tile at a time (UNPACK_GROUP 1)");
static_assert(TILE_CLOCKS >= 0 && TILE_CLOCKS <= 2, "TILE_CLOCKS: 0 (off), 1 (global stores) or 2 (shared memory)");
static_assert(!TILE_CLOCKS || (PRODUCER_WARPS == 4 && kConsumers == 2 && kGroup == 1 && !kBGlobal && kPersistent),
              "TILE_CLOCKS: the persistent build with one producer and two consumer warpgroups, one K tile at a time");
static_assert(!COPY_ROTATE || (kGroup == 1 && !kBGlobal && !kSplitRings && PRODUCER_WARPS == 4),
              "COPY_ROTATE: one K tile at a time, the packed tiles by TMA in the INT8 B's ring, one producer warpgroup");
static_assert(!WAIT_BOTH || (kGroup == 1 && !UNPACK_LOAD_FIRST && !kBGlobal && !TILE_CLOCKS),
              "WAIT_BOTH: one K tile at a time, the packed B read after both waits, no clock reads");
static_assert((LAYOUT_ROTATE == 0 && LAYOUT_B8_LAST == 0) || (!kSplitRings && LAYOUT_ROTATE >= 0 && LAYOUT_ROTATE < kStages),
              "LAYOUT_ROTATE (0 .. STAGES - 1) and LAYOUT_B8_LAST: the interleaved layout only");
static_assert((LAYOUT_PAD == 0 || !kSplitRings) && LAYOUT_PAD % kAlign == 0 && LAYOUT_OFFSET % kAlign == 0 &&
                  LAYOUT_PAD >= 0 && LAYOUT_OFFSET >= 0 && (!LAYOUT_EPI_FIRST || kEpiSlots > 0),
              "LAYOUT_PAD (the interleaved layout only) and LAYOUT_OFFSET: multiples of 1024 bytes; "
              "LAYOUT_EPI_FIRST: with EPI_TMA");
static_assert(kBGlobal == 0 || (kBGlobal >= 1 && kBGlobal <= 3 && kGroup == 1 && !kSplitRings && !UNPACK_LOAD_FIRST &&
                                PRODUCER_WARPS == 4),
              "B_GLOBAL (1 .. 3 K tiles ahead): one K tile at a time, the interleaved layout, one producer warpgroup");
static_assert(!kAlternate || (PRODUCER_WARPS == 8 && kPersistent && kGroup == 1 && !kBGlobal && !kSplitRings &&
                              !COPY_ROTATE && !TILE_CLOCKS && !WAIT_BOTH && !UNPACK_LOAD_FIRST && kStages % 2 == 0),
              "PRODUCER_ALTERNATE: two producer warpgroups, the persistent build (an even count of K tiles) with an "
              "even count of stages, one K tile at a time, the packed tiles by TMA in the INT8 B's ring");

// A ring position counted along: stage and phase of the next K tile, without a division.
template <int kDepth>
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == kDepth) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// Low and high nibbles of a packed word, each as 16 times its value in its own byte.
__device__ __forceinline__ uint32_t lo_x16(uint32_t w) { return (w << 4) & 0xf0f0f0f0u; }
__device__ __forceinline__ uint32_t hi_x16(uint32_t w) { return w & 0xf0f0f0f0u; }

// Byte offset of the 16-byte chunk c of row r in a tile of 64-byte rows, 64-byte swizzle.
__device__ __forceinline__ uint32_t sw64(int r, int c) { return r * 64 + ((c ^ ((r >> 1) & 3)) << 4); }
// ... and in a tile of 128-byte rows, 128-byte swizzle.
__device__ __forceinline__ uint32_t sw128(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

// The producer thread's share of the packed B tile (at `packed`) unpacked into the INT8 B
// tile (at `s8`): item i (= thread + i x 128) is the packed chunk c = item % 4 (4 words) of
// row r = item / 4, which becomes INT8 chunks 2c (the low nibbles) and 2c + 1 (the high
// ones) of that row. A quarter warp reads two whole rows (one 128-byte line) and writes 8
// distinct bank groups. unpack_load reads the thread's chunks, unpack_store writes them; the
// wrappers are volatile asm, which the compiler keeps in program order, so every load of a
// group of tiles is issued before its first store.
__device__ __forceinline__ void unpack_load(uint4 (&q)[kItems], uint32_t packed, int thread) {
  if constexpr (UNPACK_BASE_ADDR) {
    const uint32_t base = packed + sw64(thread / 4, thread % 4);
#pragma unroll
    for (int i = 0; i < kItems; ++i) q[i] = ptx::ld_shared_v4(base + i * (kUnpackThreads / 4) * kPackedRowBytes);
    return;
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int item = thread + i * kUnpackThreads;
    q[i] = ptx::ld_shared_v4(packed + sw64(item / 4, item % 4));
  }
}
__device__ __forceinline__ void unpack_store(uint32_t s8, const uint4 (&q)[kItems], int thread) {
  const int r0 = thread / 4, c0 = thread % 4;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int item = thread + i * kUnpackThreads, r = item / 4, c = item % 4;
    const uint32_t lo = UNPACK_BASE_ADDR ? s8 + sw128(r0, 2 * c0) + i * (kUnpackThreads / 4) * kS8RowBytes
                                         : s8 + sw128(r, 2 * c);
    const uint32_t hi = UNPACK_BASE_ADDR ? s8 + sw128(r0, 2 * c0 + 1) + i * (kUnpackThreads / 4) * kS8RowBytes
                                         : s8 + sw128(r, 2 * c + 1);
    ptx::st_shared_v4(lo, make_uint4(lo_x16(q[i].x), lo_x16(q[i].y), lo_x16(q[i].z), lo_x16(q[i].w)));
    ptx::st_shared_v4(hi, make_uint4(hi_x16(q[i].x), hi_x16(q[i].y), hi_x16(q[i].z), hi_x16(q[i].w)));
  }
}
static_assert(!UNPACK_BASE_ADDR || (kUnpackThreads / 4) % 8 == 0,
              "UNPACK_BASE_ADDR: a thread's chunks must be a multiple of 8 rows apart (both swizzles repeat every 8)");

// The wgmma of one m64 half and K step: n128 or n256, A from registers.
template <int N>
struct RsMma;
template <>
struct RsMma<128> {
  static constexpr int kAcc = 64;
  __device__ __forceinline__ static void mma(int32_t (&d)[64], const uint32_t (&a)[4], uint64_t b, uint32_t acc) {
    hopper::wgmma_m64n128k32_s32_s8_rs(d, a, b, acc);
  }
};
template <>
struct RsMma<256> {
  static constexpr int kAcc = 128;
  __device__ __forceinline__ static void mma(int32_t (&d)[128], const uint32_t (&a)[4], uint64_t b, uint32_t acc) {
    hopper::wgmma_m64n256k32_s32_s8_rs(d, a, b, acc);
  }
};
using Mma = RsMma<kBlockN>;

// This CTA's rank in its cluster (0 without CLUSTER_M).
__device__ __forceinline__ uint32_t cta_rank() {
  if constexpr (kClusterM == 1) {
    return 0;
  } else {
    return hopper::cluster_ctarank();
  }
}

// The blocks of C this CTA computes (the walk of tuned::raster_pid, groups of kRaster block
// rows): without kPersistent block blockIdx.y * gridDim.x + blockIdx.x alone, with it blocks
// blockIdx.y, blockIdx.y + gridDim.y, ... With CLUSTER_M=2 the walk is over tiles of two block
// rows x one block column, one per cluster, and the CTA of rank r takes block row 2 i + r.
struct Tiles {
  int cols, rows, first, stride, count, mine;
  __device__ __forceinline__ Tiles(int m, int n) : cols(n / kBlockN), rows(m / kBlockM / kClusterM) {
    count = cols * rows;
    if constexpr (kPersistent) {
      first = blockIdx.y / kClusterM;
      stride = gridDim.y / kClusterM;
    } else {
      first = blockIdx.y / kClusterM * gridDim.x + blockIdx.x;
      stride = count;
    }
    mine = !kPersistent ? 1 : first < count ? (count - 1 - first) / stride + 1 : 0;
  }
  __device__ __forceinline__ tuned::BlockCoord block(int i) const {  // this CTA's i-th block
    const tuned::BlockCoord c = tuned::raster_pid<kRaster / kClusterM>(first + i * stride, cols, rows);
    return {c.m * kClusterM + static_cast<int>(cta_rank()), c.n};
  }
};

}  // namespace i4wg

// The tensor maps of the packed A and B (analysis.harness.TMA_GLOBALS; 64-byte boxes).
__device__ hopper::TensorMap wgmma_tma_a;
__device__ hopper::TensorMap wgmma_tma_b;
#if EPI_TMA
__device__ hopper::TensorMap wgmma_tma_c;
#endif
#if TILE_CLOCKS
// [cta][K tile][row][event]: rows 0-3 the producer warps (events: packed tile landed, INT8 B stage
// free, INT8 B written and released), rows 4-5 the consumer warpgroups (events: packed tile landed,
// INT8 B ready, the previous K tile's wgmma complete). TILE_CLOCKS=2: kClockSmemTiles K tiles a CTA.
__device__ unsigned int int4_tile_clocks[i4wg::kClockValues];
#endif
#if TILE_CLOCKS == 2
__shared__ unsigned int int4_tile_clocks_smem[i4wg::kClockSmemTiles * 6 * 3];
#endif

namespace i4wg {

// TILE_CLOCKS: record event `ev` of K tile `it` for `row` (the caller picks the recording lane).
__device__ __forceinline__ void tile_clock([[maybe_unused]] int it, [[maybe_unused]] int row, [[maybe_unused]] int ev) {
#if TILE_CLOCKS == 1
  if (blockIdx.x == 0 && blockIdx.y < kClockCtas && it < kClockTiles)
    int4_tile_clocks[((blockIdx.y * kClockTiles + it) * 6 + row) * 3 + ev] = static_cast<unsigned int>(clock());
#elif TILE_CLOCKS == 2
  if (static_cast<unsigned>(it - kClockFirst) < kClockSmemTiles)
    int4_tile_clocks_smem[((it - kClockFirst) * 6 + row) * 3 + ev] = static_cast<unsigned int>(clock());
#endif
}

// TILE_CLOCKS=2: the recording thread of `row` copies its shared-memory clocks to int4_tile_clocks
// (it alone wrote them, so no barrier is needed), once its role has no K tile left.
__device__ __forceinline__ void tile_clock_flush([[maybe_unused]] int row) {
#if TILE_CLOCKS == 2
  if (blockIdx.x == 0 && blockIdx.y < kClockCtas2)
    for (int i = 0; i < kClockSmemTiles; ++i)
      for (int ev = 0; ev < 3; ++ev)
        int4_tile_clocks[((blockIdx.y * kClockSmemTiles + i) * 6 + row) * 3 + ev] =
            int4_tile_clocks_smem[(i * 6 + row) * 3 + ev];
#endif
}

// C (INT32, M x N row-major) = A B for packed INT4 A (M rows of K / 2 bytes) and B (N rows).
// B_ (the packed B in global memory) is read only with B_GLOBAL; the registered kernels pass it unused.
__device__ __forceinline__ void gemm(void* C_, int M, int N, int K, [[maybe_unused]] const void* B_ = nullptr) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t packed_full[kPackedStages], packed_empty[kPackedStages], b_full[kStages], b_empty[kStages];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1));
  const uint32_t base = hopper::smem_u32(smem) + kStagesOffset;  // the first stage
  const Tiles tiles(M, N);
  const uint32_t rank = cta_rank();  // which half of each B tile this CTA unpacks (CLUSTER_M)
  const int k_tiles = K / 2 / kPackedRowBytes;
  const int total = tiles.mine * k_tiles;  // K tiles of all this CTA's blocks
  if (kPersistent && k_tiles % 2) __trap();  // pairs of K tiles only (Tiling.check_shape refuses odd counts)
  const int wgroup = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  // Stage s: INT8 B at s8_b(s), then packed A, then packed B; with kSplitRings the kStages INT8
  // B tiles first, then the kPackedStages packed stages (A, then B).
  // (interleaved: LAYOUT_ROTATE and LAYOUT_B8_LAST move the tiles within and between the slots)
  auto s8_b = [&](int s) {
    return kSplitRings ? base + s * kS8B
                       : base + (LAYOUT_ROTATE ? (s + LAYOUT_ROTATE) % kStages : s) * kSlotStride +
                             (LAYOUT_B8_LAST ? kPackedStageBytes : 0);
  };
  auto packed_a = [&](int s) {
    return kSplitRings ? base + kStages * kS8B + s * kPackedStageBytes
                       : base + s * kSlotStride + (LAYOUT_B8_LAST ? 0 : kS8B);
  };
  auto packed_b = [&](int s) { return packed_a(s) + kPackedA; };

  if (threadIdx.x == 0) {
    for (int s = 0; s < (kPackedStages > kStages ? kPackedStages : kStages); ++s) {  // both rings' barriers
      if (s < kPackedStages) {
        hopper::mbarrier_init(&packed_full[s], 1);
        // with B_GLOBAL the packed stage holds A only, which the consumers alone read
        hopper::mbarrier_init(&packed_empty[s], (kBGlobal ? 0 : kTileWarps) + kConsumerWarps);
      }
      if (s < kStages) {
        hopper::mbarrier_init(&b_full[s], kTileWarps);
        hopper::mbarrier_init(&b_empty[s], kConsumerWarps * kClusterM);
      }
    }
    hopper::fence_mbarrier_init();
    hopper::prefetch_tensormap(&wgmma_tma_a);
    hopper::prefetch_tensormap(&wgmma_tma_b);
  }
  __syncthreads();
  // every CTA's barriers are initialised before the other CTA copies into its stages or arrives on them
  if constexpr (kClusterM > 1) hopper::cluster_sync();

  // `it` counts the K tiles this CTA has gone through, over all its blocks of C.
  if (wgroup < kProducerGroups) {
    hopper::setmaxnreg_dec<kProducerRegs>();
    // Thread 0 copies packed tile `next` into its stage once the stage is free: tiles 0 ..
    // kPackedStages - 1 at first, then, after unpacking tile it, tile it + kPackedStages into tile it's
    // stage as soon as the consumers have read its A (they read A before waiting for B, so
    // this seldom waits). Measured against copying before the unpacking, and against copying
    // only into stages already free (non-blocking), in docs/perf-notes.md.
    // In the persistent build the copy's K tile and block are counted along (copy_kt, copy_i),
    // not derived from `next` by two divisions: those sat on this thread's, and so its warp's,
    // unpacking path and cost 12 % of the rate (docs/perf-notes.md).
    // With PRODUCER_ALTERNATE warpgroup g takes K tiles g, g + 2, ... (its thread 0 their copies),
    // and `pthread` is the thread's index within it; otherwise one tile at a time for all of them.
    const int first_it = kAlternate ? wgroup : 0, pthread = kAlternate ? threadIdx.x % 128 : threadIdx.x;
    constexpr int kItStride = kAlternate ? 2 : 1;
    int next = first_it, copy_kt = first_it, copy_i = 0;
    tuned::BlockCoord copy_blk = tiles.block(0);
    RingPos<kPackedStages> copy_pos;  // the packed stage of tile `next` (kSplitRings)
    auto copy_next = [&](bool issue = true) {  // issue false (COPY_ROTATE): only count it along
      const int s = kSplitRings ? copy_pos.stage : next % kStages;
      const uint32_t empty_parity = kSplitRings ? copy_pos.phase ^ 1 : ((next / kStages) & 1) ^ 1;
      if constexpr (kSplitRings) copy_pos.advance();
      const int kt = kPersistent ? copy_kt : next;
      const tuned::BlockCoord blk = copy_blk;
      // PRODUCER_ALTERNATE (persistent): k_tiles is even, so copy_kt wraps to first_it. One form for
      // both steps would change the registered kernels' SASS, hence two branches.
      if constexpr (kAlternate) {
        if ((copy_kt += kItStride) >= k_tiles) {
          copy_kt -= k_tiles;
          if (++copy_i < tiles.mine) copy_blk = tiles.block(copy_i);
        }
      } else if constexpr (kPersistent) {
        if (++copy_kt == k_tiles) {
          copy_kt = 0;
          if (++copy_i < tiles.mine) copy_blk = tiles.block(copy_i);
        }
      }
      if (!COPY_ROTATE || issue) {
        hopper::mbarrier_wait(&packed_empty[s], empty_parity);
        hopper::mbarrier_arrive_expect_tx(&packed_full[s], kBGlobal ? kPackedA : kPackedA + kPackedB / kClusterM);
        uint8_t* dst_a = kSplitRings ? smem + kStagesOffset + kStages * kS8B + s * kPackedStageBytes
                                     : smem + kStagesOffset + s * kSlotStride + (LAYOUT_B8_LAST ? 0 : kS8B);
        hopper::tma_load_2d(dst_a, &wgmma_tma_a, kt * kPackedRowBytes, blk.m * kBlockM, &packed_full[s]);
        if constexpr (!kBGlobal)
          hopper::tma_load_2d(dst_a + kPackedA + rank * (kPackedB / kClusterM), &wgmma_tma_b, kt * kPackedRowBytes,
                              blk.n * kBlockN + rank * kUnpackRows, &packed_full[s]);
      }
      next += kItStride;
    };
    if (COPY_ROTATE ? lane == 0 : pthread == 0)  // thread 0 issues the first copies
      while (next < total && next < kPackedStages) copy_next(!COPY_ROTATE || warp == 0);
    // The INT8 B of the group's tiles g0 .. g1 written: fence it to the async proxy (wgmma reads
    // it) and release it and its packed stage (`packed0` with kSplitRings, one tile a group).
    // With CLUSTER_M=2 (one tile a group) lane 0 of each warp also copies the warp's rows of the
    // INT8 B (rows 8 warp + 32 i: kItems pieces of 8 rows, 1 KiB each) into the other CTA's stage,
    // completing them on that CTA's b_full; warp 0's arrival on this CTA's b_full expects the
    // other CTA's half.
    auto release_b = [&](int it, int g0, int g1, int packed0) {
      hopper::fence_proxy_async_shared();  // the INT8 B, written by st.shared, is read by wgmma (and copied)
      __syncwarp();
      if (lane == 0) {
        for (int g = g0; g <= g1; ++g) {
          const int s = (it + g) % kStages;
          if constexpr (kClusterM > 1) {
            if (warp == 0) {
              hopper::mbarrier_arrive_expect_tx(&b_full[s], kS8B - kS8B / kClusterM);
            } else {
              hopper::mbarrier_arrive(&b_full[s]);
            }
            const uint32_t mine = s8_b(s) + rank * (kS8B / kClusterM);
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
              const uint32_t rows = mine + (8 * warp + i * (kUnpackThreads / 4)) * kS8RowBytes;
              hopper::bulk_copy_to_cta(rows, rows, 8 * kS8RowBytes, &b_full[s], rank ^ 1);
            }
          } else {
            hopper::mbarrier_arrive(&b_full[s]);
          }
          if constexpr (!kBGlobal) hopper::mbarrier_arrive(&packed_empty[kSplitRings ? packed0 : s]);
        }
      }
    };
    if constexpr (kBGlobal > 0) {
      // This thread's chunks: rows thread / 4 + 32 i of the block's B, 16-byte chunk thread % 4 of
      // the K tile's 64 bytes (the chunks unpack_load reads from the stage). Tile `loaded`'s block
      // and K tile are counted along, as the copies' are.
      const uint8_t* b_rows = static_cast<const uint8_t*>(B_) + static_cast<int64_t>(threadIdx.x / 4) * (K / 2) +
                              (threadIdx.x % 4) * 16;
      int loaded = 0, load_kt = 0, load_i = 0;
      tuned::BlockCoord load_blk = tiles.block(0);
      auto load_next = [&](uint4 (&q)[kItems]) {
        if (loaded >= total) return;
        const uint8_t* src = b_rows + static_cast<int64_t>(load_blk.n) * kBlockN * (K / 2) + load_kt * kPackedRowBytes;
#pragma unroll
        for (int i = 0; i < kItems; ++i)
          q[i] = ptx::ld_global_nc_v4(src + static_cast<int64_t>(i) * (kProducerThreads / 4) * (K / 2));
        if (++load_kt == k_tiles) {
          load_kt = 0;
          if (++load_i < tiles.mine) load_blk = tiles.block(load_i);
        }
        ++loaded;
      };
      uint4 ring[kBGlobal > 0 ? kBGlobal : 1][kItems];
#pragma unroll
      for (int d = 0; d < kBGlobal; ++d) load_next(ring[d]);
      for (int it0 = 0; it0 < total; it0 += kBGlobal) {
#pragma unroll
        for (int d = 0; d < kBGlobal; ++d) {
          const int it = it0 + d;
          if (it < total) {
            const int s = it % kStages;
            hopper::mbarrier_wait(&b_empty[s], ((it / kStages) & 1) ^ 1);  // tile it - kStages's wgmma are done
            unpack_store(s8_b(s), ring[d], threadIdx.x);
            release_b(it, 0, 0, s);
            load_next(ring[d]);  // tile it + kBGlobal
            if (threadIdx.x == 0 && next < total) copy_next();
          }
        }
      }
    }
    [[maybe_unused]] RingPos<kPackedStages> unpack_pos;  // the packed stage of tile it (kSplitRings)
    for (int it = first_it; it < total && !kBGlobal; it += kAlternate ? kItStride : kGroup) {
      if constexpr (PRODUCER_SYNCWARP != 0) __syncwarp();  // the warp's threads together again
      const uint32_t phase = (it / kStages) & 1;  // one phase for the group (static_assert above)
      uint4 q[kGroup][kItems];
      if constexpr (kGroup == 1) {
        const int s = it % kStages;
        const int ps = kSplitRings ? unpack_pos.stage : s;
        if constexpr (WAIT_BOTH) {
          hopper::mbarrier_wait_both(&packed_full[ps], kSplitRings ? unpack_pos.phase : phase, &b_empty[s], phase ^ 1);
        } else {
          hopper::mbarrier_wait(&packed_full[ps], kSplitRings ? unpack_pos.phase : phase);
          if (TILE_CLOCKS && lane == 0) tile_clock(it, warp, 0);
          if constexpr (UNPACK_LOAD_FIRST) unpack_load(q[0], packed_b(ps) + rank * (kPackedB / kClusterM), pthread);
          hopper::mbarrier_wait(&b_empty[s], phase ^ 1);  // the consumers' wgmma of tile it - kStages are done
        }
        if (TILE_CLOCKS && lane == 0) tile_clock(it, warp, 1);
        // this CTA's rows of the B tile (all of them without CLUSTER_M)
        if constexpr (!UNPACK_LOAD_FIRST) unpack_load(q[0], packed_b(ps) + rank * (kPackedB / kClusterM), pthread);
        unpack_store(s8_b(s) + rank * (kS8B / kClusterM), q[0], pthread);
        release_b(it, 0, 0, ps);
        if (TILE_CLOCKS && lane == 0) tile_clock(it, warp, 2);
        if constexpr (kSplitRings) unpack_pos.advance();
      } else {
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
          hopper::mbarrier_wait(&packed_full[(it + g) % kStages], phase);
          unpack_load(q[g], packed_b((it + g) % kStages), threadIdx.x);
        }
#pragma unroll
        for (int g = 0; g < kGroup; ++g) {
          const int s = (it + g) % kStages;
          hopper::mbarrier_wait(&b_empty[s], phase ^ 1);  // the consumers' wgmma of tile it + g - kStages are done
          unpack_store(s8_b(s), q[g], threadIdx.x);
          if (UNPACK_EARLY) release_b(it, g, g, 0);
        }
        if (!UNPACK_EARLY) release_b(it, 0, kGroup - 1, 0);
      }
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        if constexpr (COPY_ROTATE) {
          if (lane == 0 && next < total) copy_next((next & 3) == warp);
        } else if (pthread == 0 && next < total) {
          copy_next();
        }
      }
    }
    if (TILE_CLOCKS == 2 && lane == 0) tile_clock_flush(warp);
  } else {
    hopper::setmaxnreg_inc<kConsumerRegs>();
    const int c = wgroup - kProducerGroups;
    const int row = c * kRowsPerConsumer + warp * 16 + lane / 4;  // + 64 h, + 8: this lane's A rows
    const int t = lane % 4;
    int32_t acc[kHalves][Mma::kAcc];
    uint32_t a[2][kHalves][kSteps][4];

    // K tile kt of the block (the CTA's tile it) with its A registers `af`: read A, free the
    // packed stage, wait for B, issue.
    [[maybe_unused]] RingPos<kPackedStages> read_pos;  // the packed stage of tile it (kSplitRings)
    auto tile = [&](int it, int kt, uint32_t (&af)[kHalves][kSteps][4]) {
      const int s = it % kStages;
      const uint32_t phase = (it / kStages) & 1;
      const int ps = kSplitRings ? read_pos.stage : s;
      hopper::mbarrier_wait(&packed_full[ps], kSplitRings ? read_pos.phase : phase);
      if (TILE_CLOCKS && threadIdx.x % 128 == 0) tile_clock(it, 4 + c, 0);
      if constexpr (kSplitRings) read_pos.advance();
      uint32_t w[kHalves][2][kSteps];
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
#pragma unroll
        for (int ks = 0; ks < kSteps; ++ks) {
          w[h][0][ks] = ptx::ld_shared_u32(packed_a(ps) + sw64(row + 64 * h, ks) + 4 * t);
          w[h][1][ks] = ptx::ld_shared_u32(packed_a(ps) + sw64(row + 64 * h + 8, ks) + 4 * t);
        }
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
#pragma unroll
        for (int ks = 0; ks < kSteps; ++ks) {
          af[h][ks][0] = lo_x16(w[h][0][ks]);
          af[h][ks][1] = lo_x16(w[h][1][ks]);
          af[h][ks][2] = hi_x16(w[h][0][ks]);
          af[h][ks][3] = hi_x16(w[h][1][ks]);
        }
      __syncwarp();  // every lane's loads are in registers: the packed stage may be refilled
      if (lane == 0) hopper::mbarrier_arrive(&packed_empty[ps]);
      hopper::mbarrier_wait(&b_full[s], phase);
      if (TILE_CLOCKS && threadIdx.x % 128 == 0) tile_clock(it, 4 + c, 1);
      hopper::wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks)
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
          Mma::mma(acc[h], af[h][ks], hopper::desc_k_major_sw128(s8_b(s) + ks * 32), kt > 0 || ks > 0);
      hopper::wgmma_commit();
      hopper::wgmma_wait<1>();  // tile it - 1's wgmma are done: its INT8 B and its A registers are free
      if (TILE_CLOCKS && threadIdx.x % 128 == 0) tile_clock(it, 4 + c, 2);
      if (kt > 0 && lane == 0) hopper::mbarrier_arrive_every_cta<kClusterM>(&b_empty[(it - 1) % kStages]);
    };
    int it = 0;
    [[maybe_unused]] int boxes = 0;  // C boxes this warpgroup stored (EPI_TMA)
    for (int i = 0; i < tiles.mine; ++i) {
      // Two tiles per iteration, so each tile's A registers are a fixed half of `a`.
      int kt = 0;
      for (; kt + 1 < k_tiles; kt += 2, it += 2) {
        tile(it, kt, a[0]);
        tile(it + 1, kt + 1, a[1]);
      }
      // An odd count's last tile: not in the persistent build, where it would give a block's
      // last and the next block's first tile the same A registers, which makes ptxas
      // serialize every wgmma (C7512); the harness refuses such K for it (Tiling.check_shape).
      if constexpr (!kPersistent) {
        if (kt < k_tiles) tile(it++, kt, a[0]);
      }
      hopper::wgmma_wait<0>();
#pragma unroll
      for (int h = 0; h < kHalves; ++h) hopper::fence_operands(acc[h]);
      // the block's last INT8 B stage, which the producer refills with the next block's while
      // this warpgroup stores C
      if (kPersistent && lane == 0) hopper::mbarrier_arrive_every_cta<kClusterM>(&b_empty[(it - 1) % kStages]);

      // Accumulators to C (the m64 layout of wgmma_gemm.cuh per half), each divided by 256
      // exactly; the block's place computed here, not held through the main loop (registers).
      const tuned::BlockCoord blk = tiles.block(i);
#if EPI_TMA
      if constexpr (kEpiSlots > 0) {
#pragma unroll
        for (int h = 0; h < kHalves; ++h) {
          ctma::store_fragment<kEpiSlots, Mma::kAcc / 4>(
              [&](int r) { return static_cast<uint32_t>(acc[h][r] >> 8); },
              smem + kEpiOffset + c * kEpiSlots * ctma::kSlotBytes, boxes, &wgmma_tma_c,
              blk.n * kBlockN * 4, blk.m * kBlockM + c * kRowsPerConsumer + 64 * h, warp, lane, 1 + c,
              threadIdx.x % 128 == 0);
        }
        continue;
      }
#endif
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        const int64_t crow = static_cast<int64_t>(blk.m) * kBlockM + row + 64 * h;
        int32_t* out = static_cast<int32_t*>(C_) + crow * N + static_cast<int64_t>(blk.n) * kBlockN + 2 * t;
#pragma unroll
        for (int j = 0; j < Mma::kAcc / 4; ++j) {
          *reinterpret_cast<int2*>(out + 8 * j) = int2{acc[h][4 * j] >> 8, acc[h][4 * j + 1] >> 8};
          *reinterpret_cast<int2*>(out + 8 * N + 8 * j) = int2{acc[h][4 * j + 2] >> 8, acc[h][4 * j + 3] >> 8};
        }
      }
    }
    // every copy of C complete before the CTA's shared memory goes
    if constexpr (kEpiSlots > 0) {
      if (threadIdx.x % 128 == 0) hopper::bulk_wait<0>();
    }
    if (TILE_CLOCKS == 2 && threadIdx.x % 128 == 0) tile_clock_flush(4 + c);
  }
  // no CTA leaves while the other may still copy into its stages or arrive on its barriers
  if constexpr (kClusterM > 1) hopper::cluster_sync();
}

}  // namespace i4wg

// The launcher: the study's signature, one block of kThreads per SM (setmaxnreg needs the
// register cap at entry), dynamic shared memory kSmemBytes; SMEM_BYTES, when given (the
// registry's tiling.smem_bytes), must equal it: the harness launches with that many bytes.
// With CLUSTER_M 2 the cluster shape (1, 2, 1) is compiled in (__cluster_dims__).
#if CLUSTER_M > 1
#define INT4_CLUSTER_DIMS __cluster_dims__(1, CLUSTER_M, 1)
#else
#define INT4_CLUSTER_DIMS
#endif
#define INT4_WGMMA_KERNEL(name)                                                                          \
  static_assert(!(SMEM_BYTES_GIVEN) || i4wg::kSmemBytes == (SMEM_BYTES_VALUE),                           \
                #name ": tiling.smem_bytes in the registry differs from the shared memory it lays out"); \
  extern "C" __global__ void __launch_bounds__(i4wg::kThreads, 1) INT4_CLUSTER_DIMS                       \
      name(const void* __restrict__ A_, const void* __restrict__ B_, void* __restrict__ C_, int M, int N, int K)
