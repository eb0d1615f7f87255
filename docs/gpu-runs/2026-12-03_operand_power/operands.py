"""int8_wgmma_cluster at N = 8192 on inputs that differ only in their values: both operands
random in [-128, 127] (the workflow's), A random and B zero, A zero and B random, and both
random in [-8, 7] (the values the INT4 kernels unpack to). Each drawn on the GPU and checked
before it is timed (the zeroed operand too). Timed as power.py times (three short rounds of 50
launches, then 2000 launches sustained) while nvidia-smi samples every 50 ms.
Writes operands_loads.json and operands_smi.csv. Usage: python operands.py OUTDIR
"""
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import cupy
import numpy as np
import yaml

from analysis.gpu.config import kernel_options, tiling_from_config
from analysis.gpu.harness import GemmRunner, time_launches
from analysis.precision import gemm_ops

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
N, KERNEL = 8192, "int8_wgmma_cluster"
config = yaml.safe_load(open("config/config.yaml"))
spec = config["kernels"][KERNEL]
smi = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
     "clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,temperature.gpu",
     "--format=csv,nounits", "-lms", "50"], stdout=open(out / "operands_smi.csv", "w"))
rng = cupy.random.default_rng(7)


def draw(lo, hi):
    return rng.integers(lo, hi + 1, size=(N, N), dtype=np.int64).astype(np.int8)


def zeros():
    return cupy.zeros((N, N), dtype=np.int8)


loads = []
time.sleep(2.0)
for label, make in (("random", lambda: (draw(-128, 127), draw(-128, 127))),
                    ("A random, B zero", lambda: (draw(-128, 127), zeros())),
                    ("A zero, B random", lambda: (zeros(), draw(-128, 127))),
                    ("both in [-8, 7]", lambda: (draw(-8, 7), draw(-8, 7)))):
    a, b_t = make()
    r = GemmRunner(Path(f"results/build/sm_90a/{KERNEL}.cubin"), KERNEL, spec["precision"],
                   tiling_from_config(config, KERNEL), N, N, N, 0, **kernel_options(spec),
                   inputs=(a, b_t, a.astype(np.float64), b_t.astype(np.float64)))
    chk = r.check()
    assert chk.passed, (label, chk)
    short = []
    for _ in range(3):
        time.sleep(1.0)
        short.append(time_launches(r.stream, r.launch, 10, 50).median_ns)
    time.sleep(3.0)
    t0 = datetime.now(timezone.utc).isoformat()
    tim = time_launches(r.stream, r.launch, 10, 2000)
    t1 = datetime.now(timezone.utc).isoformat()
    ops = gemm_ops(N, N, N)
    loads.append({"load": KERNEL, "operands": label, "checked": True, "short_median_ns": short,
                  "short_rate": [ops / m / 1e3 for m in short], "sustained_start_utc": t0,
                  "sustained_end_utc": t1, "sustained_repeats": 2000, "sustained_median_ns": tim.median_ns,
                  "sustained_rate": ops / tim.median_ns / 1e3, "unit": "TOP/s", "ops": ops})
    print(f"{label}: short {np.median(loads[-1]['short_rate']):.1f}, sustained {loads[-1]['sustained_rate']:.1f} TOP/s",
          flush=True)
    r.close()
    del a, b_t
    cupy.get_default_memory_pool().free_all_blocks()
time.sleep(2.0)
smi.terminate()
smi.wait()
(out / "operands_loads.json").write_text(json.dumps({"n": N, "loads": loads}, indent=1))
