"""Development call: where int8_wgmma_cluster's energy goes under the H200's power cap. The
registered kernel (checked, exact) beside four ablations of it (ablate.patch: ABLATE bits; not
GEMMs, so not checked): no operand copies after each stage's first fill (1), operands from 2
block rows of A and 4 block columns of B so that L2 holds them and DRAM is not read (2), no C
stores (4), and 1 + 4 (the kernel's pipeline and barriers around wgmma alone, on random
operands). Then the random-operand s8 wgmma ceilings of the same call.

Each load runs short, as the workflow times it (10 warm-ups, 50 launches, 3 rounds with 1 s
idle between them), then sustained (3000 launches, 3 s idle before), while nvidia-smi samples
every 50 ms. Then one ncu process (clock control none) takes one launch of each build.

Modes (run from the repository root): `python abl.py` (the whole call, files into $OUT) and
`python abl.py profile` (the program ncu runs)."""
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
W = Path("/tmp/wabl"); W.mkdir(exist_ok=True)
DEV = W / "dev"
cfg = yaml.safe_load(open("config/config.yaml"))
K = "int8_wgmma_cluster"
REG = tiling_from_config(cfg, K)
BUILDS = {"i_cl": 0, "abl_l2": 2, "abl_noload": 1, "abl_nostore": 4, "abl_noload_nostore": 5}
N = 8192
PREC = precision_of("int8")
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def now():
    return datetime.now(timezone.utc).isoformat()


def runner(tag, inputs):
    return GemmRunner(W / f"{tag}.cubin", K, "int8", REG, N, N, N, 7, tma=True, inputs=inputs)


def mode_profile():
    """Per build: 3 warm-ups, then one launch between cuProfilerStart/Stop (the registered
    build's C checked on that launch)."""
    from cuda.bindings import driver as cu
    rng = np.random.default_rng(5); inputs = make_inputs(PREC, N, N, N, rng)
    for tag in BUILDS:
        run = runner(tag, inputs)
        try:
            for _ in range(3):
                run.launch()
            run.sync()
            if tag == "i_cl":
                chk = run.check(sample_rows(N, 256, rng), profiled=True)
                assert chk.passed, chk
            else:
                cu.cuProfilerStart(); run.launch(); run.sync(); cu.cuProfilerStop()
            print(tag, "profiled", flush=True)
        finally:
            run.close()


if len(sys.argv) > 1:
    mode_profile(); sys.exit(0)

OUT = Path(os.environ["OUT"])
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(OUT / "abl_smi.csv", "w"))
shutil.rmtree(DEV, ignore_errors=True); DEV.mkdir(parents=True)
shutil.copytree("kernels", DEV / "kernels")
subprocess.run(["patch", "-p1", "-d", str(DEV), "-i", str(HERE / "ablate.patch")], check=True)


def build(tag):
    build_kernel(DEV / "kernels" / f"{K}.cu", K, "sm_90", REG.defines() + [f"-DABLATE={BUILDS[tag]}"], W / f"{tag}.cubin",
                 W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(6) as ex:
    futs = [ex.submit(build, t) for t in BUILDS]
    futs.append(ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                          ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log"))
    for f in futs:
        f.result()
builds = {t: {"ABLATE": BUILDS[t], "resources": json.loads((W / f"{t}.json").read_text()),
              "IGMMA": sum(" IGMMA" in ln for ln in (W / f"{t}.sass").read_text().splitlines()),
              "STG": sum(" STG" in ln for ln in (W / f"{t}.sass").read_text().splitlines()),
              "UTMALDG": sum("UTMALDG" in ln for ln in (W / f"{t}.sass").read_text().splitlines())} for t in BUILDS}
(OUT / "abl_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["IGMMA"], b["STG"], b["UTMALDG"]) for t, b in builds.items()})

loads = []
inputs = make_inputs(PREC, N, N, N, np.random.default_rng(17))
ops = gemm_ops(N, N, N)
for tag in BUILDS:
    run = runner(tag, inputs)
    try:
        rec = {"load": tag, "ABLATE": BUILDS[tag], "n": N}
        if tag == "i_cl":
            chk = run.check(sample_rows(N, 256, np.random.default_rng(3)))
            assert chk.passed, chk
            rec["max_abs_error"] = chk.max_abs_error
        short = []
        for _ in range(3):
            time.sleep(1.0)
            short.append(run.time(10, 50).median_ns)
        time.sleep(3.0)
        rec["sustained_start_utc"] = now()
        tim = run.time(10, 3000)
        rec["sustained_end_utc"] = now()
        rec.update(short_median_ns=short, short_rate=[ops / m / 1e3 for m in short], sustained_median_ns=tim.median_ns,
                   sustained_rate=ops / tim.median_ns / 1e3, gated=tim.gated)
        loads.append(rec)
        log(tag, "short", [round(r, 1) for r in rec["short_rate"]], "sustained", round(rec["sustained_rate"], 1))
    finally:
        run.close()
del inputs

from cuda.bindings import driver as cu
from analysis.gpu.harness.driver import _check, primary_context
from analysis.gpu.harness import time_launches
from analysis.gpu.references import WGMMA_GROUP, wgmma_ceilings
rows = wgmma_ceilings(W / "ceil.cubin", 10, 50)
(OUT / "abl_ceilings.json").write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1, default=str))
log("ceilings", [(r.name, round(r.rate, 1)) for r in rows if r.precision == "int8"])
# the random-operand s8 ceiling with 3 warpgroups, sustained like the GEMMs
dev = primary_context(cu)
sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "sms")
stream = _check(cu.cuStreamCreate(0), "stream")
module = _check(cu.cuModuleLoadData((W / "ceil.cubin").read_bytes()), "load")
buf = _check(cu.cuMemAlloc(sms * 128 * 3 * 4), "alloc")
iters = 2048
argv = [np.array([iters], np.int32), np.array([int(buf)], np.uint64)]
params = np.array([v.ctypes.data for v in argv], dtype=np.uint64)
func = _check(cu.cuModuleGetFunction(module, b"peak_wgmma_m64n256k32_s8_s32_random"), "func")
cops = sms * 3 * iters * WGMMA_GROUP * gemm_ops(64, 256, 32)
launch = lambda: _check(cu.cuLaunchKernel(func, sms, 1, 1, 384, 1, 1, 0, stream, params.ctypes.data, 0), "launch")
short = []
for _ in range(3):
    time.sleep(1.0)
    short.append(time_launches(stream, launch, 10, 50).median_ns)
time.sleep(3.0)
rec = {"load": "peak_wgmma_m64n256k32_s8_s32_random_wg3", "sustained_start_utc": now()}
tim = time_launches(stream, launch, 10, 1500)
rec.update(sustained_end_utc=now(), short_median_ns=short, short_rate=[cops / m / 1e3 for m in short],
           sustained_median_ns=tim.median_ns, sustained_rate=cops / tim.median_ns / 1e3)
loads.append(rec)
log(rec["load"], "short", [round(r, 1) for r in rec["short_rate"]], "sustained", round(rec["sustained_rate"], 1))
(OUT / "abl_loads.json").write_text(json.dumps(loads, indent=1))
time.sleep(1.0)
smi.terminate()

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,"
     "l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / "abl_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
(OUT / "abl_ncu.log").write_text(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu", p.returncode)
if (W / "abl_ncu.ncu-rep").exists():
    q = subprocess.run([ncu, "--import", str(W / "abl_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                       capture_output=True, text=True)
    (OUT / "abl_ncu.csv").write_text(q.stdout)
    subprocess.run(["xz", "-9", "-k", str(W / "abl_ncu.ncu-rep")]); shutil.copy(W / "abl_ncu.ncu-rep.xz", OUT)
log("done")
