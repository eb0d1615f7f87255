"""Development call: staggered epilogues for int8_wgmma_cluster (stagger.patch: STAGGER of
kernels/wgmma_gemm.cuh). The ablations of docs/gpu-runs/2026-12-04_int8_ablation/ found the C
stores idling the tensor pipe 8 % of active cycles at an unchanged clock. If the epilogue is slow
because all 132 CTAs store C (and their producers refill four stages) at the same moment, then
delaying half of the clusters by part of a block's time spreads that traffic, and each epilogue
gets shorter. The wait costs no makespan where only clusters with fewer blocks wait.

Builds: STAGGER 0 (the registered kernel), 150, 300 and 450 cycles per K tile (a block at
N = 8192 takes about 590 cycles per K tile at 1.65 GHz: 710 us / 31 blocks / 64 K tiles).
Each is checked (256 sampled rows, exact) at N = 4096, 6144 and 8192, then event-timed at each N
as the workflow times (10 warm-ups, 50 launches; rounds with 1 s idle between them), the builds
in rotating order over 4 rounds, then sustained at N = 8192 (3000 launches, 3 s idle before),
while nvidia-smi samples every 50 ms. Then one ncu process (clock control none) takes one
launch of each build at N = 8192.

Modes (run from the repository root): `python stg.py` (the whole call, files into $OUT) and
`python stg.py profile` (the program ncu runs)."""
import json, os, shutil, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
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

HERE = Path(__file__).resolve().parent
W = Path("/tmp/wstg"); W.mkdir(exist_ok=True)
DEV = W / "dev"
K = "int8_wgmma_cluster"
REG = tiling_from_config(yaml.safe_load(open("config/config.yaml")), K)
BUILDS = {"st0": 0, "st150": 150, "st300": 300, "st450": 450}
NS = (4096, 6144, 8192)
PREC = precision_of("int8")
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def now():
    return datetime.now(timezone.utc).isoformat()


def runner(tag, n, inputs):
    return GemmRunner(W / f"{tag}.cubin", K, "int8", REG, n, n, n, 7, tma=True, inputs=inputs)


if len(sys.argv) > 1:  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = make_inputs(PREC, 8192, 8192, 8192, np.random.default_rng(5))
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
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "stg_smi.csv", "w"))
shutil.rmtree(DEV, ignore_errors=True); DEV.mkdir(parents=True)
shutil.copytree("kernels", DEV / "kernels")
subprocess.run(["patch", "-p1", "-d", str(DEV), "-i", str(HERE / "stagger.patch")], check=True)


def build(tag):
    build_kernel(DEV / "kernels" / f"{K}.cu", K, "sm_90", REG.defines() + [f"-DSTAGGER={BUILDS[tag]}"], W / f"{tag}.cubin",
                 W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(4) as ex:
    for f in [ex.submit(build, t) for t in BUILDS]:
        f.result()
builds = {t: {"STAGGER": BUILDS[t], "resources": json.loads((W / f"{t}.json").read_text())} for t in BUILDS}
(OUT / "stg_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: b["resources"] for t, b in builds.items()})

checks, rounds, sustained = [], [], []
for n in NS:
    inputs = make_inputs(PREC, n, n, n, np.random.default_rng(17))
    ops = gemm_ops(n, n, n)
    runs = {t: runner(t, n, inputs) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)})
            assert chk.passed, (t, n, chk)
        order = list(BUILDS)
        for r in range(4):
            for t in order[r % 4:] + order[:r % 4]:
                time.sleep(1.0)
                m = runs[t].time(10, 50).median_ns
                rounds.append({"build": t, "n": n, "round": r, "median_ns": m, "rate": ops / m / 1e3})
        log(n, {t: round(np.median([x["rate"] for x in rounds if x["build"] == t and x["n"] == n]), 1) for t in BUILDS})
        if n == 8192:
            for t, run in runs.items():
                time.sleep(3.0)
                rec = {"build": t, "n": n, "sustained_start_utc": now()}
                tim = run.time(10, 3000)
                rec.update(sustained_end_utc=now(), median_ns=tim.median_ns, rate=ops / tim.median_ns / 1e3)
                sustained.append(rec)
            log("sustained", {x["build"]: round(x["rate"], 1) for x in sustained})
    finally:
        for run in runs.values():
            run.close()
    del inputs
for name, obj in (("stg_checks", checks), ("stg_rounds", rounds), ("stg_sustained", sustained)):
    (OUT / f"{name}.json").write_text(json.dumps(obj, indent=1))
time.sleep(1.0)
smi.terminate()

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,"
     "l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / "stg_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
(OUT / "stg_ncu.log").write_text(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu", p.returncode)
if (W / "stg_ncu.ncu-rep").exists():
    q = subprocess.run([ncu, "--import", str(W / "stg_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                       capture_output=True, text=True)
    (OUT / "stg_ncu.csv").write_text(q.stdout)
    subprocess.run(["xz", "-9", "-k", str(W / "stg_ncu.ncu-rep")]); shutil.copy(W / "stg_ncu.ncu-rep.xz", OUT)
log("done")
