"""Does the wgmma ceiling's power depend on its warpgroups multiplying the same A tile?

The s8 ceiling loop on random operands (`peak_*_random`) drew the 700 W limit and still held about
1.78 GHz under ncu, where int8_wgmma_serpentine, which multiplies different rows of A in each
consumer warpgroup and new operands at every K tile, held about 1.65 GHz. `peak_*_random_rot`
(kernels/ceilings/wgmma_peak.cu) is the random loop with each warpgroup's A a different 64-row
quarter of B, changing at every iteration. If the operands' variety sets the power, the rotating
loop runs at a lower clock under the limit, and the INT8 kernel's clock is (in part) the math's.

Each load: three short timings as the workflow times (10 warm-ups, 50 launches, 1 s idle before
each), then a sustained one (3 s idle, then about 2 s of launches) while nvidia-smi samples every
50 ms. The GEMM is checked (exact, 256 sampled rows of C) before it is timed. `python3 rot.py profile` is the program
ncu profiles: one launch of each load after three warm-ups.
Writes rot_loads.json and rot_smi.csv into OUT. Run from the repository root.
Usage: OUT=dir python3 rot.py [profile]
"""
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel, compile_cubin  # noqa: E402
from analysis.gpu.config import kernel_options, tiling_from_config  # noqa: E402
from analysis.gpu.harness import GemmRunner, sample_rows, time_launches  # noqa: E402
from analysis.gpu.harness.driver import _check, primary_context  # noqa: E402
from analysis.gpu.references import WGMMA_GROUP  # noqa: E402
from analysis.precision import gemm_ops  # noqa: E402

W = Path("/tmp/wrot"); W.mkdir(exist_ok=True)
N, ITERS = 8192, 2048
GEMM = "int8_wgmma_serpentine"
LOOPS = [(f"peak_wgmma_m64n256k32_s8_s32{fill}", 32, wg) for fill in ("", "_random", "_random_rot") for wg in (2, 3)]
LOOPS += [(f"peak_wgmma_m64n256k16_f16_f32{fill}", 16, 2) for fill in ("_random", "_random_rot")]
PROFILE = len(sys.argv) > 1 and sys.argv[1] == "profile"
CFG = yaml.safe_load(open("config/config.yaml"))
spec = CFG["kernels"][GEMM]

if not PROFILE:
    compile_cubin(Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90", ["-arch=sm_90a"],
                  W / "ceil.cubin", W / "ceil.json")
    build_kernel(Path("kernels") / f"{GEMM}.cu", GEMM, "sm_90", tiling_from_config(CFG, GEMM).defines(),
                 W / "gemm.cubin", W / "gemm.json", W / "gemm.sass", W / "gemm.log")

from cuda.bindings import driver as cu  # noqa: E402

dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
module = _check(cu.cuModuleLoadData((W / "ceil.cubin").read_bytes()), "cuModuleLoadData")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "cuMemAlloc")
argv = [np.array([ITERS], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)


def loop_launch(fname, wg):
    func = _check(cu.cuModuleGetFunction(module, fname.encode()), fname)

    def launch():
        _check(cu.cuLaunchKernel(func, sms, 1, 1, 128 * wg, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
    return launch


gemm = GemmRunner(W / "gemm.cubin", GEMM, spec["precision"], tiling_from_config(CFG, GEMM), N, N, N, 7,
                  **kernel_options(spec))
loads = [(f"{f}_wg{wg}", stream, loop_launch(f, wg), sms * wg * ITERS * WGMMA_GROUP * gemm_ops(64, 256, k))
         for f, k, wg in LOOPS]
loads.append((GEMM, gemm.stream, gemm.launch, gemm_ops(N, N, N)))

if PROFILE:
    for label, st, launch, _ in loads:
        for _ in range(3):
            launch()
        _check(cu.cuStreamSynchronize(st), "sync")
        cu.cuProfilerStart(); launch(); _check(cu.cuStreamSynchronize(st), "sync"); cu.cuProfilerStop()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
chk = gemm.check(sample_rows(N, 256, np.random.default_rng(3)))  # 256 sampled rows of C
print(GEMM, "check", chk.passed, chk.max_abs_error, flush=True)
assert chk.passed, chk
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "rot_smi.csv", "w"))
rows = []
time.sleep(2.0)
for label, st, launch, ops in loads:
    short = []
    for _ in range(3):
        time.sleep(1.0)
        short.append(time_launches(st, launch, 10, 50).median_ns)
    time.sleep(3.0)
    one = time_launches(st, launch, 2, 5).median_ns
    reps = int(max(200, min(4000, 2.0e9 / one)))
    t0 = datetime.now(timezone.utc).isoformat()
    tim = time_launches(st, launch, 10, reps)
    t1 = datetime.now(timezone.utc).isoformat()
    rows.append({"load": label, "ops": ops, "short_median_ns": short, "short_rate": [ops / m / 1e3 for m in short],
                 "sustained_repeats": reps, "sustained_start_utc": t0, "sustained_end_utc": t1,
                 "sustained_median_ns": tim.median_ns, "sustained_rate": ops / tim.median_ns / 1e3,
                 "gated": tim.gated})
    print(f"{label}: short {np.median(rows[-1]['short_rate']):.1f}, sustained {rows[-1]['sustained_rate']:.1f} "
          f"(T)OP/s", flush=True)
time.sleep(1.0)
smi.terminate(); smi.wait()
gemm.close()
(OUT / "rot_loads.json").write_text(json.dumps({"gpu_sms": sms, "n": N, "iters": ITERS, "gemm_check":
                                                {"passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)},
                                                "loads": rows}, indent=1))
