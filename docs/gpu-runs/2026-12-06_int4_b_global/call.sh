#!/usr/bin/env bash
# The development call, from the repository root: DEV_SET=b_global (default) of ../2026-12-06_layout_pad/dev.py
# (builds, checks, timings, ceilings, sanitizers, profiles), then the GPU tests of B_GLOBAL; its
# output, nvidia-smi's description of the GPU and the sanitizers' records go back in
# dev9_logs.tar.xz (a call returns at most 8 files). DEV_SET=alternate: the same for
# PRODUCER_ALTERNATE (../2026-12-07_int4_alternate/), files dev10_*; DEV_SET=syncwarp: PRODUCER_SYNCWARP and
# B_GLOBAL=1 with 224 consumer registers, files dev11_*; DEV_SET=cluster: clusters of two CTAs sharing the
# unpacked B (CLUSTER_M=2, ../2026-12-07_int4_cluster/), files dev12_*.
set -uo pipefail
DEV_SET=${DEV_SET:-b_global}
case "$DEV_SET" in
  b_global) PFX=dev9; TESTS=packed_b_from_global ;;
  alternate) PFX=dev10; TESTS=alternate_k_tiles ;;
  syncwarp) PFX=dev11; TESTS="rejoined or epi_tma-1]" ;;
  cluster) PFX=dev12; TESTS="clusters_of_two" ;;
  *) echo "DEV_SET: b_global, alternate, syncwarp or cluster, not $DEV_SET" >&2; exit 2 ;;
esac
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
timeout -k 10 ${DEV_LIMIT:-300} env DEV_SET=$DEV_SET python3 docs/gpu-runs/2026-12-06_layout_pad/dev.py 2>&1 | tee "$OUT/$PFX.log" | tail -30
timeout 150 python3 -m pytest -m gpu -n 0 -p no:cacheprovider -q tests/test_wgmma.py -k "$TESTS" \
  > "$OUT/pytest_gpu.log" 2>&1
tail -3 "$OUT/pytest_gpu.log"
(cd "$OUT" && tar cJf ${PFX}_logs.tar.xz gpu.txt $PFX.log pytest_gpu.log $(ls ${PFX}_sanitize.json 2>/dev/null) \
  && rm -f gpu.txt $PFX.log pytest_gpu.log ${PFX}_sanitize.json)
ls -la "$OUT"
