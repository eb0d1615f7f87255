"""Prepared for a later call, not run yet: the lag given at every block (lag_each_block.patch, on
top of epi_clocks.patch; neither applied to the repository). The clock64 build of this folder's
epi.py found the once-given lag gone after the first blocks; here the second consumer warpgroup
waits at each block's start until the first has issued that block's first L K tiles.

Builds: int8_wgmma_lag and fp16_wgmma_lag with CONSUMER_LAG_EACH_BLOCK 1 and L = 1, 2, 3, beside
L = 0 (the serpentine kernels' code). Each is checked (256 sampled rows; exact for INT8, within
the FP32-accumulation bound for FP16) at N = 512, 1536, 2048, 4096 and 8192, then event-timed at
N = 6144 and 8192 (10 warm-ups, 50 launches, 0.5 s idle before each; 5 rotating rounds) while
nvidia-smi samples every 50 ms. Then L = 2 with EPI_CLOCKS: per block, the second warpgroup's
lag at the block's start and at its last wgmma, and the first's store issue, as epi.py gives them.
Files into $OUT: lag2_checks.json, lag2_rounds.json, lag2_clocks.json, lag2_smi.csv.

Run from the repository root:
`patch -p1 < docs/gpu-runs/2026-12-05_consumer_lag/epi_clocks.patch &&
patch -p1 < docs/gpu-runs/2026-12-05_consumer_lag/lag_each_block.patch &&
python3 docs/gpu-runs/2026-12-05_consumer_lag/lag2.py`."""
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

W = Path("/tmp/wlag2"); W.mkdir(exist_ok=True)
OUT = Path(os.environ["OUT"])
CFG = yaml.safe_load(open("config/config.yaml"))
KERNELS = {"int8": "int8_wgmma_lag", "fp16": "fp16_wgmma_lag"}
# tag: (precision, L, EPI_CLOCKS)
BUILDS = {**{f"{p}_L{lag}": (p, lag, 0) for p in KERNELS for lag in (0, 1, 2, 3)}, "int8_L2_clocks": ("int8", 2, 1)}
CHECK_NS = (512, 1536, 2048, 4096, 8192)
TIME_NS = (6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def build(tag):
    prec, lag, clocks = BUILDS[tag]
    k = KERNELS[prec]
    build_kernel(Path("kernels") / f"{k}.cu", k, "sm_90", tiling_from_config(CFG, k).defines() +
                 [f"-DCONSUMER_LAG={lag}", "-DCONSUMER_LAG_EACH_BLOCK=1", f"-DEPI_CLOCKS={clocks}"],
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


def runner(tag, n, inputs):
    k = KERNELS[BUILDS[tag][0]]
    return GemmRunner(W / f"{tag}.cubin", k, BUILDS[tag][0], tiling_from_config(CFG, k), n, n, n, 7, tma=True,
                      inputs=inputs)


smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "lag2_smi.csv", "w"))
with ThreadPoolExecutor(9) as ex:
    for f in [ex.submit(build, t) for t in BUILDS]:
        f.result()
log("built", len(BUILDS))
checks, rounds, failed = [], [], set()
for n in sorted(set(CHECK_NS) | set(TIME_NS)):
    for prec in KERNELS:
        inputs = make_inputs(precision_of(prec), n, n, n, np.random.default_rng(17))
        tags = [t for t in BUILDS if BUILDS[t][0] == prec and t not in failed]
        runs = {t: runner(t, n, inputs) for t in tags}
        try:
            if n in CHECK_NS:
                for t, run in runs.items():
                    chk = run.check(sample_rows(n, 256, np.random.default_rng(3)))
                    checks.append({"build": t, "n": n, "passed": bool(chk.passed),
                                   "max_abs_error": float(chk.max_abs_error)})
                    if not chk.passed:
                        failed.add(t)
                        log("FAILED", t, n, chk)
                (OUT / "lag2_checks.json").write_text(json.dumps(checks, indent=1))
            if n in TIME_NS:
                order = [t for t in tags if t not in failed and not BUILDS[t][2]]
                for r in range(5):
                    for t in order[r % len(order):] + order[:r % len(order)]:
                        time.sleep(0.5)
                        m = runs[t].time(10, 50).median_ns
                        rounds.append({"build": t, "n": n, "round": r, "median_ns": m,
                                       "rate": gemm_ops(n, n, n) / m / 1e3})
                (OUT / "lag2_rounds.json").write_text(json.dumps(rounds, indent=1))
                log(n, prec, {t: round(float(np.median([x["rate"] for x in rounds if x["build"] == t and x["n"] == n])), 1)
                              for t in order})
            if n == 8192 and "int8_L2_clocks" in runs:
                run = runs["int8_L2_clocks"]
                dptr, size = _check(run.cu.cuModuleGetGlobal(run.module, b"wgmma_epi_clocks"), "cuModuleGetGlobal")
                for _ in range(3):
                    run.launch()
                run.sync()
                _check(run.cu.cuMemsetD8(dptr, 0, size), "cuMemsetD8")
                run.launch(); run.sync()
                host = np.zeros(size // 8, np.uint64)
                _check(run.cu.cuMemcpyDtoH(host.ctypes.data, dptr, size), "cuMemcpyDtoH")
                rec = host.reshape(132, 2, 32, 3).astype(np.int64)
                seen = (rec > 0).all(axis=3)
                both = seen[:, 0, :] & seen[:, 1, :]

                def q(x):
                    x = np.asarray(x, float)
                    return {p: float(np.percentile(x, p)) for p in (5, 25, 50, 75, 95)} if x.size else {}

                clocks = {"blocks_recorded": int(both.sum()),
                          "wg1_behind_at_block_start": q((rec[:, 1, :, 0] - rec[:, 0, :, 0])[both]),
                          "wg1_behind_at_last_wgmma": q((rec[:, 1, :, 1] - rec[:, 0, :, 1])[both]),
                          "store_issue_cycles_wg0": q((rec[:, 0, :, 2] - rec[:, 0, :, 1])[seen[:, 0]]),
                          "wg1_still_in_k_loop_during_wg0_stores": q(np.clip(
                              np.minimum(rec[:, 0, :, 2], rec[:, 1, :, 1]) - rec[:, 0, :, 1], 0, None)[both]),
                          "block_period_cycles": q(np.diff(rec[:, 0, :, 0], axis=1)[both[:, 1:] & both[:, :-1]])}
                (OUT / "lag2_clocks.json").write_text(json.dumps(clocks, indent=1))
                log("clocks", {k: (v if not isinstance(v, dict) else v.get(50)) for k, v in clocks.items()})
        finally:
            for run in runs.values():
                run.close()
        del inputs
log("checks", len(checks), "failed", sorted(failed))
time.sleep(0.5)
smi.terminate()
