#!/usr/bin/env bash
# Whole-registry run in three phases on one warm machine, from the repository root, with every
# set's folder and figures/ moved out of the working tree (so the set starts empty).
# PHASE=1: the first 16 kernels' check records and reports.
# PHASE=2: the other kernels, the references and pairs, and the set's files.
# PHASE=3: whatever phase 2 left, memcheck and racecheck of int4_wgmma_epi_tma at N = 512, and
#          every GPU test of the suite (pytest -m gpu tests/).
# Each phase sends back the set's files it wrote (set_P.tar.xz) and every log and benchmark
# (logs_P.tar.xz); snakemake runs under a time limit so that what ran is kept for the next phase.
# Optional (unset in the H100 run of 2026-12-06): ONLY_GPU=H200 stops (exit 3) before anything is
# built unless nvidia-smi's GPU name holds it; SANITIZE_PHASE=2 runs the sanitizers in phase 2 too,
# so phase 3 can be left out; KEEP=folder keeps the phases' files there instead of /tmp/regkeep_epi.
set -uo pipefail
t_start=$(date +%s)
if [ -n "${ONLY_GPU:-}" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$gpu" in *"$ONLY_GPU"*) ;; *) echo "not an $ONLY_GPU: $gpu; nothing run"; exit 3 ;; esac
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
# the set this GPU, driver and ncu make (h200_580.159.04_ncu2025.3.1_registry on an H200 of the last runs)
SET=$(python3 -c "import yaml;from analysis.workflow import local_gpu;c=yaml.safe_load(open('config/config.yaml'));c['set_suffix']='_registry';print(local_gpu(c)[0].set_name)")
echo "set: $SET"
KEEP=${KEEP:-/tmp/regkeep_epi}
mkdir -p "$KEEP"
if [ -d "$KEEP/set" ]; then mkdir -p profiles/$SET && cp -a "$KEEP/set/." profiles/$SET/; fi
if [ -d "$KEEP/results" ]; then mkdir -p results && cp -a "$KEEP/results/." results/; fi
(cd profiles/$SET 2>/dev/null && find . -type f -exec sha1sum {} + | sort) > /tmp/before_$PHASE.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu_$PHASE.txt
mapfile -t K < <(python3 -c "import yaml;print('\n'.join(yaml.safe_load(open('config/config.yaml'))['kernels']))")
ALL=$(IFS=,; echo "${K[*]}")
stem() { python3 -c "import yaml,sys;sys.path.insert(0,'.');from analysis.workflow import profile_sizes;print('-'.join(map(str,profile_sizes(yaml.safe_load(open('config/config.yaml')),'$1'))))"; }
targets() {
  for k in "$@"; do
    for n in 512 1024 2048 4096 8192; do echo "results/gpu/$SET/check/${k}_n${n}.json"; done
    echo "profiles/$SET/reports/${k}_n$(stem "$k").ncu-rep.xz"
  done
}
t_sm=$(date +%s)
if [ "$PHASE" = 1 ]; then
  sub=("${K[@]:0:16}")
  timeout 470 snakemake --cores 16 --scheduler greedy --rerun-triggers params input software-env code \
    --config set_suffix=_registry "profile_kernels=[$ALL]" -- $(targets "${sub[@]}") > $OUT/snakemake_$PHASE.log 2>&1
  rc=$?
else
  extra=()
  if [ "$PHASE" = 3 ] || [ "$PHASE" = "${SANITIZE_PHASE:-3}" ]; then
    for k in int4_wgmma_epi_tma; do
      extra+=("results/gpu/$SET/sanitize/memcheck/${k}_n512.txt" "results/gpu/$SET/sanitize/racecheck/${k}_n512.txt")
    done
  fi
  timeout $([ "$PHASE" = 2 ] && echo 540 || echo 300) snakemake --cores 16 --scheduler greedy \
    --rerun-triggers params input software-env code --rerun-incomplete \
    --config set_suffix=_registry "profile_kernels=[$ALL]" -- profiles/$SET/metadata.json profiles/$SET/timings.csv \
    profiles/$SET/references.csv "${extra[@]}" > $OUT/snakemake_$PHASE.log 2>&1
  rc=$?
fi
t_end=$(date +%s)
echo "snakemake rc=$rc seconds=$((t_end - t_sm)) script_seconds=$((t_end - t_start))" | tee -a $OUT/snakemake_$PHASE.log
tail -4 $OUT/snakemake_$PHASE.log
rm -rf "$KEEP/set" "$KEEP/results" && mkdir -p "$KEEP/set" "$KEEP/results"
cp -a profiles/$SET/. "$KEEP/set/" 2>/dev/null
cp -a results/. "$KEEP/results/"
(cd profiles/$SET && find . -type f -exec sha1sum {} + | sort) > /tmp/after_$PHASE.txt
comm -13 /tmp/before_$PHASE.txt /tmp/after_$PHASE.txt | awk '{print $2}' > /tmp/new_$PHASE.txt
echo "files sent back: $(wc -l < /tmp/new_$PHASE.txt)"; grep -v '/reports/' /tmp/new_$PHASE.txt
(cd profiles/$SET && tar -cJf $OUT/set_$PHASE.tar.xz -T /tmp/new_$PHASE.txt)
xz -k -c $OUT/snakemake_$PHASE.log > $OUT/snakemake_$PHASE.log.xz && rm $OUT/snakemake_$PHASE.log
tar -cJf $OUT/logs_$PHASE.tar.xz logs benchmarks results/gpu/$SET/check results/gpu/$SET/sanitize results/build 2>/dev/null
if [ "$PHASE" = 3 ]; then
  left=$(( 590 - ($(date +%s) - t_start) ))
  timeout $(( left > 30 ? left - 20 : 10 )) python3 -m pytest -q -m gpu -p no:cacheprovider -n 0 tests/ \
    > $OUT/pytest_gpu.log 2>&1
  echo "pytest rc=$?"; tail -6 $OUT/pytest_gpu.log
fi
ls -la $OUT
