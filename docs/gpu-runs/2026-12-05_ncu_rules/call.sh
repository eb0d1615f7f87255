#!/bin/bash
# The call (from the repository root, $OUT set, .whl/ carried).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
timeout 420 python3 docs/gpu-runs/2026-12-05_ncu_rules/check.py 2>&1 | tee $OUT/check.log
