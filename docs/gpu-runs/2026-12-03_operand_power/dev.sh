#!/usr/bin/env bash
# One development call: build the two cluster kernels and the wgmma ceilings (the workflow's
# build rules), then power.py (timings, nvidia-smi) and power_ncu.py under ncu.
# Run from the repository root: bash docs/gpu-runs/2026-12-03_operand_power/dev.sh
set -uo pipefail
HERE=docs/gpu-runs/2026-12-03_operand_power
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt
snakemake --cores 8 --scheduler greedy --config gpu=off -- results/build/sm_90/ceilings/wgmma_peak.cubin \
  results/build/sm_90a/int8_wgmma_cluster.cubin results/build/sm_90a/fp16_wgmma_cluster.cubin > $OUT/build.log 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
python3 $HERE/power.py $OUT > $OUT/power.log 2>&1
echo "power rc=$? $(( $(date +%s) - t0 )) s"
cat $OUT/power.log | tail -30
M=sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
ncu --clock-control none --metrics $M -o $OUT/power_ncu python3 $HERE/power_ncu.py > $OUT/power_ncu.log 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
tail -4 $OUT/power_ncu.log
ncu --import $OUT/power_ncu.ncu-rep --csv --page raw --metrics $M > $OUT/power_ncu.csv 2>&1
cut -c1-250 $OUT/power_ncu.csv | head -3
xz -9 $OUT/power_ncu.ncu-rep
cp results/build/sm_90/ceilings/wgmma_peak.sass $OUT/ 2>/dev/null
ls -la $OUT
