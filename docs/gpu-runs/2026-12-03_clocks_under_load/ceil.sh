#!/usr/bin/env bash
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
t0=$(date +%s)
snakemake --cores 8 --scheduler greedy --config gpu=off -- results/build/sm_90/ceilings/wgmma_peak.cubin > $OUT/build.log 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ncu --version | tail -1
ncu --clock-control none --metrics sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum \
  -o $OUT/ceil_ncu python3 .devrun/ceilncu.py results/build/sm_90/ceilings/wgmma_peak.cubin > $OUT/ceil_ncu.log 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
tail -5 $OUT/ceil_ncu.log
ncu --import $OUT/ceil_ncu.ncu-rep --csv --page raw --metrics sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum > $OUT/ceil_ncu.csv 2>&1
cut -c1-300 $OUT/ceil_ncu.csv | head -20
xz -9 $OUT/ceil_ncu.ncu-rep
cp .devrun/ceilncu.py .devrun/ceil.sh $OUT/
