#!/usr/bin/env bash
# A second development call: build int8_wgmma_cluster (the workflow's build rule), then operands.py.
# Run from the repository root: bash docs/gpu-runs/2026-12-03_operand_power/dev2.sh
set -uo pipefail
HERE=docs/gpu-runs/2026-12-03_operand_power
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu2.txt
snakemake --cores 8 --scheduler greedy --config gpu=off -- results/build/sm_90a/int8_wgmma_cluster.cubin > $OUT/build2.log 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
python3 $HERE/operands.py $OUT > $OUT/operands.log 2>&1
echo "operands rc=$? $(( $(date +%s) - t0 )) s"
tail -8 $OUT/operands.log
