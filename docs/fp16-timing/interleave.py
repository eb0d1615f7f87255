"""fp16_wgmma and fp16_ptx_tuned timed alternately with cuBLAS FP16 in one process, N = 4096
and 8192: in each round the kernel and the library are each timed once (3 warm-ups, median
of 20 event-timed launches), the kernel first in even rounds and second in odd ones.

On a GPU machine with PyTorch, from the repository root (the committed run: ROUNDS=10):
    ROUNDS=10 OUT=/tmp python docs/fp16-timing/interleave.py
writes $OUT/interleave/interleave.json (docs/fp16-timing/2026-12-01_interleaved.json).
"""
import json, os, statistics as st, subprocess, yaml
from pathlib import Path
import numpy as np
import torch
from cuda.bindings import driver as cu
from analysis.gpu.build import compile_cubin
from analysis.gpu.harness import GemmRunner, make_inputs, primary_context, time_launches
from analysis.precision import precision_of
from analysis.workflow import kernel_options, kernel_target, tiling_from_config
cfg = yaml.safe_load(open("config/config.yaml"))
out = Path(os.environ.get("OUT", "/tmp")) / "interleave"; out.mkdir(parents=True, exist_ok=True)
torch.cuda.init(); primary_context(cu)
tstream = torch.cuda.current_stream().cuda_stream
ROUNDS, REP, WARM = int(os.environ.get("ROUNDS", "8")), 20, 3
def smi():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()
recs = []
for kernel in ["fp16_wgmma", "fp16_ptx_tuned"]:
    spec = cfg["kernels"][kernel]; t = tiling_from_config(cfg, kernel)
    cub = out / f"{kernel}.cubin"
    with open(out / f"{kernel}.log", "w") as log:
        compile_cubin(Path(f"kernels/{kernel}.cu"), kernel, kernel_target("sm_90", spec["archs"]), t.defines(), cub,
                      out / f"{kernel}.json", out=log)
    for n in [4096, 8192]:
        run = GemmRunner(cub, kernel, "fp16", t, n, n, n, 17 + n, **kernel_options(spec))
        chk = run.check(); assert chk.passed, chk
        a_host, b_host, _, _ = make_inputs(precision_of("fp16"), n, n, n, np.random.default_rng(5 + n))
        a = torch.from_numpy(a_host).cuda(); b_t = torch.from_numpy(b_host).cuda()
        lib = lambda a=a, b_t=b_t: torch.matmul(a, b_t.t())
        work = 2.0 * n ** 3
        for r in range(ROUNDS):
            order = ("k", "l") if r % 2 == 0 else ("l", "k")
            med = {}
            for who in order:
                tim = run.time(WARM, REP) if who == "k" else time_launches(tstream, lib, WARM, REP)
                med[who] = tim.median_ns
            ratio = med["l"] / med["k"]
            rec = {"kernel": kernel, "n": n, "round": r, "order": "".join(order), "kernel_tflops": work / med["k"] / 1e3,
                   "cublas_tflops": work / med["l"] / 1e3, "ratio": ratio}
            recs.append(rec)
            print(f"{kernel:15s} N={n} r{r} {rec['order']} kernel {rec['kernel_tflops']:6.1f} cuBLAS {rec['cublas_tflops']:6.1f} ratio {ratio:.3f} | {smi()}", flush=True)
        rs = [x["ratio"] for x in recs if x["kernel"] == kernel and x["n"] == n]
        print(f"== {kernel} N={n}: ratio median {st.median(rs):.3f} min {min(rs):.3f} max {max(rs):.3f}", flush=True)
        run.close(); del lib, a, b_t; torch.cuda.empty_cache()
json.dump(recs, open(out / "interleave.json", "w"), indent=1)
