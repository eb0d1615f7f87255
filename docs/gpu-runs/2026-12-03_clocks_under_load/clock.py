"""SM clock and power while the s8/f16 wgmma ceilings, the wgmma cluster kernels and the
library GEMMs run sustained (N = 8192), sampled with nvidia-smi every 50 ms.

Each load is timed with CUDA events (time_launches: 10 warm-ups, then REPEATS launches behind
the stream gate, about 3 s of back-to-back launches); the GPU idles 3 s between loads.
Writes clock_loads.json (each load's rate and its UTC start/end) and clock_smi.csv.
Run from the repository root after the workflow built results/build/sm_90a/.
Usage: python clock.py OUTDIR
"""
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import yaml

from analysis.gpu.config import kernel_options, tiling_from_config
from analysis.gpu.harness import GemmRunner, time_launches
from analysis.gpu.harness.driver import _check, primary_context
from analysis.gpu.references import WGMMA_GROUP, WGMMA_PEAK_KERNELS, library_gemm
from analysis.precision import gemm_ops

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
N = 8192
config = yaml.safe_load(open("config/config.yaml"))
smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
     "clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,temperature.gpu",
     "--format=csv,nounits", "-lms", "50"], stdout=open(out / "clock_smi.csv", "w"))
loads = []


def cubin_of(kernel):
    for arch in ("sm_90a", "sm_90"):
        p = Path(f"results/build/{arch}/{kernel}.cubin")
        if p.exists():
            return p
    raise FileNotFoundError(kernel)


def now():
    return datetime.now(timezone.utc).isoformat()


def run(label, stream, launch, repeats, ops, unit, what):
    time.sleep(3.0)
    t0 = now()
    tim = time_launches(stream, launch, 10, repeats)
    t1 = now()
    med = tim.median_ns
    loads.append({"load": label, "start_utc": t0, "end_utc": t1, "repeats": repeats, "warmups": 10,
                  "gated": tim.gated, "median_ns": med, "p25_ns": tim.quantile_ns(0.25),
                  "p75_ns": tim.quantile_ns(0.75), "ops": ops, "rate": ops / med / 1e3, "unit": unit,
                  "what": what})
    print(f"{label}: {ops / med / 1e3:.1f} {unit} (median {med:.0f} ns of {repeats})", flush=True)


from cuda.bindings import driver as cu  # noqa: E402

dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
time.sleep(2.0)
# 1. the wgmma ceilings, 2 and 3 warpgroups
stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
module = _check(cu.cuModuleLoadData(Path("results/build/sm_90/ceilings/wgmma_peak.cubin").read_bytes()), "load")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "cuMemAlloc")
iters = 2048
argv = [np.array([iters], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
for prec, (fname, k) in WGMMA_PEAK_KERNELS.items():
    func = _check(cu.cuModuleGetFunction(module, fname.encode()), fname)
    for wg in (2, 3):
        def launch(func=func, threads=128 * wg):
            _check(cu.cuLaunchKernel(func, sms, 1, 1, threads, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
        ops = sms * wg * iters * WGMMA_GROUP * gemm_ops(64, 256, k)
        run(f"{fname}_wg{wg}", stream, launch, 2000 if wg == 2 else 1500, ops,
            "TFLOP/s" if prec == "fp16" else "TOP/s", f"{sms} blocks x {128 * wg} threads, {iters} x 4 wgmma")
# 2. the wgmma kernels at N = 8192
for kernel, repeats in (("int8_wgmma_cluster", 4000), ("int8_wgmma", 4000),
                        ("fp16_wgmma_cluster", 2000), ("fp16_wgmma", 2000)):
    spec = config["kernels"][kernel]
    tiling = tiling_from_config(config, kernel)
    r = GemmRunner(cubin_of(kernel), kernel, spec["precision"], tiling, N, N, N, 0,
                   **kernel_options(spec))
    chk = r.check()
    assert chk.passed, (kernel, chk)
    run(kernel, r.stream, r.launch, repeats, gemm_ops(N, N, N), r.prec.throughput_unit, f"{kernel}, N = {N}, checked")
    r.close()
# 3. the libraries at N = 8192
import torch  # noqa: E402

torch.cuda.init()
rng = np.random.default_rng(0)
for prec, repeats in (("int8", 2500), ("fp16", 2000)):
    name, launch, what = library_gemm(torch, prec, N, rng)
    run(name, torch.cuda.current_stream().cuda_stream, launch, repeats, gemm_ops(N, N, N),
        "TFLOP/s" if prec == "fp16" else "TOP/s", what + f", torch {torch.__version__}")
time.sleep(2.0)
smi.terminate()
smi.wait()
(out / "clock_loads.json").write_text(json.dumps({"gpu_sms": sms, "n": N, "loads": loads}, indent=1))
