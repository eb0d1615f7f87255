#!/bin/bash
# The first call (2026-12-04, night), from the repository root with $OUT set: the GPU tests of the
# wgmma kernels on the tree (GemmRunner._write_tensor_map shared by A, B and C's maps), then l2.py.
D=docs/gpu-runs/2026-12-04_l2_order
python3 -m pytest -m gpu -q -p no:cacheprovider -n 0 tests/test_wgmma.py 2>&1 | tail -8 > $OUT/pytest_wgmma.log
tail -3 $OUT/pytest_wgmma.log
python3 $D/l2.py 2>&1 | tee $OUT/l2.log
