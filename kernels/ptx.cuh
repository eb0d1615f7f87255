// Typed PTX wrappers shared by every kernel in this directory.
//
// Each wrapper is one PTX instruction (or a fixed, tiny group of them) with the
// operand types spelled out, so that a wrong register count or element type is a
// compile error rather than silent garbage. Instruction semantics and fragment
// layouts: PTX ISA, sections "cp.async", "ldmatrix" and "Matrix Fragments for
// mma.m16n8k16 / mma.m16n8k32 / mma.m16n8k64".
#pragma once

#include <cstdint>

namespace ptx {

// Shared-memory generic pointer -> 32-bit shared-state-space address.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cp.async (sm_80+): 16-byte global -> shared copies ------------------------
// .cg caches in L2 only; .ca also in L1. 16 bytes is the only size .cg allows.
__device__ __forceinline__ void cp_async_cg_16(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(smem_dst)),
               "l"(gmem_src));
}

__device__ __forceinline__ void cp_async_ca_16(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(smem_dst)),
               "l"(gmem_src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most N of the most recently committed groups are still pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---- ldmatrix (sm_75+): 8x8 tiles of 16-bit elements, shared -> registers --------
// Lanes 8i..8i+7 supply the row addresses of tile i; each lane receives, per tile,
// the 32-bit word at row lane/4, 16-bit columns 2*(lane%4) and 2*(lane%4)+1.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(smem_row)));
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_u32(smem_row)));
}

__device__ __forceinline__ void ldmatrix_x1(uint32_t (&r)[1], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0])
               : "r"(smem_u32(smem_row)));
}

// ---- prmt: byte permute --------------------------------------------------------
// Result byte i = byte (sel >> 4*i) & 7 of the 8-byte value {b, a} (a holds bytes 0-3).
template <uint32_t kSel>
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "n"(kSel));
  return d;
}

// ---- cvt: an .f16x2 register to two f32 (exact) -----------------------------------
__device__ __forceinline__ float2 f16x2_to_f32x2(uint32_t h2) {
  float lo, hi;
  asm("{\n.reg .f16 l, h;\nmov.b32 {l, h}, %2;\ncvt.f32.f16 %0, l;\ncvt.f32.f16 %1, h;\n}\n"
      : "=f"(lo), "=f"(hi) : "r"(h2));
  return make_float2(lo, hi);
}

// ---- mma.sync (warp-wide tensor-core MMA), D = A*B + D in place ----------------
// f16 inputs, f32 accumulators: A 4 x .b32 (8 halves), B 2 x .b32, C/D 4 x f32.
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&d)[4], const uint32_t (&a)[4],
                                                     uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// f16 inputs, f16 accumulators: A 4 x .b32, B 2 x .b32, C/D 2 x .f16x2 (d[0]: row g,
// columns 2*(lane % 4) + {0, 1}; d[1]: the same columns of row g + 8).
__device__ __forceinline__ void mma_m16n8k16_f16_f16(uint32_t (&d)[2], const uint32_t (&a)[4],
                                                     uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
      "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// s8 inputs, s32 accumulators, K = 32: A 4 x .b32 (16 s8), B 2 x .b32 (8 s8), C/D 4 x s32.
__device__ __forceinline__ void mma_m16n8k32_s8_s32(int32_t (&d)[4], const uint32_t (&a)[4],
                                                    uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// s8 inputs, s32 accumulators, K = 16: A 2 x .b32, B 1 x .b32, C/D 4 x s32.
__device__ __forceinline__ void mma_m16n8k16_s8_s32(int32_t (&d)[4], const uint32_t (&a)[2],
                                                    uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
}

// f16 inputs, f32 accumulators, K = 8: A 2 x .b32, B 1 x .b32, C/D 4 x f32.
__device__ __forceinline__ void mma_m16n8k8_f16_f32(float (&d)[4], const uint32_t (&a)[2], uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
}

// s4 inputs, s32 accumulators, K = 32: A 2 x .b32 (16 s4), B 1 x .b32 (8 s4), C/D 4 x s32.
__device__ __forceinline__ void mma_m16n8k32_s4_s32(int32_t (&d)[4], const uint32_t (&a)[2],
                                                    uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
}

// s4 inputs, s32 accumulators, K = 64: A 4 x .b32 (32 s4), B 2 x .b32 (16 s4), C/D 4 x s32.
__device__ __forceinline__ void mma_m16n8k64_s4_s32(int32_t (&d)[4], const uint32_t (&a)[4],
                                                    uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}


// ---- Shared-state-space addresses (32-bit, from smem_u32) ------------------------
// The same instructions as above, addressed by a precomputed shared-memory address so
// that a kernel can keep one base register per lane and add constant offsets (used by
// the tuned kernels, kernels/tuned_gemm.cuh, whose tiles live in dynamic shared memory).
__device__ __forceinline__ void cp_async_cg_16_shared(uint32_t smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_dst), "l"(gmem_src));
}

__device__ __forceinline__ void ldmatrix_x4_shared(uint32_t (&r)[4], uint32_t smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row));
}

// 16-byte shared-memory load and store (ld.shared.v4.b32 / st.shared.v4.b32).
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t smem_src) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(smem_src));
  return v;
}

// 4-byte shared-memory load (ld.shared.b32).
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t smem_src) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_src));
  return v;
}

// 16-byte global load through the read-only path without allocating in L1
// (ld.global.nc.L1::no_allocate.v4.b32); volatile, so it is issued where it stands in program
// order (a prefetch) rather than where its value is first used.
__device__ __forceinline__ uint4 ld_global_nc_v4(const void* gmem_src) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(gmem_src));
  return v;
}

__device__ __forceinline__ void st_shared_v4(uint32_t smem_dst, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_dst), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w));
}

}  // namespace ptx
