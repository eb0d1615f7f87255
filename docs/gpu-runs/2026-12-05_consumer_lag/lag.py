"""Development measurement at the start of the registry run of 2026-12-05 (afternoon): the two
consumer warpgroups of the serpentine wgmma kernels started CONSUMER_LAG K tiles apart
(kernels/wgmma_gemm.cuh), so that one stores C while the other's wgmma run. The registry holds
int8_wgmma_lag and fp16_wgmma_lag with CONSUMER_LAG 2; this call also builds lags 0 (the
serpentine kernels' code), 1 and 3, to say whether 2 was the right choice.

Each build is checked (256 sampled rows; exact for INT8, within the FP32-accumulation bound for
FP16) at N = 512 (8 blocks: most CTAs take none, the path where the first warpgroup arrives at
its end), 1536 (72 blocks), 2048, 4096 and 8192, then event-timed at N = 6144 and 8192 as the
workflow times (10 warm-ups, 50 launches, 0.5 s idle before each), the builds of a precision in
rotating order over 5 rounds, while nvidia-smi samples every 50 ms. A build that fails its check
is not timed; the exit status is 3 where a CONSUMER_LAG 2 build failed. Files into $OUT: lag_builds.json, lag_checks.json, lag_rounds.json, lag_smi.csv.

Run from the repository root: `python docs/gpu-runs/2026-12-05_consumer_lag/lag.py`."""
import json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.runner import GemmRunner
from analysis.precision import gemm_ops, precision_of

W = Path("/tmp/wlag"); W.mkdir(exist_ok=True)
OUT = Path(os.environ["OUT"])
CFG = yaml.safe_load(open("config/config.yaml"))
BUILDS = {f"{p}_lag{lag}": (f"{'int8' if p == 'i8' else 'fp16'}_wgmma_lag", "int8" if p == "i8" else "fp16", lag)
          for p in ("i8", "f16") for lag in (0, 1, 2, 3)}
CHECK_NS = (512, 1536, 2048, 4096, 8192)
TIME_NS = (6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def build(tag):
    kernel, _, lag = BUILDS[tag]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", tiling_from_config(CFG, kernel).defines() +
                 [f"-DCONSUMER_LAG={lag}"], W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


def runner(tag, n, inputs):
    kernel, prec, _ = BUILDS[tag]
    return GemmRunner(W / f"{tag}.cubin", kernel, prec, tiling_from_config(CFG, kernel), n, n, n, 7, tma=True,
                      inputs=inputs)


smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "lag_smi.csv", "w"))
with ThreadPoolExecutor(8) as ex:
    for f in [ex.submit(build, t) for t in BUILDS]:
        f.result()
builds = {t: {"CONSUMER_LAG": BUILDS[t][2], "resources": json.loads((W / f"{t}.json").read_text()),
              "BAR.SYNC 3": (W / f"{t}.sass").read_text().count("BAR.SYNC.DEFER_BLOCKING 0x3"),
              "BAR.ARV 3": (W / f"{t}.sass").read_text().count("BAR.ARV 0x3")} for t in BUILDS}
(OUT / "lag_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["BAR.SYNC 3"], b["BAR.ARV 3"], b["resources"].get("registers")) for t, b in builds.items()})

checks, rounds, failed = [], [], set()
for n in sorted(set(CHECK_NS) | set(TIME_NS)):
    for prec in ("int8", "fp16"):
        inputs = make_inputs(precision_of(prec), n, n, n, np.random.default_rng(17))
        tags = [t for t in BUILDS if BUILDS[t][1] == prec and t not in failed]
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
                (OUT / "lag_checks.json").write_text(json.dumps(checks, indent=1))
            if n in TIME_NS:
                order = [t for t in tags if t not in failed]
                for r in range(5):
                    for t in order[r % len(order):] + order[:r % len(order)]:
                        time.sleep(0.5)
                        m = runs[t].time(10, 50).median_ns
                        rounds.append({"build": t, "n": n, "round": r, "median_ns": m,
                                       "rate": gemm_ops(n, n, n) / m / 1e3})
                (OUT / "lag_rounds.json").write_text(json.dumps(rounds, indent=1))
                log(n, prec, {t: round(float(np.median([x["rate"] for x in rounds if x["build"] == t and x["n"] == n])), 1)
                              for t in order})
        finally:
            for run in runs.values():
                run.close()
        del inputs
log("checks", len(checks), "failed", sorted(failed))
time.sleep(0.5)
smi.terminate()
sys.exit(3 if {"i8_lag2", "f16_lag2"} & failed else 0)  # 3: a registered build failed its check
