"""Second development call of STORE64: the INT4 target's ratio with both kernels storing C 64 bytes
a row per warp store. store64.patch (kernels/wgmma_gemm.cuh) and store64_int4.patch
(kernels/int4_wgmma.cuh) both applied; builds: int8_wgmma_cluster and int4_wgmma_persistent, each
registered (STORE64 0) and with STORE64 1. Otherwise as s64.py: checks (256 sampled rows, exact)
at N = 512-8192, 6 rotating rounds at N = 4096, 6144 and 8192, sustained at 8192, the wgmma
ceilings, one ncu launch of each build at 8192.

Modes (run from the repository root): `python s64b.py` (files into $OUT) and `python s64b.py profile`."""
import dataclasses, json, os, shutil, subprocess, sys, time
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
W = Path("/tmp/ws64b"); W.mkdir(exist_ok=True)
DEV = W / "dev"
CFG = yaml.safe_load(open("config/config.yaml"))
BUILDS = {"i8": ("int8_wgmma_cluster", "int8", 0), "i8_s64": ("int8_wgmma_cluster", "int8", 1),
          "i4": ("int4_wgmma_persistent", "int4", 0), "i4_s64": ("int4_wgmma_persistent", "int4", 1)}
PRECS = ("int8", "int4")
CHECK_NS = (512, 1024, 2048, 4096, 6144, 8192)
TIME_NS = (4096, 6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def now():
    return datetime.now(timezone.utc).isoformat()


def runner(tag, n, inputs):
    kernel, prec, _ = BUILDS[tag]
    return GemmRunner(W / f"{tag}.cubin", kernel, prec, tiling_from_config(CFG, kernel), n, n, n, 7, tma=True,
                      inputs=inputs)


def inputs_for(prec, n, seed):
    return make_inputs(precision_of(prec), n, n, n, np.random.default_rng(seed))


if len(sys.argv) > 1:  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = {p: inputs_for(p, 8192, 5) for p in PRECS}
    for tag, (_, prec, _) in BUILDS.items():
        run = runner(tag, 8192, inputs[prec])
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
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "s64b_smi.csv", "w"))
shutil.rmtree(DEV, ignore_errors=True); DEV.mkdir(parents=True)
shutil.copytree("kernels", DEV / "kernels")
for patch in ("store64.patch", "store64_int4.patch"):
    subprocess.run(["patch", "-p1", "-d", str(DEV), "-i", str(HERE / patch)], check=True)


def build(tag):
    kernel, _, s64 = BUILDS[tag]
    build_kernel(DEV / "kernels" / f"{kernel}.cu", kernel, "sm_90", tiling_from_config(CFG, kernel).defines() +
                 [f"-DSTORE64={s64}"], W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(5) as ex:
    futs = [ex.submit(build, t) for t in BUILDS]
    futs.append(ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                          ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log"))
    for f in futs:
        f.result()
builds = {t: {"STORE64": BUILDS[t][2], "resources": json.loads((W / f"{t}.json").read_text()),
              "STG.E.128": (W / f"{t}.sass").read_text().count("STG.E.128"),
              "STG.E.64": (W / f"{t}.sass").read_text().count("STG.E.64"),
              "SHFL": (W / f"{t}.sass").read_text().count("SHFL")} for t in BUILDS}
(OUT / "s64b_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["STG.E.128"], b["STG.E.64"], b["SHFL"], b["resources"]["spill_store_bytes"]) for t, b in builds.items()})

checks, rounds, sustained = [], [], []
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in PRECS}
    runs = {t: runner(t, n, inputs[BUILDS[t][1]]) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)})
            assert chk.passed, (t, n, chk)
        if n in TIME_NS:
            ops = gemm_ops(n, n, n)
            order = list(BUILDS)
            for r in range(6):
                for t in order[r % 4:] + order[:r % 4]:
                    time.sleep(1.0)
                    m = runs[t].time(10, 50).median_ns
                    rounds.append({"build": t, "n": n, "round": r, "median_ns": m, "rate": ops / m / 1e3})
            log(n, {t: round(float(np.median([x["rate"] for x in rounds if x["build"] == t and x["n"] == n])), 1)
                    for t in BUILDS})
        if n == 8192:
            for t, run in runs.items():
                time.sleep(3.0)
                rec = {"build": t, "n": n, "sustained_start_utc": now()}
                tim = run.time(10, 3000)
                rec.update(sustained_end_utc=now(), median_ns=tim.median_ns, rate=gemm_ops(n, n, n) / tim.median_ns / 1e3)
                sustained.append(rec)
            log("sustained", {x["build"]: round(x["rate"], 1) for x in sustained})
    finally:
        for run in runs.values():
            run.close()
    del inputs
log("checks passed", len(checks))
for name, obj in (("s64b_checks", checks), ("s64b_rounds", rounds), ("s64b_sustained", sustained)):
    (OUT / f"{name}.json").write_text(json.dumps(obj, indent=1))
from analysis.gpu.references import wgmma_ceilings
rows = wgmma_ceilings(W / "ceil.cubin", 10, 50)
(OUT / "s64b_ceilings.json").write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1, default=str))
log("ceilings", [(r.name, round(r.rate, 1)) for r in rows])
time.sleep(1.0)
smi.terminate()

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "dram__bytes_write.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,"
     "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / "s64b_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
(OUT / "s64b_ncu.log").write_text(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
if p.returncode:  # a metric this ncu does not know: the first three alone
    M = ",".join(M.split(",")[:3]); cmd[cmd.index("--metrics") + 1] = M
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    with open(OUT / "s64b_ncu.log", "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu", p.returncode)
if (W / "s64b_ncu.ncu-rep").exists():
    q = subprocess.run([ncu, "--import", str(W / "s64b_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                       capture_output=True, text=True)
    (OUT / "s64b_ncu.csv").write_text(q.stdout)
    subprocess.run(["xz", "-9", "-k", str(W / "s64b_ncu.ncu-rep")]); shutil.copy(W / "s64b_ncu.ncu-rep.xz", OUT)
log("done")
