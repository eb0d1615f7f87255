#!/bin/bash
# The first call (2026-12-04, night), from the repository root with $OUT set: the GPU tests of the
# wgmma kernels on the tree (GemmRunner._write_tensor_map shared by A, B and C's maps), then l2.py.
D=docs/gpu-runs/2026-12-04_l2_order
python3 -m pytest -m gpu -q -p no:cacheprovider -n 0 tests/test_wgmma.py 2>&1 | tail -8 > $OUT/pytest_wgmma.log
tail -3 $OUT/pytest_wgmma.log
# (C_EVICT_FIRST, in the tree when this ran, is now c_evict_first.patch)
rm -rf /tmp/kc && cp -r kernels /tmp/kc && patch -s -d /tmp/kc -p2 < $D/c_evict_first.patch || exit 1
KDIR=/tmp/kc python3 $D/l2.py 2>&1 | tee $OUT/l2.log
