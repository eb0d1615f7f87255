#!/bin/bash
# The second call (2026-12-04), from the repository root with $OUT set: (1) the GPU tests of
# the wgmma kernels and the harness on the tree as committed (the harness asks the cubin for
# C's map, analysis.gpu.harness.cubin_globals); (2) memcheck and racecheck of every registered
# TMA kernel with the workflow's sanitize command (sanitize_registered.py); (3) overlap.patch
# applied, ncu --set full (clock control none) of one launch of int8_wgmma_cluster as
# registered and with EPI_OVERLAP (i8_ov8) at N = 8192, for their stall reasons.
D=docs/gpu-runs/2026-12-04_overlap
python3 -m pytest -m gpu -q -p no:cacheprovider -n 0 tests/test_wgmma.py tests/test_harness.py 2>&1 | tail -15 > $OUT/pytest_gpu.log
tail -3 $OUT/pytest_gpu.log
python3 $D/sanitize_registered.py 2>&1 | tee $OUT/sanitize_registered.log
git apply $D/overlap.patch || exit 1
export OV_ONLY=i8,i8_ov8
python3 $D/ov.py build || exit 1
NCU=$(python3 -c "from analysis.tools import find_tool; print(find_tool('ncu'))")
$NCU --clock-control none --set full --import-source yes --profile-from-start off --force-overwrite \
  --export /tmp/wov/ov2_full python3 $D/ov.py profile > /tmp/wov/ov2_full.log 2>&1
echo "ncu rc=$?"; tail -5 /tmp/wov/ov2_full.log
xz -T4 -c /tmp/wov/ov2_full.ncu-rep > $OUT/ov2_full.ncu-rep.xz
git checkout kernels/
ls -la $OUT
