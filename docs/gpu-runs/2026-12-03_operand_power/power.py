"""Rate, SM clock and power of the wgmma ceilings and the wgmma GEMMs with two kinds of operands:
drawn like the workflow's inputs (random) and near-constant (the ceilings' FP16 1.0 pattern) or
zero (the GEMMs' A and B set to 0 after their check).

Each load runs twice: short, as the workflow times (10 warm-ups, 50 launches behind the stream
gate, three rounds with 1 s idle between them), then sustained (1500-4000 launches) with
3 s idle before it, while nvidia-smi samples every 50 ms.
Writes power_loads.json (each load's timings and its UTC start and end) and power_smi.csv.
Run from the repository root after results/build/ holds the cubins.
Usage: python power.py OUTDIR
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
from analysis.gpu.references import WGMMA_GROUP, library_gemm
from analysis.precision import gemm_ops

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
N = 8192
config = yaml.safe_load(open("config/config.yaml"))
smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
     "clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,temperature.gpu",
     "--format=csv,nounits", "-lms", "50"], stdout=open(out / "power_smi.csv", "w"))
loads = []


def now():
    return datetime.now(timezone.utc).isoformat()


def run(label, operands, stream, launch, sustained, ops, unit, what):
    short = []
    for _ in range(3):
        time.sleep(1.0)
        tim = time_launches(stream, launch, 10, 50)
        short.append(tim.median_ns)
    time.sleep(3.0)
    t0 = now()
    tim = time_launches(stream, launch, 10, sustained)
    t1 = now()
    rec = {"load": label, "operands": operands, "ops": ops, "unit": unit, "what": what,
           "short_median_ns": short, "short_rate": [ops / m / 1e3 for m in short],
           "sustained_start_utc": t0, "sustained_end_utc": t1, "sustained_repeats": sustained,
           "sustained_median_ns": tim.median_ns, "sustained_p25_ns": tim.quantile_ns(0.25),
           "sustained_p75_ns": tim.quantile_ns(0.75), "sustained_rate": ops / tim.median_ns / 1e3,
           "gated": tim.gated}
    loads.append(rec)
    print(f"{label} [{operands}]: short {np.median(rec['short_rate']):.1f}, sustained "
          f"{rec['sustained_rate']:.1f} {unit}", flush=True)


from cuda.bindings import driver as cu  # noqa: E402

dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
time.sleep(2.0)
# 1. the wgmma ceilings, 3 warpgroups per SM, both fills
stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
module = _check(cu.cuModuleLoadData(Path("results/build/sm_90/ceilings/wgmma_peak.cubin").read_bytes()), "load")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "cuMemAlloc")
iters = 2048
argv = [np.array([iters], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
for fname, k, unit in (("peak_wgmma_m64n256k32_s8_s32", 32, "TOP/s"), ("peak_wgmma_m64n256k16_f16_f32", 16, "TFLOP/s")):
    for suffix, operands in (("", "ones"), ("_random", "random")):
        func = _check(cu.cuModuleGetFunction(module, (fname + suffix).encode()), fname + suffix)
        for wg in (2, 3):
            def launch(func=func, threads=128 * wg):
                _check(cu.cuLaunchKernel(func, sms, 1, 1, threads, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
            ops = sms * wg * iters * WGMMA_GROUP * gemm_ops(64, 256, k)
            run(f"{fname}{suffix}_wg{wg}", operands, stream, launch, 2000 if wg == 2 else 1500, ops, unit,
                f"{sms} blocks x {128 * wg} threads, {iters} x 4 wgmma")
# 2. the wgmma cluster kernels at N = 8192: random inputs (checked), then A and B zeroed
for kernel, sustained in (("int8_wgmma_cluster", 4000), ("fp16_wgmma_cluster", 2000)):
    spec = config["kernels"][kernel]
    r = GemmRunner(Path(f"results/build/sm_90a/{kernel}.cubin"), kernel, spec["precision"],
                   tiling_from_config(config, kernel), N, N, N, 0, **kernel_options(spec))
    chk = r.check()
    assert chk.passed, (kernel, chk)
    run(kernel, "random", r.stream, r.launch, sustained, gemm_ops(N, N, N), r.prec.throughput_unit,
        f"{kernel}, N = {N}, checked")
    nbytes = N * N * r.prec.bits // 8
    _check(cu.cuMemsetD8(r.d_a, 0, nbytes), "memset A")
    _check(cu.cuMemsetD8(r.d_b, 0, nbytes), "memset B")
    _check(cu.cuCtxSynchronize(), "sync")
    run(kernel, "zeros", r.stream, r.launch, sustained, gemm_ops(N, N, N), r.prec.throughput_unit,
        f"{kernel}, N = {N}, A and B zero")
    r.close()
# 3. the libraries at N = 8192, random then zero inputs
import torch  # noqa: E402

torch.cuda.init()
rng = np.random.default_rng(0)
for prec, sustained in (("int8", 2500), ("fp16", 2000)):
    name, launch, what = library_gemm(torch, prec, N, rng)
    s = torch.cuda.current_stream().cuda_stream
    unit = "TFLOP/s" if prec == "fp16" else "TOP/s"
    run(name, "random", s, launch, sustained, gemm_ops(N, N, N), unit, what + f", torch {torch.__version__}")
    for t in launch.__defaults__:
        t.zero_()
    torch.cuda.synchronize()
    run(name, "zeros", s, launch, sustained, gemm_ops(N, N, N), unit, what + ", A and B zero")
time.sleep(2.0)
smi.terminate()
smi.wait()
(out / "power_loads.json").write_text(json.dumps({"gpu_sms": sms, "n": N, "loads": loads}, indent=1))
