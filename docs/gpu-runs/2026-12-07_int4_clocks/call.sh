#!/usr/bin/env bash
# The development call, from the repository root, with $OUT set: clocks.py (this folder), then
# summary.py on its files (summary.txt); nvidia-smi's description of the GPU and clocks.py's output
# go back in logs.tar.xz.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
python3 docs/gpu-runs/2026-12-07_int4_clocks/clocks.py 2>&1 | tee "$OUT/clocks.log" | tail -20
CLOCKS_DIR="$OUT" python3 docs/gpu-runs/2026-12-07_int4_clocks/summary.py 2>&1 | tee "$OUT/summary.txt" | tail -20 || true
(cd "$OUT" && tar cJf logs.tar.xz gpu.txt clocks.log && rm -f gpu.txt clocks.log)
ls -la "$OUT"
