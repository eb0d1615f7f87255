#!/usr/bin/env bash
# The development call, from the repository root: DEV_SET=alternate of ../2026-12-06_layout_pad/dev.py
# (builds, checks, timings, ceilings, sanitizers, profiles), then the GPU test of PRODUCER_ALTERNATE;
# its output, nvidia-smi's description of the GPU and the sanitizers' records go back in
# dev10_logs.tar.xz (a call returns at most 8 files).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
DEV_SET=alternate python3 docs/gpu-runs/2026-12-06_layout_pad/dev.py 2>&1 | tee "$OUT/dev10.log" | tail -30
timeout 150 python3 -m pytest -m gpu -n 0 -p no:cacheprovider -q tests/test_wgmma.py -k alternate_k_tiles \
  > "$OUT/pytest_gpu.log" 2>&1
tail -3 "$OUT/pytest_gpu.log"
(cd "$OUT" && tar cJf dev10_logs.tar.xz gpu.txt dev10.log pytest_gpu.log $(ls dev10_sanitize.json 2>/dev/null) \
  && rm -f gpu.txt dev10.log pytest_gpu.log dev10_sanitize.json)
ls -la "$OUT"
