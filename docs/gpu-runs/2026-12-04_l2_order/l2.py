"""Development call: int8_wgmma_cluster's DRAM reads and the order of its K tiles.

In the registry set (h200_580.159.04_ncu2025.3.1_registry) the kernel read 810.7 MB from DRAM
at N = 8192 (dram__bytes_read.sum), six times A and B (134 MB), and the ablation without DRAM
reads (../2026-12-04_int8_ablation/) ran 6.5 % faster at a 4-5 % higher clock. A wave of the
persistent grid (66 clusters) walks K from its first tile to its last; the next wave starts again
at K tile 0, whose lines are the oldest in L2. With K_SERPENTINE=1 (kernels/wgmma_gemm.cuh) a CTA
walks K backwards in its odd-numbered blocks, so a wave starts where the one before ended. RASTER
16 makes a wave's blocks 16 block rows x about 8 block columns (32.5 MiB of panels of A and B)
instead of 8 x 16.5 (41 MiB), and consecutive waves share 16 MiB of A panels instead of 8.

Builds (tag: kernel, tiling change, extra nvcc defines):
  reg         int8_wgmma_cluster as registered (raster 8)
  r16         raster 16
  serp8       K_SERPENTINE=1
  serp16      K_SERPENTINE=1, raster 16
  s64         STORE64=1 (C 16 bytes a lane, ../2026-12-04_int8_store64/)
  serp16_s64  K_SERPENTINE=1, raster 16, STORE64=1
  serp16_s64ef  the same with C_EVICT_FIRST=1 (C's 16-byte stores under an L2 evict-first policy;
              no longer in kernels/: apply c_evict_first.patch to a copy and pass it as KDIR)
  i4          int4_wgmma_persistent as registered (INT4 / INT8 in the same call)
The second call (L2_PFX=l2b, KDIR=a copy of kernels/ with c_evict_first.patch and then call2.patch applied: the trickled stores
of ../2026-12-04_overlap/overlap.patch merged with the above, and store64_int4.patch of
../2026-12-04_int8_store64/):
  tr16        EPI_OVERLAP=2 (trickled stores, the burst half 16 bytes a lane)
  tr16_serp16 the same with K_SERPENTINE=1, raster 16
  tr8_serp16  EPI_OVERLAP=2 STORE16=0 (the burst half 8 bytes a lane), K_SERPENTINE=1, raster 16
  i4_s64      int4_wgmma_persistent with STORE64=1
  and memcheck and racecheck (N = 1024 on 2 CTAs) of the SANITIZE builds present.
Each is checked exactly (all of C) at N = 1024 on 2 CTAs (16 blocks each, both directions) and
N = 2048 on 14 CTAs, and on 256 sampled rows at N = 4096, 6144 and 8192 on the full grid;
event-timed at N = 6144 and 8192 as the workflow times (10 warm-ups, 50 launches, 1 s idle
before each), in rotating order over 6 rounds; then the wgmma ceilings of the same call; one ncu
process (clock control none) taking one launch of each build at N = 8192.

Modes (from the repository root): `python l2.py` (the whole call, files into $OUT);
`python l2.py profile` (the program ncu runs); `python l2.py check TAG N SMS` (one full check, the
program compute-sanitizer runs). The first call ran this file before the second call's builds,
KDIR, L2_SANITIZE and the check mode were added; unset, they change nothing."""
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

W = Path("/tmp/wl2"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
SERP, S64 = ["-DK_SERPENTINE=1"], ["-DSTORE64=1"]
I8 = "int8_wgmma_cluster"
BUILDS = {"reg": (I8, {}, []), "r16": (I8, {"raster": 16}, []), "serp8": (I8, {}, SERP),
          "serp16": (I8, {"raster": 16}, SERP), "s64": (I8, {}, S64), "serp16_s64": (I8, {"raster": 16}, SERP + S64),
          "serp16_s64ef": (I8, {"raster": 16}, SERP + S64 + ["-DC_EVICT_FIRST=1"]),
          "i4": ("int4_wgmma_persistent", {}, []),
          "tr16": (I8, {}, ["-DEPI_OVERLAP=2"]), "tr16_serp16": (I8, {"raster": 16}, SERP + ["-DEPI_OVERLAP=2"]),
          "tr8_serp16": (I8, {"raster": 16}, SERP + ["-DEPI_OVERLAP=2", "-DSTORE16=0"]),
          "i4_s64": ("int4_wgmma_persistent", {}, S64)}
KDIR = Path(os.environ.get("KDIR", "kernels"))
if os.environ.get("L2_ONLY"):
    BUILDS = {t: BUILDS[t] for t in os.environ["L2_ONLY"].split(",")}
PFX = os.environ.get("L2_PFX", "l2")
SANITIZE = tuple(t for t in ("serp16_s64", "tr16_serp16") if t in BUILDS and os.environ.get("L2_SANITIZE"))
CHECK_NS = (4096, 6144, 8192)
TIME_NS = (6144, 8192)
SMALL = ((1024, 2), (2048, 14))  # (N, SMs the grid is sized for)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def tiling(tag):
    kernel, change, _ = BUILDS[tag]
    return dataclasses.replace(tiling_from_config(CFG, kernel), **change)


def prec_of(tag):
    return CFG["kernels"][BUILDS[tag][0]]["precision"]


def runner(tag, n, inputs, sms=None):
    run = GemmRunner(W / f"{tag}.cubin", BUILDS[tag][0], prec_of(tag), tiling(tag), n, n, n, 7, tma=True, inputs=inputs)
    if sms:
        run.sms = sms  # a smaller persistent grid: more blocks per CTA
    return run


def inputs_for(prec, n, seed):
    return make_inputs(precision_of(prec), n, n, n, np.random.default_rng(seed))


def build(tag):
    kernel, _, extra = BUILDS[tag]
    build_kernel(KDIR / f"{kernel}.cu", kernel, "sm_90", tiling(tag).defines() + extra,
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


if len(sys.argv) > 1 and sys.argv[1] == "check":  # one full check (compute-sanitizer runs this)
    tag, n, sms = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    run = runner(tag, n, inputs_for(prec_of(tag), n, 11), sms)
    chk = run.check()
    run.close()
    print(tag, n, sms, chk.passed, chk.max_abs_error)
    sys.exit(0 if chk.passed else 3)
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
with ThreadPoolExecutor(8) as ex:
    futs = [ex.submit(build, t) for t in BUILDS]
    futs.append(ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                          ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log"))
    for f in futs:
        f.result()
builds = {}
for t in BUILDS:
    sass = (W / f"{t}.sass").read_text()
    builds[t] = {"tiling": dataclasses.asdict(tiling(t)), "defines": BUILDS[t][2],
                 "resources": json.loads((W / f"{t}.json").read_text()),
                 **{op: sass.count(op) for op in ("IGMMA", "STG.E.64", "STG.E.128", "SHFL", "STL")}}
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
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in {prec_of(t) for t in BUILDS}}
    runs = {t: runner(t, n, inputs[prec_of(t)]) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "sms": run.sms, "rows": 256, "passed": bool(chk.passed),
                           "max_abs_error": float(chk.max_abs_error)})
            if not chk.passed:
                log("CHECK FAILED", t, n, chk)
        if n not in TIME_NS:
            continue
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
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
        res.append({"build": tag, "tool": tool, "n": 1024, "sms": 2, "rc": p.returncode,
                    "wall_s": round(time.time() - t0, 1), "tail": (p.stdout + p.stderr)[-600:]})
        log(tag, tool, p.returncode, f"{time.time()-t0:.1f}s")
        (OUT / f"{PFX}_sanitize.json").write_text(json.dumps(res, indent=1))

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,"
     "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_write.sum")
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
