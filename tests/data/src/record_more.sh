#!/usr/bin/env bash
# Record the small real reports of tests/data that need NVTX ranges, template
# instantiations, hundreds of launches or an odd file name, on a GPU machine with nvcc and ncu:
#   bash tests/data/src/record_more.sh OUTDIR
# Every ncu call leaves clocks as the GPU runs them (--clock-control none). A range-replay
# call that writes no report with the basic set is tried again with SpeedOfLight alone.
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
src=$(dirname "$0")
bin="$out/more_launches"
{ ncu --version; nvcc --version; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; } \
    > "$out/versions.txt" 2>&1
nvcc -O3 -arch=sm_90 -o "$bin" "$src/more_launches.cu" -ldl || exit 1
ncu="ncu --clock-control none --force-overwrite"

# range replay of NVTX ranges: the NVTX expression (push/pop "alpha/", start/end "alpha"),
# the report's name and the program's mode; basic set, else SpeedOfLight alone
range_replay() {
    local name=$1 mode=$2; shift 2
    local inc=()
    for r in "$@"; do inc+=(--nvtx-include "$r"); done
    $ncu --replay-mode range --nvtx "${inc[@]}" --set basic -o "$out/$name" "$bin" "$mode" 4096 \
        > "$out/$name.txt" 2>&1
    echo "ncu exited with $?" >> "$out/$name.txt"
    if [ ! -s "$out/$name.ncu-rep" ]; then
        $ncu --replay-mode range --nvtx "${inc[@]}" --section SpeedOfLight -o "$out/$name" "$bin" "$mode" 4096 \
            > "$out/${name}_sol.txt" 2>&1
        echo "ncu exited with $?" >> "$out/${name}_sol.txt"
    fi
}
# (a) one program, its two push/pop ranges in one order and then in the other
range_replay ranges_ab ranges-ab alpha/ beta/
range_replay ranges_ba ranges-ba alpha/ beta/
# the same two ranges as start/end ranges
range_replay ranges_se ranges-se alpha beta
# (b) kernel replay of launches under nested push/pop ranges, a start/end range and a
# second domain, with the NVTX state recorded (--nvtx)
$ncu --nvtx --set basic -o "$out/nested" "$bin" nested 4096 > "$out/nested.txt" 2>&1
echo "ncu exited with $?" >> "$out/nested.txt"
# (c) one template, three instantiations (scale<float> twice)
$ncu --set basic -o "$out/templates" "$bin" templates 4096 > "$out/templates.txt" 2>&1
echo "ncu exited with $?" >> "$out/templates.txt"
# (d) 401 launches, SpeedOfLight section only
$ncu --section SpeedOfLight -o "$out/many" "$bin" many 1024 > "$out/many.txt" 2>&1
echo "ncu exited with $?" >> "$out/many.txt"
# (e) a report whose file name holds '<', '>' and spaces: the first launch (scale<float>)
$ncu --set basic -c 1 -o "$out/scale<float> run 1" "$bin" templates 4096 > "$out/odd_name.txt" 2>&1
echo "ncu exited with $?" >> "$out/odd_name.txt"
rm -f "$bin"
ls -la "$out"
