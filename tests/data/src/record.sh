#!/usr/bin/env bash
# Record the small real reports of tests/data on a GPU machine with nvcc and ncu:
#   bash tests/data/src/record.sh OUTDIR
# Every ncu call leaves clocks as the GPU runs them (--clock-control none).
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
src=$(dirname "$0")
nvcc -O3 -arch=sm_90 --extended-lambda -o "$out/launches" "$src/launches.cu" || exit 1
ncu="ncu --clock-control none --force-overwrite"
# a non-GEMM kernel, full set, one launch, named as the workflow names reports
$ncu --set full -k add -c 1 -o "$out/add_n1024" "$out/launches" add 1024 > "$out/add_full.txt" 2>&1
# the same kernel with the basic set (ncu's default)
$ncu --set basic -k add -c 1 -o "$out/add_basic" "$out/launches" add 1024 > "$out/add_basic.txt" 2>&1
# several kernels, three launches of one, a template and lambdas: every launch, basic set
$ncu --set basic -o "$out/several" "$out/launches" several 4096 > "$out/several.txt" 2>&1
# the same launches with the full set
$ncu --set full -o "$out/several_full" "$out/launches" several 4096 > "$out/several_full.txt" 2>&1
# profiler failures as ncu prints them: an unknown section, and an unknown metric while the
# program itself fails with a long traceback
$ncu --section NoSuchSection "$out/launches" add 1024 > "$out/error_section.txt" 2>&1
# (ncu exited with 1)
cat > "$out/deep.py" <<'PY'
import torch

(torch.ones(1024, device="cuda") * 2).sum().item()  # kernels for ncu to profile


def f(k):
    if k == 0:
        raise RuntimeError("the program failed after the profiler's error")
    f(k - 1)


f(30)
PY
$ncu --metrics no__such_metric.sum python3 "$out/deep.py" > "$out/error_metric_traceback.txt" 2>&1
# (ncu exited with 1)
ls -la "$out"
