#!/usr/bin/env bash
# One development call, from the repository root: rot.py (builds, the GEMM's check, timings with
# nvidia-smi sampling), then one ncu launch of each load (clock and tensor pipe), then the GPU tests
# of the wgmma ceilings. Files: gpu.txt, rot.log, rot_loads.json, rot_smi.csv, rot_ncu.csv, pytest_gpu.log.
set -uo pipefail
HERE=docs/gpu-runs/2026-12-07_operand_rotation
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
timeout -k 10 240 python3 $HERE/rot.py 2>&1 | tee "$OUT/rot.log"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
timeout -k 10 120 ncu --clock-control none --profile-from-start off --metrics $M --csv \
  python3 $HERE/rot.py profile > "$OUT/rot_ncu.csv" 2> "$OUT/rot_ncu.err"
echo "ncu rc=$?"; cut -c1-200 "$OUT/rot_ncu.csv" | tail -3
timeout 120 python3 -m pytest -m gpu -n 0 -p no:cacheprovider -q tests/test_references.py > "$OUT/pytest_gpu.log" 2>&1
tail -3 "$OUT/pytest_gpu.log"
ls -la "$OUT"
