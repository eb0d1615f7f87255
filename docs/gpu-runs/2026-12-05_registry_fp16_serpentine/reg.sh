#!/usr/bin/env bash
# Whole-registry run in two phases on one warm machine (PHASE=1: the first 19 kernels; PHASE=2:
# the other 17 and the whole set, then memcheck and racecheck of fp16_wgmma_serpentine and the GPU
# tests of the wgmma kernels and the references). Run from the repository root. The same script
# as ../2026-12-04_registry_serpentine/reg.sh but for the split, the kernel sanitized and the time
# limits on snakemake (so that what ran is kept for the next phase).
set -uo pipefail
t_start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
SET=h200_580.159.04_ncu2025.3.1_registry
KEEP=/tmp/regkeep6
mkdir -p "$KEEP"
# restore the set and intermediates of the earlier phases
if [ -d "$KEEP/set" ]; then mkdir -p profiles/$SET && cp -a "$KEEP/set/." profiles/$SET/; fi
if [ -d "$KEEP/results" ]; then mkdir -p results && cp -a "$KEEP/results/." results/; fi
(cd profiles/$SET 2>/dev/null && find . -type f -exec sha1sum {} + | sort) > /tmp/before_$PHASE.txt
mapfile -t K < <(python3 -c "import yaml;print('\n'.join(yaml.safe_load(open('config/config.yaml'))['kernels']))")
STEM=n512-1024-2048-4096-8192
targets() {
  for k in "$@"; do
    for n in 512 1024 2048 4096 8192; do echo "results/gpu/$SET/check/${k}_n${n}.json"; done
    echo "profiles/$SET/reports/${k}_${STEM}.ncu-rep.xz"
  done
}
if [ "$PHASE" = 1 ]; then sub=("${K[@]:0:19}"); else sub=(); fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu_$PHASE.txt
t_sm=$(date +%s)
if [ "$PHASE" = 1 ]; then
  list=$(IFS=,; echo "${sub[*]}")
  timeout 540 snakemake --cores 16 --scheduler greedy --rerun-triggers params input software-env code \
    --config set_suffix=_registry "profile_kernels=[$list]" -- $(targets "${sub[@]}") > $OUT/snakemake_$PHASE.log 2>&1
  rc=$?
else
  timeout 520 snakemake --cores 16 --scheduler greedy --rerun-triggers params input software-env code --rerun-incomplete \
    --config set_suffix=_registry -- profiles/$SET/metadata.json profiles/$SET/timings.csv \
    profiles/$SET/references.csv \
    results/gpu/$SET/sanitize/memcheck/fp16_wgmma_serpentine_n512.txt \
    results/gpu/$SET/sanitize/racecheck/fp16_wgmma_serpentine_n512.txt > $OUT/snakemake_$PHASE.log 2>&1
  rc=$?
fi
t_end=$(date +%s)
echo "snakemake rc=$rc seconds=$((t_end - t_sm)) script_seconds=$((t_end - t_start))" | tee -a $OUT/snakemake_$PHASE.log
tail -5 $OUT/snakemake_$PHASE.log
# keep for the next phase
rm -rf "$KEEP/set" "$KEEP/results" && mkdir -p "$KEEP/set" "$KEEP/results"
cp -a profiles/$SET/. "$KEEP/set/" 2>/dev/null
cp -a results/. "$KEEP/results/"
(cd profiles/$SET && find . -type f -exec sha1sum {} + | sort) > /tmp/after_$PHASE.txt
# new or rewritten files: lines (checksum, path) of after that before lacks
comm -13 /tmp/before_$PHASE.txt /tmp/after_$PHASE.txt | awk '{print $2}' > /tmp/new_$PHASE.txt
echo "files sent back: $(wc -l < /tmp/new_$PHASE.txt)"; grep -v '/reports/' /tmp/new_$PHASE.txt
(cd profiles/$SET && tar -cJf $OUT/set_$PHASE.tar.xz -T /tmp/new_$PHASE.txt)
tar -cJf $OUT/logs_$PHASE.tar.xz logs benchmarks results/gpu/$SET/check results/gpu/$SET/sanitize results/build 2>/dev/null
if [ "$PHASE" = 2 ]; then
  timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider -n 0 tests/test_references.py tests/test_wgmma.py \
    > $OUT/pytest_gpu.log 2>&1
  echo "pytest rc=$?"; tail -6 $OUT/pytest_gpu.log
fi
ls -la $OUT
