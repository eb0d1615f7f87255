// Typed PTX wrappers for Hopper's own path (sm_90a): mbarriers, TMA bulk tensor copies,
// the async-proxy fence, shared-memory matrix descriptors and warpgroup MMA (wgmma).
// One instruction (or a fixed tiny group) per function, operand types spelled out, as in
// ptx.cuh (which this header leaves unchanged). Sources, PTX ISA (9.x) sections:
// "Parallel Synchronization and Communication Instructions: mbarrier" (init, arrive,
// expect-tx, try_wait.parity and the phase / tx-count rules), "cp.async.bulk.tensor",
// "Tensor-map" (where the map may live), "membar / fence" (fence.proxy.async,
// fence.mbarrier_init), "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions" (wgmma.mma_async, wgmma.fence, commit_group, wait_group, "Matrix
// Descriptor Format") and "setmaxnreg".
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "hopper.cuh: wgmma and setmaxnreg need the architecture-specific target sm_90a (-arch=sm_90a)"
#endif

namespace hopper {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (sm_80+; expect_tx and try_wait sm_90) -----------------------------------
// A 64-bit barrier object in shared memory: an arrival count for the current phase and a
// transaction count (bytes still to arrive from async copies). A phase completes when both
// reach zero; waiters name the phase they wait for by its parity (0 for the first).

// Set the expected arrivals of every phase to `count`; the phase parity starts at 0.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

// Make mbarrier.init visible to the async proxy (TMA's complete_tx) and to other threads,
// before any of them uses the barriers (followed by a block barrier).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Arrive once and raise the phase's expected transaction count by `bytes`.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}

// Arrive once (release semantics at CTA scope by default).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// Spin until the phase of parity `parity` has completed (acquire at CTA scope). On a fresh
// barrier (current phase 0) waiting for parity 1 returns at once: "the phase before".
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

// Spin until the phases of parity `pa` of `a` and `pb` of `b` have both completed: each round
// issues both try_waits before either result is used, so that their round trips may overlap
// instead of following each other (a try_wait may hold its warp until its phase completes).
__device__ __forceinline__ void mbarrier_wait_both(uint64_t* a, uint32_t pa, uint64_t* b, uint32_t pb) {
  uint32_t done;
  do {
    asm volatile(
        "{\n .reg .pred p, q;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 q, [%3], %4;\n and.pred p, p, q;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(a)), "r"(pa), "r"(smem_u32(b)), "r"(pb)
        : "memory");
  } while (!done);
}

// ---- clusters (sm_90) ------------------------------------------------------------------
// A cluster's CTAs run at the same time on one GPC and address each other's shared memory
// (PTX ISA "Cluster of Cooperative Thread Arrays", mapa, barrier.cluster).

// This CTA's rank in its cluster (%cluster_ctarank).
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster arrives (release) and waits (acquire): after it,
// each CTA's shared memory and barriers written before it are visible cluster-wide. Not
// .aligned: threads of a warp may reach it apart.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// Arrive once on the barrier at the same shared-memory offset as `bar` in the cluster's CTA
// `cta` (this CTA's own included): mapa gives its address in the cluster's shared-memory
// window. Default semantics (release at CTA scope), as for mbarrier_arrive: the explicit
// .release.cluster form costs a MEMBAR.ALL.GPU before every arrival (nvcc 13.5.37 SASS), and
// what an arrival here announces, that this warp's wgmma have finished reading a stage, is
// complete before it (wgmma.wait_group).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}

// Arrive once on the barrier at `bar`'s offset in every CTA of a cluster of kCtas (this CTA's
// alone where kCtas is 1): a stage that every CTA's producer writes into is released in all of them.
template <int kCtas>
__device__ __forceinline__ void mbarrier_arrive_every_cta(uint64_t* bar) {
  if constexpr (kCtas == 1) {
    mbarrier_arrive(bar);
  } else {
#pragma unroll
    for (int cta = 0; cta < kCtas; ++cta) mbarrier_arrive_cluster(bar, cta);
  }
}

// ---- TMA: cp.async.bulk.tensor (sm_90) ---------------------------------------------------
// A CUtensorMap (128 opaque bytes, 64-byte aligned) made on the host by
// cuTensorMapEncodeTiled. PTX ISA "Tensor-map": the map may be a kernel parameter
// (.param, const __grid_constant__), in .const or in .global memory, addressed generically;
// these kernels keep it in a __device__ global the host fills with cuMemcpyHtoD before the
// launch (the launch orders that copy before the kernel; only a map modified on the device
// needs fence.proxy.tensormap_generic).
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};

// Copy the box of `map` at (c0, c1) (c0 innermost, in elements of the map's data type) to
// shared memory at `dst`, counting its bytes against `bar`'s transaction count. The map's
// swizzle mode decides the shared-memory layout; `dst` must be aligned to the swizzle
// pattern's repeat (1024 bytes for 128-byte swizzle).
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap* map, int32_t c0, int32_t c1,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// tma_load_2d into the same shared-memory offset `dst` of every CTA of the cluster whose bit
// is set in `cta_mask`, each copy counting its bytes against the barrier at `bar`'s offset
// in that CTA (".multicast::cluster"): one read of L2 feeds several CTAs.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TensorMap* map, int32_t c0, int32_t c1,
                                                      uint64_t* bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)),
      "h"(cta_mask)
      : "memory");
}

// ---- L2 eviction priority (PTX ISA "createpolicy", ".L2::cache_hint") ----------------------
// kind 1: evict_first (the lines a copy brings in are the first candidates to leave L2), 2:
// evict_last (the last); a policy covers every access it is given to (fraction 1.0).
template <int kind>
__device__ __forceinline__ uint64_t l2_policy() {
  static_assert(kind == 1 || kind == 2, "l2_policy: 1 (evict_first) or 2 (evict_last)");
  uint64_t policy;
  if constexpr (kind == 1) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  } else {
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  }
  return policy;
}

// tma_load_2d and tma_load_2d_multicast under the L2 cache policy `policy` (l2_policy).
__device__ __forceinline__ void tma_load_2d_hint(void* dst, const TensorMap* map, int32_t c0, int32_t c1, uint64_t* bar,
                                                 uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d_multicast_hint(void* dst, const TensorMap* map, int32_t c0, int32_t c1,
                                                           uint64_t* bar, uint16_t cta_mask, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)),
      "h"(cta_mask), "l"(policy)
      : "memory");
}

// Copy shared memory at `src` to the box of `map` at (c0, c1) in global memory (the reverse of
// tma_load_2d; the map's swizzle gives the shared-memory layout), in this thread's current
// bulk async-group. The source's generic-proxy writes must be ordered before it by
// fence_proxy_async_shared in each writing thread and a barrier.
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, const void* src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1)
               : "memory");
}

// Copy `bytes` (a multiple of 16; both addresses 16-byte aligned) of this CTA's shared memory at
// the shared-window address `src` to the same offset `dst` in cluster CTA `cta`, counting them
// against the barrier at `bar`'s offset in that CTA (PTX ISA "cp.async.bulk", shared::cta to
// shared::cluster; mapa gives both addresses in the cluster's window). The source's generic-proxy
// writes must be ordered before it by fence_proxy_async_shared in each writing thread and a
// barrier; the source may be written again only once the destination's barrier has seen the bytes.
__device__ __forceinline__ void bulk_copy_to_cta(uint32_t dst, uint32_t src, uint32_t bytes, uint64_t* bar,
                                                 uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 rdst, rbar;\n mapa.shared::cluster.u32 rdst, %0, %3;\n mapa.shared::cluster.u32 rbar, %4, %3;\n"
      " cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [rdst], [%1], %2, [rbar];\n}\n"
      ::"r"(dst), "r"(src), "r"(bytes), "r"(cta), "r"(smem_u32(bar))
      : "memory");
}

// Close this thread's current bulk async-group ("cp.async.bulk.commit_group").
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Wait until at most N of this thread's bulk async-groups have not finished reading their
// shared-memory source (".read": the source may then be overwritten; the global writes may
// still be under way).
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// Wait until at most N of this thread's bulk async-groups are incomplete (writes performed).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

// Named barrier `id` (1-15; 0 is __syncthreads') of `count` threads, a multiple of 32.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Arrive on named barrier `id` (1-15) of `count` threads without waiting for the others
// (bar.arrive: a producer's half of a bar.sync that other warps wait in).
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Store 8 bytes to shared memory at the shared-window address `dst`.
__device__ __forceinline__ void st_shared_v2(uint32_t dst, uint32_t x, uint32_t y) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(dst), "r"(x), "r"(y) : "memory");
}

// Fetch a tensor map into the cache ahead of its first use.
__device__ __forceinline__ void prefetch_tensormap(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Order this thread's generic-proxy shared-memory accesses before later async-proxy ones.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- setmaxnreg (sm_90a) -------------------------------------------------------------------
// Move registers between warpgroups: every warp of a warpgroup executes the same one.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: 24..256, a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: 24..256, a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// ---- wgmma (sm_90a) -------------------------------------------------------------------------
// Shared-memory matrix descriptor ("Matrix Descriptor Format"): bits 0-13 start address
// >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4,
// 49-51 base offset, 62-63 swizzle mode (1 = 128-byte). For a K-major operand in the
// 128-byte swizzle (rows of 128 bytes, the 16-byte chunk c of row r stored at chunk
// c ^ (r % 8), the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B) the stride offset
// is 1024 bytes (8 rows to the next group of 8 rows) and the leading offset is unused (1).
// The K steps inside the 128-byte row are reached by adding their byte offset (32 per
// step) to the start address: the swizzle is a function of the address bits, so a tile
// whose base is 1024-byte aligned keeps base offset 0.
__device__ __forceinline__ uint64_t desc_k_major_sw128(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// Two FP32 values rounded to nearest FP16 and packed: lo in bits 0-15 (the lower address),
// hi in bits 16-31 (PTX ISA, cvt: for .f16x2 the first source goes to the upper half).
__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Pin the accumulators at this point of the program: the compiler may not move their reads
// or writes across it (after wgmma_wait, before the epilogue reads them).
template <typename T, int N>
__device__ __forceinline__ void fence_operands(T (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if constexpr (sizeof(T) == 4 && std::is_floating_point_v<T>) {
      asm volatile("" : "+f"(d[i])::"memory");
    } else {
      asm volatile("" : "+r"(d[i])::"memory");
    }
  }
}

// Make the accumulator registers' prior writes visible to the wgmma that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Close the wgmma issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Wait until at most N committed groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The 128 accumulator operands %0 .. %127 of an m64n256 wgmma, as PTX text.
#define HOPPER_WGMMA_D128 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// D (64 x 256, FP32) += A (64 x 16, FP16) * B (16 x 256, FP16), A and B from shared memory,
// both K-major (transpose flags 0), no negation; `accumulate` 0 gives D = A * B (scale-d
// false: the first K step needs no zeroed accumulators). The warpgroup's
// 128 threads hold D: warp w rows 16w .. 16w + 15; lane l, register 4j + i holds row
// 16w + l / 4 + 8 (i / 2), column 8j + 2 (l % 4) + i % 2 (the m16n8 accumulator layout
// repeated over 32 column blocks of 8).
__device__ __forceinline__ void wgmma_m64n256k16_f32_f16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                         uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16\n"
      "{" HOPPER_WGMMA_D128 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// D (64 x 256, INT32) += A (64 x 32, INT8) * B (32 x 256, INT8), A and B from shared
// memory, K-major (the only layout for integer wgmma), `accumulate` as above; D as for
// the FP16 shape.
__device__ __forceinline__ void wgmma_m64n256k32_s32_s8(int32_t (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                        uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8\n"
      "{" HOPPER_WGMMA_D128 "}, %128, %129, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
        "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]),
        "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),
        "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]),
        "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]),
        "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),
        "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
        "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]),
        "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// D (64 x 256, INT32) += A (64 x 32, INT8) * B (32 x 256, INT8), A from registers and B
// from shared memory (K-major), `accumulate` as above; D as for the other shapes. A's
// fragment ("Register Fragments", wgmma .s8 k32): warp w of the warpgroup holds rows
// 16w .. 16w + 15; lane l, with g = l / 4 and t = l % 4, holds in a[0] the four INT8 of
// row g at K 4t .. 4t + 3, a[1] row g + 8 at the same K, a[2] row g at K 16 + 4t ..
// 16 + 4t + 3 and a[3] row g + 8 there (the m16n8k32 A layout of mma.sync). The
// registers must not change until the wgmma reading them has completed (wgmma_wait).
__device__ __forceinline__ void wgmma_m64n256k32_s32_s8_rs(int32_t (&d)[128], const uint32_t (&a)[4],
                                                           uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8\n"
      "{" HOPPER_WGMMA_D128 "}, {%128, %129, %130, %131}, %132, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
        "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]),
        "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),
        "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]),
        "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]),
        "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),
        "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
        "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]),
        "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// The 64 accumulator operands %0 .. %63 of an m64n128 wgmma, as PTX text.
#define HOPPER_WGMMA_D64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// D (64 x 128, INT32) += A (64 x 32, INT8) * B (32 x 128, INT8), A from registers (the
// fragment of wgmma_m64n256k32_s32_s8_rs) and B from shared memory (K-major); D as for
// the n256 shapes over 16 column blocks of 8.
__device__ __forceinline__ void wgmma_m64n128k32_s32_s8_rs(int32_t (&d)[64], const uint32_t (&a)[4],
                                                           uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8\n"
      "{" HOPPER_WGMMA_D64 "}, {%64, %65, %66, %67}, %68, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

}  // namespace hopper
