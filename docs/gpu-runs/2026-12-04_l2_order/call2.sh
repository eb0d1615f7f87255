#!/bin/bash
# The second call (2026-12-04, night), from the repository root with $OUT set: l2.py's builds of
# the trickled stores (call2.patch applied to a copy of kernels/) beside the first call's best.
D=docs/gpu-runs/2026-12-04_l2_order
# (C_EVICT_FIRST, in the tree when this ran, is now c_evict_first.patch; call2.patch applies after it)
rm -rf /tmp/kc && cp -r kernels /tmp/kc && patch -s -d /tmp/kc -p2 < $D/c_evict_first.patch \
  && patch -s -d /tmp/kc -p2 < $D/call2.patch || exit 1
KDIR=/tmp/kc L2_PFX=l2b L2_SANITIZE=1 L2_ONLY=reg,serp16_s64,tr16,tr16_serp16,tr8_serp16,i4,i4_s64 \
  python3 $D/l2.py 2>&1 | tee $OUT/l2b.log
