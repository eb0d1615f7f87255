"""Development call: the epilogue under the next block's wgmma (build parameter EPI_OVERLAP of
kernels/wgmma_gemm.cuh). The ablations (../2026-12-04_int8_ablation/) found the C stores idling
int8_wgmma_cluster's tensor pipe 8 % of active cycles at an unchanged clock, and cheaper stores
(../2026-12-04_int8_store64/, ../2026-12-04_c_tma/) gave back at most a fifth of that. With three
64-register accumulator halves per consumer thread, the next block's first kPrefix K tiles are
issued into the free half (columns 0-127) before the previous block's columns 0-127 are stored,
and into that half (columns 128-255) before its columns 128-255 are stored.

Builds (tag: kernel, extra nvcc defines):
  i8        int8_wgmma_cluster as registered
  i8_p0     EPI_OVERLAP=1 OVERLAP_PREFIX=0 STORE16=0: two m64n128 wgmma per K step, no overlap
            (what the halves cost by themselves)
  i8_ov8    EPI_OVERLAP=1 STORE16=0: overlap of 3 K tiles, C 8 bytes a lane
  i8_ov16   EPI_OVERLAP=1: overlap of 3 K tiles, C 16 bytes a lane (ptxas spills 312 bytes)
  i8_ov8p2  EPI_OVERLAP=1 STORE16=0 OVERLAP_PREFIX=2
  i8_er     EPI_OVERLAP=1 STORE16=0 EARLY_RELEASE=1 (third call): the prefix's stages released
            while the previous block's columns 128-255 are stored, not after the next K tile
  i8_tr     EPI_OVERLAP=2 STORE16=0 (fifth call): no prefix; the previous block's columns 0-127
            stored at once, its columns 128-255 one column group per K tile over the next block's
            first 16 K tiles
  i8_tr16   EPI_OVERLAP=2 (sixth call): the same with the columns 0-127 stored 16 bytes a lane
  i8_s3, i8_s2  EPI_SUFFIX=3, 2 (seventh call): two accumulator halves, no rotation; a block's
            last 3 (2) K tiles issued for columns 0-127 first, then 128-255; columns 0-127 stored
            while those run, columns 128-255 after (16 bytes a lane)
  i4        int4_wgmma_persistent as registered (INT4 / INT8 in the same call)
  f16       fp16_wgmma_cluster as registered;  f16_ov8  EPI_OVERLAP=1 STORE16=0
Each is checked at N = 512-8192 on the full grid (all of C up to 2048, 256 sampled rows above;
INT8 and INT4 exact, FP16 bounded) and (all of C) at N = 1024 on grids of 2 and 8 CTAs and at
N = 2048 on 14, where each CTA computes 4 to 16 blocks and goes through every variant of the rotation;
event-timed at N = 4096, 6144 and 8192 as the workflow times (10 warm-ups, 50 launches, 1 s
idle before each), the builds in rotating order over 6 rounds; then the wgmma ceilings of the
same call; compute-sanitizer memcheck and racecheck of i8_ov8, i8_ov16 and f16_ov8 at N = 1024
on 2 CTAs; one ncu process (clock control none) taking one launch of each build at N = 8192.

The builds need overlap.patch applied to the tree (`git apply`); the EPI_OVERLAP code is not in
kernels/ (it ran slower: README.md). Modes (run from the repository root): `python ov.py` (the
whole call, files into $OUT), `python ov.py build` (only the builds; OV_ONLY=i8,i8_ov8 limits
the builds of any mode),
`python ov.py profile` (the program ncu runs), `python ov.py check TAG N SMS` (one full check,
the program compute-sanitizer runs). The third call: `OV_PFX=ov3 OV_ONLY=i8,i8_p0,i8_ov8,i8_er,i4`; the fifth:
`OV_PFX=ov5 OV_ONLY=i8,i8_p0,i8_tr,i4`; the sixth: `OV_PFX=ov6 OV_ONLY=i8,i8_tr,i8_tr16,i4`; the
seventh: `OV_PFX=ov7 OV_ONLY=i8,i8_s3,i8_s2,i8_tr16`.
Each SANITIZE build present is sanitized."""
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

W = Path("/tmp/wov"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
OV8 = ["-DEPI_OVERLAP=1", "-DSTORE16=0"]
BUILDS = {"i8": ("int8_wgmma_cluster", []),
          "i8_p0": ("int8_wgmma_cluster", OV8 + ["-DOVERLAP_PREFIX=0"]),
          "i8_ov8": ("int8_wgmma_cluster", OV8),
          "i8_ov16": ("int8_wgmma_cluster", ["-DEPI_OVERLAP=1"]),
          "i8_ov8p2": ("int8_wgmma_cluster", OV8 + ["-DOVERLAP_PREFIX=2"]),
          "i8_er": ("int8_wgmma_cluster", OV8 + ["-DEARLY_RELEASE=1"]),
          "i8_tr": ("int8_wgmma_cluster", ["-DEPI_OVERLAP=2", "-DSTORE16=0"]),
          "i8_tr16": ("int8_wgmma_cluster", ["-DEPI_OVERLAP=2"]),
          "i8_s3": ("int8_wgmma_cluster", ["-DEPI_SUFFIX=3"]),
          "i8_s2": ("int8_wgmma_cluster", ["-DEPI_SUFFIX=2"]),
          "i4": ("int4_wgmma_persistent", []),
          "f16": ("fp16_wgmma_cluster", []),
          "f16_ov8": ("fp16_wgmma_cluster", OV8)}
if os.environ.get("OV_ONLY"):  # the second call: a subset (build, then ncu --set full of `profile`)
    BUILDS = {t: BUILDS[t] for t in os.environ["OV_ONLY"].split(",")}
SANITIZE = tuple(t for t in ("i8_ov8", "i8_ov16", "f16_ov8", "i8_er", "i8_tr", "i8_tr16", "i8_s3") if t in BUILDS)
PFX = os.environ.get("OV_PFX", "ov")
CHECK_NS = (512, 1024, 2048, 4096, 6144, 8192)
SMALL = ((1024, 2), (1024, 8), (2048, 14))  # (N, SMs the grid is sized for)
TIME_NS = (4096, 6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def prec_of(tag):
    return CFG["kernels"][BUILDS[tag][0]]["precision"]


def runner(tag, n, inputs, sms=None):
    kernel = BUILDS[tag][0]
    run = GemmRunner(W / f"{tag}.cubin", kernel, prec_of(tag), tiling_from_config(CFG, kernel), n, n, n, 7,
                     tma=True, inputs=inputs)
    if sms:
        run.sms = sms  # a smaller persistent grid: more blocks per CTA
    return run


def inputs_for(prec, n, seed):
    return make_inputs(precision_of(prec), n, n, n, np.random.default_rng(seed))


if len(sys.argv) > 1 and sys.argv[1] == "check":  # one full check (compute-sanitizer runs this)
    tag, n, sms = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    run = runner(tag, n, inputs_for(prec_of(tag), n, 11), sms)
    chk = run.check()
    run.close()
    print(tag, n, sms, chk.passed, chk.max_abs_error)
    sys.exit(0 if chk.passed else 3)
if len(sys.argv) > 1 and sys.argv[1] == "build":
    for tag, (kernel, extra) in BUILDS.items():
        build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90",
                     tiling_from_config(CFG, kernel).defines() + extra, W / f"{tag}.cubin", W / f"{tag}.json",
                     W / f"{tag}.sass", W / f"{tag}.log")
    sys.exit(0)
if len(sys.argv) > 1:  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = {p: inputs_for(p, 8192, 5) for p in {prec_of(t) for t in BUILDS}}
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
    kernel, extra = BUILDS[tag]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", tiling_from_config(CFG, kernel).defines() + extra,
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
    builds[t] = {"defines": BUILDS[t][1], "resources": json.loads((W / f"{t}.json").read_text()),
                 **{op: sass.count(op) for op in ("IGMMA", "HGMMA", "STG.E.64", "STG.E.128", "SHFL", "STL", "WARPGROUP.DEPBAR")}}
(OUT / f"{PFX}_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["resources"]["registers"], b["resources"]["spill_store_bytes"], b["STG.E.64"], b["STG.E.128"])
              for t, b in builds.items()})

checks, rounds = [], []
for n, sms in SMALL:
    inputs = {p: inputs_for(p, n, 23) for p in {prec_of(t) for t in BUILDS}}
    for t in BUILDS:
        run = runner(t, n, inputs[prec_of(t)], sms)
        try:
            chk = run.check()
        finally:
            run.close()
        checks.append({"build": t, "n": n, "sms": sms, "rows": "all", "passed": bool(chk.passed),
                       "max_abs_error": float(chk.max_abs_error)})
        if not chk.passed:
            log("CHECK FAILED", t, n, sms, chk)
log("small grids", sum(c["passed"] for c in checks), "of", len(checks))
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in {prec_of(t) for t in BUILDS}}
    runs = {t: runner(t, n, inputs[prec_of(t)]) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(None if n <= 2048 else sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "sms": run.sms, "rows": "all" if n <= 2048 else 256,
                           "passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)})
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
        cmd = [san, "--tool", tool, "--error-exitcode", "1", sys.executable, str(Path(__file__).resolve()), "check", tag,
               "1024", "2"]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=150); rc = p.returncode; txt = p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"; txt = str(e)
        res.append({"build": tag, "tool": tool, "n": 1024, "sms": 2, "rc": rc, "wall_s": round(time.time() - t0, 1),
                    "tail": txt[-600:]})
        log(tag, tool, rc, f"{time.time()-t0:.1f}s")
        (OUT / f"{PFX}_sanitize.json").write_text(json.dumps(res, indent=1))

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__cycles_active.avg,dram__bytes_write.sum,"
     "lts__t_requests_srcunit_tex_op_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,"
     "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum")
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
