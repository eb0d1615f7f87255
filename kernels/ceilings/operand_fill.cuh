// The operand fill of the wgmma ceilings (wgmma_peak.cu, and development loops built beside it).
#pragma once

#include <cstdint>

namespace ceiling_fill {

// MurmurHash3's 32-bit finalizer (fmix32; Austin Appleby, MurmurHash3, public domain): 32
// well-mixed bits from an index, each bit flipping with probability about 1/2.
__device__ __forceinline__ uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace ceiling_fill
