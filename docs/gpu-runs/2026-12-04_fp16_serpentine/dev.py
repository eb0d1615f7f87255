"""Development call: the FP16 wgmma kernels with the serpentine K order, and what a profile job's
time is made of.

Part 1 (FP16). int8_wgmma_serpentine (K_SERPENTINE, raster 16, STORE64) cut int8_wgmma_cluster's
DRAM reads at N = 8192 from 775 to 525 MB and ran 1.037x it (../2026-12-04_l2_order/). The FP16
kernels read more (fp16_wgmma_cluster 1575 MB, A and B being 268 MB) and run under the power cap
at about 1.51 GHz in the registry set, so fewer DRAM bytes may buy clock there too. Builds (tag:
kernel, tiling change, extra nvcc defines):
  reg          fp16_wgmma_cluster as registered (FP32 C)
  serp16       the same with K_SERPENTINE=1, raster 16
  serp16_s64   the same with K_SERPENTINE=1, raster 16, STORE64=1 (FP32 C 16 bytes a lane)
  f16c         fp16_wgmma_cluster_f16c as registered (FP16 C)
  f16c_serp16  the same with K_SERPENTINE=1, raster 16
Each is checked (the FP32-accumulation bound, all of C) at N = 1024 on 2 CTAs (both K directions)
and 2048 on 14 CTAs, and on 256 sampled rows at N = 4096 and 8192 on the full grid; then timed in
pairs with cuBLAS at N = 8192 as the workflow's references rule pairs them
(analysis.gpu.paired.pair_rounds, 6 rounds, 10 warm-ups and 50 launches a timing), against cuBLAS
writing FP16 C (cublas_fp16, the claim's reference) and FP32 C (cublas_fp16_f32out), in three
passes over the builds (forward, reverse, forward); one ncu process (clock control none) then
takes one launch of each build at N = 8192 with a few counters.

Part 2 (GPU time). A profile job costs about 16.5 s before any kernel time
(docs/gpu-benchmarks.md). For int8_wgmma_serpentine and fp16_wgmma_cluster as registered, the
wall time of: the harness alone in profile mode at the five N; ncu with one section of one pass
(LaunchStats) over it; `ncu --set full` as the workflow runs it; and the same with the harness
holding less device memory at the profiled launch (LEAN=1: the float64 copies of A and B moved to
the host and CuPy's pool emptied before it, back after). And the Triton references' first
autotuning (compiling the 6 configurations of a precision) against a later one.

Modes (from the repository root): `python dev.py` (the whole call, files into $OUT);
`python dev.py profile` (the program ncu runs in part 1); `python dev.py harness KERNEL N...`
(the profile-mode program of part 2, LEAN from the environment); `python dev.py build` (builds
only, locally)."""
import dataclasses, json, os, subprocess, sys, time
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
from analysis.tools import find_tool

W = Path("/tmp/wfp"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
SERP, S64 = ["-DK_SERPENTINE=1"], ["-DSTORE64=1"]
F, FC = "fp16_wgmma_cluster", "fp16_wgmma_cluster_f16c"
BUILDS = {"reg": (F, {}, []), "serp16": (F, {"raster": 16}, SERP), "serp16_s64": (F, {"raster": 16}, SERP + S64),
          "f16c": (FC, {}, []), "f16c_serp16": (FC, {"raster": 16}, SERP)}
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def tiling(tag):
    kernel, change, _ = BUILDS[tag]
    return dataclasses.replace(tiling_from_config(CFG, kernel), **change)


def options(tag):
    return {"tma": True, **({"c_dtype": "float16"} if BUILDS[tag][0] == FC else {})}


def runner(tag, n, inputs, sms=None):
    run = GemmRunner(W / f"{tag}.cubin", BUILDS[tag][0], "fp16", tiling(tag), n, n, n, 7, inputs=inputs, **options(tag))
    if sms:
        run.sms = sms  # a smaller persistent grid: more blocks per CTA
    return run


def build(tag):
    kernel, _, extra = BUILDS[tag]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", tiling(tag).defines() + extra,
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


def build_all():
    with ThreadPoolExecutor(8) as ex:
        for f in [ex.submit(build, t) for t in BUILDS]:
            f.result()
    out = {}
    for t in BUILDS:
        sass = (W / f"{t}.sass").read_text()
        out[t] = {"tiling": dataclasses.asdict(tiling(t)), "defines": BUILDS[t][2],
                  "resources": json.loads((W / f"{t}.json").read_text()),
                  **{op: sass.count(op) for op in ("HGMMA", "STG.E.64", "STG.E.128", "SHFL", "STL")}}
    return out


def lean_harness(kernel, sizes):
    """analysis.gpu.harness profile mode for a registered kernel, with LEAN=1 holding only A, B
    and C on the device at the profiled launch."""
    from cuda.bindings import driver as cu
    import cupy
    from analysis.gpu.config import tiling_from_config as tfc
    from analysis.gpu.config import kernel_options
    entry = CFG["kernels"][kernel]
    cubin = Path(os.environ["CUBIN"])
    lean = os.environ.get("LEAN") == "1"
    for n in sizes:
        run = GemmRunner(cubin, kernel, entry["precision"], tfc(CFG, kernel), n, n, n, 5, **kernel_options(entry))
        try:
            for _ in range(3):
                run.launch()
            run.sync()
            if lean:
                a_ref, b_ref = cupy.asnumpy(run.a_ref), cupy.asnumpy(run.b_ref)
                run.a_ref = run.b_ref = None
                cupy.get_default_memory_pool().free_all_blocks()
            run.poison()
            cu.cuProfilerStart(); run.launch(); run.sync(); cu.cuProfilerStop()
            if lean:
                run.a_ref, run.b_ref = cupy.asarray(a_ref), cupy.asarray(b_ref)
            from analysis.gpu.harness.check import compare
            chk = compare(run.result(), run.a_ref, run.b_ref, run.prec, sample_rows(n, 128, np.random.default_rng(5)))
            print(kernel, n, "lean" if lean else "as is", chk.passed, chk.max_abs_error, flush=True)
            if not chk.passed:
                sys.exit(3)
        finally:
            run.close()


if len(sys.argv) > 1 and sys.argv[1] == "build":
    print(json.dumps(build_all(), indent=1))
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "harness":
    lean_harness(sys.argv[2], [int(v) for v in sys.argv[3:]])
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "profile":  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = make_inputs(precision_of("fp16"), 8192, 8192, 8192, np.random.default_rng(5))
    for tag in BUILDS:
        run = runner(tag, 8192, inputs)
        try:
            for _ in range(3):
                run.launch()
            run.sync()
            cu.cuProfilerStart(); run.launch(); run.sync(); cu.cuProfilerStop()
        finally:
            run.close()
    sys.exit(0)

OUT = Path(os.environ["OUT"])
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "100"], stdout=open(W / "smi.csv", "w"),
                       stderr=subprocess.DEVNULL, start_new_session=True)
import atexit; atexit.register(smi.kill)
builds = build_all()
I8S = "int8_wgmma_serpentine"  # part 2's INT8 kernel, as registered
build_kernel(Path("kernels") / f"{I8S}.cu", I8S, "sm_90", tiling_from_config(CFG, I8S).defines(),
             W / "i8s.cubin", W / "i8s.json", W / "i8s.sass", W / "i8s.log")
(OUT / "builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["resources"]["registers"], b["resources"]["spill_store_bytes"], b["STG.E.64"], b["STG.E.128"])
              for t, b in builds.items()})

# ---- part 1: checks
checks = []
for n, sms in ((1024, 2), (2048, 14), (4096, None), (8192, None)):
    inputs = make_inputs(precision_of("fp16"), n, n, n, np.random.default_rng(23 + n))
    for t in BUILDS:
        run = runner(t, n, inputs, sms)
        try:
            chk = run.check(None if sms else sample_rows(n, 256, np.random.default_rng(3)))
        finally:
            run.close()
        checks.append({"build": t, "n": n, "sms": sms or run.sms, "rows": "all" if sms else 256,
                       "passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)})
        if not chk.passed:
            log("CHECK FAILED", t, n, sms, chk)
    del inputs
(OUT / "checks.json").write_text(json.dumps(checks, indent=1))
log("checks", sum(c["passed"] for c in checks), "of", len(checks))
ok = [t for t in BUILDS if all(c["passed"] for c in checks if c["build"] == t)]

# ---- part 1: pairs with cuBLAS at N = 8192
from analysis.gpu.paired import PairedKernel, pair_rounds, paired_table, paired_ratios
from analysis.gpu.references import cuda_torch, library_gemm, same_output_gemm
torch, why = cuda_torch()
stream = torch.cuda.current_stream().cuda_stream
n = 8192
rng = np.random.default_rng(100 + n)
inputs = make_inputs(precision_of("fp16"), n, n, n, rng)
libs = [library_gemm(torch, "fp16", n, rng, inputs), same_output_gemm(torch, "fp16", n, rng, inputs)]
rows = []
for p, order in enumerate((ok, ok[::-1], ok)):
    for t in order:
        k = PairedKernel(BUILDS[t][0], W / f"{t}.cubin", "fp16", tiling(t), options(t))
        for name, launch, _ in libs:
            got = pair_rounds(k, n, inputs, name, launch, stream, 6, 10, 50, 100 + n)
            rows += [dict(dataclasses.asdict(r), build=t, pass_=p) for r in got]
    (OUT / "pairs.json").write_text(json.dumps(rows, indent=1))
    import pandas as pd
    df = pd.DataFrame(rows)
    summ = {}
    for (t, lib, pp), g in df.groupby(["build", "library", "pass_"]):
        g = g.drop(columns=["build", "pass_"])
        summ[f"{t}/{lib}/{pp}"] = round(float(paired_ratios(g)["ratio"].iloc[0]), 4)
    log("pass", p, summ)
del libs, inputs
torch.cuda.empty_cache()

# ---- part 1: counters at N = 8192
ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / "fp16_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
(W / "fp16_ncu.log").write_text(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu", p.returncode)
if (W / "fp16_ncu.ncu-rep").exists():
    q = subprocess.run([ncu, "--import", str(W / "fp16_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                       capture_output=True, text=True)
    (OUT / "fp16_ncu.csv").write_text(q.stdout)
time.sleep(1.0)
smi.terminate()

# ---- part 2: what a profile job's time is made of
SIZES = ["512", "1024", "2048", "4096", "8192"]
me = [sys.executable, str(Path(__file__).resolve()), "harness"]
cost = []


def timed(label, cmd, env):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env}, timeout=200)
    cost.append({"what": label, "wall_s": round(time.time() - t0, 2), "rc": p.returncode,
                 "tail": (p.stdout + p.stderr)[-700:]})
    log(label, cost[-1]["wall_s"], p.returncode)
    (OUT / "profile_cost.json").write_text(json.dumps(cost, indent=1))


base = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--force-overwrite"]
for kern, cub in ((I8S, W / "i8s.cubin"), (F, W / "reg.cubin")):
    def ncu_cmd(sec, lc, out):
        return [*base, *sec, "--kernel-name", kern, "--launch-count", str(lc), "--export", str(W / out)]
    env, lean = {"CUBIN": str(cub), "LEAN": "0"}, {"CUBIN": str(cub), "LEAN": "1"}
    timed(f"{kern} harness alone, 5 N", me + [kern, *SIZES], env)
    timed(f"{kern} harness alone, 5 N, lean", me + [kern, *SIZES], lean)
    timed(f"{kern} ncu LaunchStats, 5 N", ncu_cmd(["--section", "LaunchStats"], 5, "ls") + me + [kern, *SIZES], env)
    timed(f"{kern} ncu --set full, 5 N", ncu_cmd(["--set", "full"], 5, "full") + me + [kern, *SIZES], env)
    timed(f"{kern} ncu --set full, 5 N, lean", ncu_cmd(["--set", "full"], 5, "full_lean") + me + [kern, *SIZES], lean)
    timed(f"{kern} ncu --set full, N=512", ncu_cmd(["--set", "full"], 1, "full512") + me + [kern, "512"], env)
    timed(f"{kern} ncu --set full, N=8192", ncu_cmd(["--set", "full"], 1, "full8192") + me + [kern, "8192"], env)
    timed(f"{kern} ncu --set full, N=8192, lean", ncu_cmd(["--set", "full"], 1, "full8192l") + me + [kern, "8192"],
          lean)

# the Triton references' autotuning: first use of each precision (compiles) against a second N
tri = []
from analysis.gpu.triton_gemm import triton_launch
for prec, dt in (("fp16", torch.float16), ("int8", torch.int8)):
    for nn in (512, 1024):
        a = (torch.randn if dt == torch.float16 else (lambda *s, **k: torch.randint(-128, 128, s, **k)))(
            nn, nn, device="cuda", dtype=dt)
        b = (torch.randn if dt == torch.float16 else (lambda *s, **k: torch.randint(-128, 128, s, **k)))(
            nn, nn, device="cuda", dtype=dt)
        t0 = time.time()
        triton_launch(torch, prec, a, b)
        torch.cuda.synchronize()
        tri.append({"precision": prec, "n": nn, "first_launch_with_autotune_s": round(time.time() - t0, 2)})
        log(tri[-1])
(OUT / "triton_autotune.json").write_text(json.dumps(tri, indent=1))
subprocess.run(f"cd {W} && tar cJf {OUT}/extra.tar.xz smi.csv fp16_ncu.log $(ls fp16_ncu.ncu-rep 2>/dev/null) *.sass *.log",
               shell=True)
log("done")
