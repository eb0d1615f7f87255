"""Development call: where a K tile's time goes in int4_wgmma_epi_tma, tile by tile.

Why: its `--set full` profiles put 20 % of the PC samples on the consumers' wait for the INT8 B
(`b_full`) and 8-10 % on the producer's wait for a free INT8 B stage (`b_empty`), at once; 3 and 5
stages ran within 0.6-2.4 % of 4 (2 stages lost 10 %), and halving the producer's work per thread
(two producer warpgroups) lost 17 %. PC samples do not say which warp waits when. The build parameter
TILE_CLOCKS of kernels/int4_wgmma.cuh records, per K tile, clock() (SM cycles, 32 bits) of
- each producer warp (lane 0): packed tile landed, INT8 B stage free, INT8 B written and released;
- warp 0 of each consumer warpgroup: packed tile landed, INT8 B ready, the previous K tile's wgmma
  complete (the release of its INT8 B stage follows at once);
for the first 256 K tiles (4 blocks of C) of CTAs 0-7.

Beside it, WAIT_BOTH=1 (the same file): the producer's two waits of a K tile (packed tile
landed, INT8 B stage free) issued back to back in one loop, so that their round trips to the
barrier unit overlap. If the producer's path sets the pace, that shortens it.

The call (from the repository root, with $OUT set): builds int4_wgmma_epi_tma as registered
(clocks0), with TILE_CLOCKS=1 (clocks1) and with WAIT_BOTH=1 (wait_both), and int8_wgmma_lag
(the INT8 kernel of the registry sets' claims); checks each at N = 8192 (256 sampled rows,
exact); event-times each (10 warm-ups, 50 launches, 0.5 s idle before each) over 5 rounds in
rotating order; then launches the recording build 3 times, zeroes the array, launches once and
reads it back. Writes $OUT/clocks.npz (the array, [cta][K tile][row][event], uint32) and
$OUT/clocks.json (checks, rates, GPU). `python3 docs/gpu-runs/2026-12-07_int4_clocks/summary.py`
reads them.

Second call: CLOCKS_BUILDS=clocks0,clocks2,rotate,int8_lag CLOCKS_RECORD=clocks2 builds and times
those four and reads clocks2, TILE_CLOCKS=2: the clocks kept in shared memory (K tiles 72-95 of
every CTA, copied out at the end), because TILE_CLOCKS=1 ran at 0.737 of the registered rate (its
barrier arrivals follow the clocks' global stores; docs/perf-notes.md). The array is then
[cta][24][row][event], the CTAs that ran. `rotate` is COPY_ROTATE=1: the packed tiles' copies
issued by the producer warps in turn instead of always by thread 0.

Third call: CLOCKS_BUILDS=clocks0,clocks2,rotate,rotate_clocks2 CLOCKS_RECORD=rotate_clocks2 reads
the clocks of COPY_ROTATE=1 with TILE_CLOCKS=2: does the last warp to release a K tile follow the
copies (warp t % 4) or stay warp 0?"""
import json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.driver import _check
from analysis.gpu.harness.runner import GemmRunner
from analysis.precision import gemm_ops, precision_of

W = Path("/tmp/wclocks"); W.mkdir(exist_ok=True)
OUT = Path(os.environ["OUT"])
CFG = yaml.safe_load(open("config/config.yaml"))
KERNEL = "int4_wgmma_epi_tma"
N = 8192
T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
log("gpu:", gpu)
ALL_BUILDS = {"clocks0": (KERNEL, []), "clocks1": (KERNEL, ["-DTILE_CLOCKS=1"]), "wait_both": (KERNEL, ["-DWAIT_BOTH=1"]),
              "int8_lag": ("int8_wgmma_lag", []), "clocks2": (KERNEL, ["-DTILE_CLOCKS=2"]),
              "rotate": (KERNEL, ["-DCOPY_ROTATE=1"]), "rotate_clocks2": (KERNEL, ["-DCOPY_ROTATE=1", "-DTILE_CLOCKS=2"])}
BUILDS = {t: ALL_BUILDS[t] for t in os.environ.get("CLOCKS_BUILDS", "clocks0,clocks1,wait_both,int8_lag").split(",")}
RECORD = os.environ.get("CLOCKS_RECORD", "clocks1")
# the recording build's array: (CTAs, K tiles, rows, events) and the first K tile it holds
SHAPE, FIRST_TILE = {"clocks1": ((8, 256, 6, 3), 0), "clocks2": ((160, 24, 6, 3), 72),
                     "rotate_clocks2": ((160, 24, 6, 3), 72)}[RECORD]
inputs = {p: make_inputs(precision_of(p), N, N, N, np.random.default_rng(17)) for p in ("int4", "int8")}
runs = {}
res = {"gpu": gpu, "kernel": KERNEL, "n": N, "builds": {}, "recorded": RECORD, "first_tile": FIRST_TILE}


def build(tag):
    kernel, defines = BUILDS[tag]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", tiling_from_config(CFG, kernel).defines() + defines,
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(len(BUILDS)) as pool:  # nvcc processes side by side
    list(pool.map(build, BUILDS))
log("built", ", ".join(BUILDS))
try:
    for tag, (kernel, defines) in BUILDS.items():
        tiling = tiling_from_config(CFG, kernel)
        prec = CFG["kernels"][kernel]["precision"]
        runs[tag] = GemmRunner(W / f"{tag}.cubin", kernel, prec, tiling, N, N, N, 7, tma=True, inputs=inputs[prec])
        chk = runs[tag].check(sample_rows(N, 256, np.random.default_rng(3)))
        res["builds"][tag] = {"kernel": kernel, "defines": defines, "check_passed": bool(chk.passed), "rates_top_s": []}
        log(tag, "check", chk.passed)
    tags = list(BUILDS)
    for r in range(5):
        for tag in tags[r % len(tags):] + tags[:r % len(tags)]:
            if not res["builds"][tag]["check_passed"]:
                continue
            time.sleep(0.5)
            rate = gemm_ops(N, N, N) / runs[tag].time(10, 50).median_ns / 1e3
            res["builds"][tag]["rates_top_s"].append(rate)
            log(tag, f"round {r}: {rate:.1f} TOP/s")
    run = runs[RECORD]
    if res["builds"][RECORD]["check_passed"]:
        dptr, size = _check(run.cu.cuModuleGetGlobal(run.module, b"int4_tile_clocks"), "cuModuleGetGlobal")
        for _ in range(3):
            run.launch()
        run.sync()
        _check(run.cu.cuMemsetD8(dptr, 0, size), "cuMemsetD8")
        run.launch()
        run.sync()
        host = np.zeros(size // 4, np.uint32)
        _check(run.cu.cuMemcpyDtoH(host.ctypes.data, dptr, size), "cuMemcpyDtoH")
        arr = host.reshape(SHAPE)
        arr = arr[: int(np.flatnonzero(arr.reshape(len(arr), -1).any(axis=1)).max()) + 1]  # the CTAs that ran
        np.savez_compressed(OUT / "clocks.npz", clocks=arr)
        res["recorded_nonzero"] = int((arr > 0).sum())
        log("recorded", res["recorded_nonzero"], "of", arr.size)
finally:  # what was measured is written even if a later step failed
    for r in runs.values():
        r.close()
    (OUT / "clocks.json").write_text(json.dumps(res, indent=1))
log("done")
