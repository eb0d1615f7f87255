"""Development call: C through the bulk tensor copy engine (build parameter EPI_TMA of
kernels/wgmma_gemm.cuh and kernels/int4_wgmma.cuh, kernels/c_tma.cuh). The ablations
(../2026-12-04_int8_ablation/) found the C stores from registers idling int8_wgmma_cluster's
tensor pipe 8 % of active cycles at an unchanged clock. If the copy engine stores a 64 x 32
box of C faster than the warps' 8-byte stores, and drains the block's last boxes while the
next block's wgmma run, that share shrinks.

Builds: int8_wgmma_cluster, int4_wgmma_persistent and fp16_wgmma_cluster (FP32 C), each as
registered and with EPI_TMA slots (8 KiB each per consumer warpgroup, beside the stages).
Each is checked at N = 512-8192 (all of C up to 2048, 256 sampled rows above; INT8 and INT4
exact, FP16 bounded), event-timed at N = 4096, 6144 and 8192 as the workflow times (10
warm-ups, 50 launches, 1 s idle before each), the builds in rotating order over 6 rounds;
then the wgmma ceilings of the same call; then compute-sanitizer memcheck and racecheck of
the EPI_TMA builds i8_tma2, i4_tma4 and f16_tma2 at N = 512; then one ncu process (clock control none) taking one launch of
each build at N = 8192.

Modes (run from the repository root): `python ctma.py` (the whole first call, files into $OUT; `CTMA_CALL=2` the second),
`python ctma.py profile` (the program ncu runs), `python ctma.py check TAG N` (one full check,
the program compute-sanitizer runs)."""
import dataclasses, json, os, shutil, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np
import yaml
sys.path.insert(0, os.getcwd())
from analysis.gpu.build import build_kernel
from analysis.gpu.config import tiling_from_config
from analysis.gpu.harness import make_inputs, sample_rows
from analysis.gpu.harness.runner import GemmRunner
from analysis.gpu.harness.tma import TENSOR_MAP_BYTES, TensorMapShape, _encode_tensor_map
from analysis.gpu.harness.driver import _check
from analysis.precision import gemm_ops, precision_of
from analysis.tools import find_tool

HERE = Path(__file__).resolve().parent
W = Path("/tmp/wctma"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
if os.environ.get("CTMA_CALL") == "2":  # second call: 16-byte shared-memory stores (EPI_TMA_STS 128)
    BUILDS = {"i8": ("int8_wgmma_cluster", 0, 64), "i8_tma2": ("int8_wgmma_cluster", 2, 64),
              "i8_tma2_v4": ("int8_wgmma_cluster", 2, 128), "i4": ("int4_wgmma_persistent", 0, 64),
              "i4_tma4_v4": ("int4_wgmma_persistent", 4, 128), "f16": ("fp16_wgmma_cluster", 0, 64),
              "f16_tma2_v4": ("fp16_wgmma_cluster", 2, 128)}
    SANITIZE = ("i8_tma2_v4", "i4_tma4_v4", "f16_tma2_v4")
    PFX = "ctma2"
else:  # first call: 8-byte shared-memory stores
    BUILDS = {"i8": ("int8_wgmma_cluster", 0, 64), "i8_tma2": ("int8_wgmma_cluster", 2, 64),
              "i4": ("int4_wgmma_persistent", 0, 64), "i4_tma2": ("int4_wgmma_persistent", 2, 64),
              "i4_tma4": ("int4_wgmma_persistent", 4, 64),
              "f16": ("fp16_wgmma_cluster", 0, 64), "f16_tma2": ("fp16_wgmma_cluster", 2, 64)}
    SANITIZE = ("i8_tma2", "i4_tma4", "f16_tma2")
    PFX = "ctma"
CHECK_NS = (512, 1024, 2048, 4096, 6144, 8192)
TIME_NS = (4096, 6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def prec_of(tag):
    return CFG["kernels"][BUILDS[tag][0]]["precision"]


def tiling(tag):
    kernel, slots, _ = BUILDS[tag]
    t = tiling_from_config(CFG, kernel)
    return dataclasses.replace(t, smem_bytes=t.smem_bytes + 2 * slots * 8192)


def runner(tag, n, inputs):
    kernel, slots, _ = BUILDS[tag]
    run = GemmRunner(W / f"{tag}.cubin", kernel, prec_of(tag), tiling(tag), n, n, n, 7, tma=True, inputs=inputs)
    if slots:  # the tensor map of C: rows of N x 4 bytes, boxes of 64 rows x 128 bytes, 128-byte swizzle
        cu = run.cu
        dptr, size = _check(cu.cuModuleGetGlobal(run.module, b"wgmma_tma_c"), "cuModuleGetGlobal(wgmma_tma_c)")
        assert size == TENSOR_MAP_BYTES
        raw = _encode_tensor_map(cu, run.d_c, TensorMapShape("C", n, n * 4, 64, 128))
        _check(cu.cuMemcpyHtoD(dptr, raw.ctypes.data, TENSOR_MAP_BYTES), "cuMemcpyHtoD(wgmma_tma_c)")
    return run


def inputs_for(prec, n, seed):
    return make_inputs(precision_of(prec), n, n, n, np.random.default_rng(seed))


if len(sys.argv) > 1 and sys.argv[1] == "check":  # one full check (compute-sanitizer runs this)
    tag, n = sys.argv[2], int(sys.argv[3])
    run = runner(tag, n, inputs_for(prec_of(tag), n, 11))
    chk = run.check()
    run.close()
    print(tag, n, chk.passed, chk.max_abs_error)
    sys.exit(0 if chk.passed else 3)
if len(sys.argv) > 1:  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = {p: inputs_for(p, 8192, 5) for p in ("int8", "int4", "fp16")}
    for tag in BUILDS:
        run = runner(tag, 8192, inputs[prec_of(tag)])
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
                        "temperature.gpu", "--format=csv,nounits", "-lms", "100"], stdout=open(W / f"{PFX}_smi.csv", "w"),
                       stderr=subprocess.DEVNULL, start_new_session=True)
import atexit; atexit.register(smi.kill)


def build(tag):
    kernel, slots, sts = BUILDS[tag]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90",
                 tiling(tag).defines() + [f"-DEPI_TMA={slots}", f"-DEPI_TMA_STS={sts}"],
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


with ThreadPoolExecutor(8) as ex:
    futs = [ex.submit(build, t) for t in BUILDS]
    futs.append(ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                          ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log"))
    for f in futs:
        f.result()
builds = {}
for t in BUILDS:
    sass = (W / f"{t}.sass").read_text()
    builds[t] = {"EPI_TMA": BUILDS[t][1], "EPI_TMA_STS": BUILDS[t][2], "smem_bytes": tiling(t).smem_bytes,
                 "resources": json.loads((W / f"{t}.json").read_text()),
                 **{op: sass.count(op) for op in ("UTMASTG", "STS.64", "STS.128", "SHFL", "STG.E.64", "BAR.SYNC", "SYNCS")}}
(OUT / f"{PFX}_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["UTMASTG"], b["STS.64"], b["STG.E.64"], b["resources"]["registers"],
                  b["resources"]["spill_store_bytes"]) for t, b in builds.items()})

checks, rounds = [], []
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in ("int8", "int4", "fp16")}
    runs = {t: runner(t, n, inputs[prec_of(t)]) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(None if n <= 2048 else sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "rows": "all" if n <= 2048 else 256, "passed": bool(chk.passed),
                           "max_abs_error": float(chk.max_abs_error)})
            if not chk.passed:
                log("CHECK FAILED", t, n, chk)
        if n in TIME_NS:
            ops = gemm_ops(n, n, n)
            order = [t for t in BUILDS if all(c["passed"] for c in checks if c["build"] == t)]
            for r in range(6):
                k = r % len(order)
                for t in order[k:] + order[:k]:
                    time.sleep(1.0)
                    m = runs[t].time(10, 50).median_ns
                    rounds.append({"build": t, "n": n, "round": r, "median_ns": m, "rate": ops / m / 1e3})
            log(n, {t: round(float(np.median([x["rate"] for x in rounds if x["build"] == t and x["n"] == n])), 1)
                    for t in order})
    finally:
        for run in runs.values():
            run.close()
    del inputs
    (OUT / f"{PFX}_checks.json").write_text(json.dumps(checks, indent=1))
    (OUT / f"{PFX}_rounds.json").write_text(json.dumps(rounds, indent=1))
log("checks", sum(c["passed"] for c in checks), "of", len(checks))
from analysis.gpu.references import wgmma_ceilings
rows = wgmma_ceilings(W / "ceil.cubin", 10, 50)
(OUT / f"{PFX}_ceilings.json").write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=1, default=str))
log("ceilings", [(r.name, round(r.rate, 1)) for r in rows])
time.sleep(1.0)
smi.terminate()

san = str(find_tool("compute-sanitizer")); res = []
for tag in SANITIZE:
    for tool in ("memcheck", "racecheck"):
        cmd = [san, "--tool", tool, "--error-exitcode", "1", sys.executable, str(Path(__file__).resolve()), "check", tag, "512"]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120); rc = p.returncode; txt = p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"; txt = str(e)
        res.append({"build": tag, "tool": tool, "n": 512, "rc": rc, "wall_s": round(time.time() - t0, 1), "tail": txt[-600:]})
        log(tag, tool, rc, f"{time.time()-t0:.1f}s")
        (OUT / f"{PFX}_sanitize.json").write_text(json.dumps(res, indent=1))

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "dram__bytes_write.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,"
     "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", M, "--force-overwrite", "--export",
       str(W / f"{PFX}_ncu"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
(W / f"{PFX}_ncu.log").write_text(f"$ {' '.join(cmd)}\nrc={p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu", p.returncode)
if (W / f"{PFX}_ncu.ncu-rep").exists():
    q = subprocess.run([ncu, "--import", str(W / f"{PFX}_ncu.ncu-rep"), "--csv", "--page", "raw", "--metrics", M],
                       capture_output=True, text=True)
    (OUT / f"{PFX}_ncu.csv").write_text(q.stdout)
subprocess.run(f"cd {W} && tar cJf {OUT}/{PFX}_extra.tar.xz {PFX}_smi.csv {PFX}_ncu.log $(ls {PFX}_ncu.ncu-rep 2>/dev/null) *.sass *.log",
               shell=True)
log("done")
