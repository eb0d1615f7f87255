"""Variants of the FP16 kernels (registry tiling with fields replaced, analysis.gpu.tune.parse_variant)
timed round-robin with cuBLAS FP16 in one process: each round times cuBLAS at N = 8192, then
every variant at N = 4096 and 8192 (check first; 10 warm-ups, median of 50 launches).

On a GPU machine with PyTorch, from the repository root (the committed run):
    OUT=/tmp python docs/fp16-timing/raster_rounds.py fp16_wgmma fp16_wgmma:raster=16 \
        fp16_wgmma:raster=4 fp16_wgmma:raster=32 fp16_ptx_tuned fp16_ptx_tuned:raster=16
writes $OUT/raster/raster.json (docs/fp16-timing/2026-12-01_raster_rounds.json).
"""
import json, os, subprocess, sys, yaml
from pathlib import Path
from analysis.gpu.tune import parse_variant
from analysis.gpu.build import compile_cubin
from analysis.gpu.harness import check_and_time
from analysis.gpu.references import library_gemms
from analysis.workflow import kernel_options, kernel_target
cfg = yaml.safe_load(open("config/config.yaml"))
out = Path(os.environ.get("OUT", "/tmp")) / "raster"; out.mkdir(parents=True, exist_ok=True)
sizes = [4096, 8192]
built = []
for i, var in enumerate(sys.argv[1:]):
    name, kernel, t = parse_variant(var, cfg)
    arch = kernel_target("sm_90", cfg["kernels"][kernel]["archs"])
    cub = out / f"v{i}.cubin"
    with open(out / f"v{i}.log", "w") as log:
        compile_cubin(Path(f"kernels/{kernel}.cu"), kernel, arch, t.defines(), cub, out / f"v{i}.json", out=log)
    built.append((var, kernel, t, cub))
recs = []
def smi():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()
for rnd in range(int(os.environ.get("ROUNDS", "3"))):
    refs, _ = library_gemms([8192], 10, 50, 7 + rnd)
    for r in refs:
        if r.precision == "fp16":
            print(f"round {rnd} cuBLAS N=8192 {r.rate:.1f} | {smi()}", flush=True)
            recs.append({"variant": "cublas", "n": 8192, "round": rnd, "rate": r.rate})
    for var, kernel, t, cub in built:
        for n in sizes:
            x = check_and_time(cub, kernel, "fp16", n, t, 10, 50, 1000 + n + rnd, **kernel_options(cfg["kernels"][kernel]))
            print(f"round {rnd} {var:45s} N={n} {x['throughput']:7.1f} | {smi()}", flush=True)
            recs.append({"variant": var, "n": n, "round": rnd, "rate": x["throughput"]})
json.dump(recs, open(out / "raster.json", "w"), indent=1)
