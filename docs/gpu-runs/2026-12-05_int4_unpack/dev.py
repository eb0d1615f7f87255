"""Development call: the INT4 producer's unpacking in groups of two K tiles (build parameters
UNPACK_GROUP, UNPACK_EARLY and UNPACK_BASE_ADDR of kernels/int4_wgmma.cuh), and the INT8
consumer lag given at every block (../2026-12-05_consumer_lag/lag_each_block.patch, on top of
epi_clocks.patch there; for the first call both applied to the device's copy of the tree before
this runs).

Why INT4: in the committed set's report of int4_wgmma_persistent at N = 8192 the consumer
warps spent 29 % of their PC samples waiting for the INT8 B (the b_full mbarrier) and almost
none waiting for wgmma to complete, while the producer warps were busy 65 % of theirs (about
920 of the 1415 cycles a K tile took), a fifth of that waiting for their own shared-memory
loads. Reading two tiles' packed B before writing either hides one tile's load latency under
the other and halves the per-tile waits, fences and branches.

Builds (N = 8192 unless said): INT4 i4 (registered), i4_b1 (UNPACK_BASE_ADDR only), i4_g2
(groups of two, one fence a group), i4_g2e (groups of two, each tile fenced and released at
once), i4_g2_tma4 and i4_g2e_tma4 (the same with C through EPI_TMA=4); INT8 i8_serp (int8_wgmma_serpentine),
i8_eb1 and i8_eb2 (lag 1 and 2 at every block). Each is checked at
N = 512-8192 (all rows up to 2048, 256 sampled rows above; exact), and on 2 CTAs at N = 1024
(16 blocks each, every group boundary and block change), then event-timed at N = 6144 and 8192
as the workflow times (10 warm-ups, 50 launches, 0.5 s idle before each) in rotating order over
5 rounds while nvidia-smi samples every 50 ms; then the wgmma ceilings of the same call;
memcheck and racecheck of i4_g2 and i4_g2e at N = 1024 on 2 CTAs; one ncu process (clock
control none) taking one launch of each build at N = 8192.

DEV_CALL=2 (the second call, files dev2_*): the registered INT4 kernel, UNPACK_BASE_ADDR,
EPI_TMA=4, both, and int8_wgmma_serpentine; i4_b1_tma4 sanitized. The machine ran it as this
script rewritten by `dev2.patch` (against this file as of the first call); the mode gives the
same builds and files.

DEV_CALL=3 (prepared, not run; files dev3_*): the packed tiles of int4_wgmma_persistent in a ring
of their own, deeper than the ring of INT8 B tiles (build parameter PACKED_STAGES). The first call
found that holding a tile's INT8 B back behind the next tile's copy costs directly: a copy of tile
t + 4 goes out only when tile t's stage is free. With P packed stages beside the 4 INT8 B stages,
the copy of tile t + P goes out at the same moment. Builds (with UNPACK_BASE_ADDR, which
PACKED_STAGES needs to stay within the producer's registers, except the first two): i4, i4_tma4,
i4_p5 and i4_p6 (5 and 6 packed stages: 185 and 209 KiB), i4_p5_tma2 (5 packed stages and
EPI_TMA=2: 217 KiB) and i8_serp for the INT4 / INT8 ratio. Beside them, two producer warpgroups
(PRODUCER_WARPS=8: each producer thread unpacks 2 packed chunks a tile instead of 4): i4_w8,
i4_w8_tma4 (C through EPI_TMA=4) and i4_w8_p6 (with 6 packed stages). The two tell apart the
packed tiles' arrival (the P builds) and the producer's unpacking time (the W8 builds) as what the
consumers wait for. And INT8 with L2 cache policies on its copies (L2_POLICY_A / L2_POLICY_B of
kernels/wgmma_gemm.cuh): i8_bf (B's lines evict_first), i8_al (A's evict_last), i8_al_bf (both),
all else int8_wgmma_serpentine's. i4_p6, i4_p5_tma2, i4_w8_tma4, i4_w8_p6 and i8_al_bf sanitized.

Modes (run from the repository root): `python dev.py` (the whole call, files into $OUT),
`python dev.py build` (the builds only, into /tmp/w{prefix}), `python dev.py profile` (the program
ncu runs, on those builds; DEV_TAGS=a,b for some of them only), `python dev.py check TAG N CTAS` (one full
check, the program compute-sanitizer runs); each with DEV_CALL as the call's."""
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

CALL = os.environ.get("DEV_CALL", "1")
PFX = "dev" if CALL == "1" else f"dev{CALL}"
W = Path(f"/tmp/w{PFX}"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
I4, I8 = "int4_wgmma_persistent", "int8_wgmma_lag"
B1 = ["-DUNPACK_BASE_ADDR=1"]
G2 = ["-DUNPACK_GROUP=2"] + B1
SERP = ("int8_wgmma_serpentine", [], 0)
# tag: (kernel, extra defines, EPI_TMA slots per consumer warpgroup[, packed stages])
if CALL == "1":
    BUILDS = {"i4": (I4, [], 0), "i4_b1": (I4, B1, 0), "i4_g2": (I4, G2, 0),
              "i4_g2e": (I4, G2 + ["-DUNPACK_EARLY=1"], 0), "i4_g2_tma4": (I4, G2 + ["-DEPI_TMA=4"], 4),
              "i4_g2e_tma4": (I4, G2 + ["-DUNPACK_EARLY=1", "-DEPI_TMA=4"], 4), "i8_serp": SERP,
              "i8_eb1": (I8, ["-DCONSUMER_LAG=1", "-DCONSUMER_LAG_EACH_BLOCK=1"], 0),
              "i8_eb2": (I8, ["-DCONSUMER_LAG=2", "-DCONSUMER_LAG_EACH_BLOCK=1"], 0)}
    SANITIZE = ("i4_g2", "i4_g2e")
elif CALL == "2":
    BUILDS = {"i4": (I4, [], 0), "i4_b1": (I4, B1, 0), "i4_tma4": (I4, ["-DEPI_TMA=4"], 4),
              "i4_b1_tma4": (I4, B1 + ["-DEPI_TMA=4"], 4), "i8_serp": SERP}
    SANITIZE = ("i4_b1_tma4",)
else:
    BUILDS = {"i4": (I4, [], 0), "i4_tma4": (I4, ["-DEPI_TMA=4"], 4),
              "i4_p5": (I4, B1 + ["-DPACKED_STAGES=5"], 0, 5), "i4_p6": (I4, B1 + ["-DPACKED_STAGES=6"], 0, 6),
              "i4_p5_tma2": (I4, B1 + ["-DPACKED_STAGES=5", "-DEPI_TMA=2"], 2, 5), "i8_serp": SERP,
              "i4_w8": (I4, [], 0, None, 8), "i4_w8_tma4": (I4, ["-DEPI_TMA=4"], 4, None, 8),
              "i4_w8_p6": (I4, B1 + ["-DPACKED_STAGES=6"], 0, 6, 8),
              "i8_bf": ("int8_wgmma_serpentine", ["-DL2_POLICY_B=1"], 0),
              "i8_al": ("int8_wgmma_serpentine", ["-DL2_POLICY_A=2"], 0),
              "i8_al_bf": ("int8_wgmma_serpentine", ["-DL2_POLICY_A=2", "-DL2_POLICY_B=1"], 0)}
    SANITIZE = ("i4_p6", "i4_p5_tma2", "i4_w8_tma4", "i4_w8_p6", "i8_al_bf")
CHECK_NS = (512, 1024, 2048, 4096, 6144, 8192)
TIME_NS = (6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def prec_of(tag):
    return CFG["kernels"][BUILDS[tag][0]]["precision"]


def tiling(tag):
    kernel, _, slots, *more = BUILDS[tag]
    packed, producer_warps = (more + [None, None])[:2]
    t = tiling_from_config(CFG, kernel)
    smem = t.smem_bytes if not packed else t.stages * t.block_n * 2 * t.block_k_bytes + packed * (
        t.block_m + t.block_n) * t.block_k_bytes + 1024  # INT8 B stages, then the packed stages
    return dataclasses.replace(t, smem_bytes=smem + 2 * slots * 8192, producer_warps=producer_warps or t.producer_warps)


def runner(tag, n, inputs, ctas=None):
    run = GemmRunner(W / f"{tag}.cubin", BUILDS[tag][0], prec_of(tag), tiling(tag), n, n, n, 7, tma=True,
                     inputs=inputs)
    if ctas:
        run.sms = ctas  # the persistent grid's CTA count (Tiling.grid)
    return run


def inputs_for(prec, n, seed):
    return make_inputs(precision_of(prec), n, n, n, np.random.default_rng(seed))


if len(sys.argv) > 1 and sys.argv[1] == "check":  # one full check (compute-sanitizer runs this)
    tag, n, ctas = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    run = runner(tag, n, inputs_for(prec_of(tag), n, 11), ctas)
    chk = run.check()
    run.close()
    print(tag, n, ctas, chk.passed, chk.max_abs_error)
    sys.exit(0 if chk.passed else 3)
if len(sys.argv) > 1 and sys.argv[1] == "profile":  # the program ncu profiles: one launch per build at N = 8192
    from cuda.bindings import driver as cu
    inputs = {p: inputs_for(p, 8192, 5) for p in ("int8", "int4")}
    for tag in [t for t in os.environ.get("DEV_TAGS", "").split(",") if t] or BUILDS:  # DEV_TAGS: some builds only
        run = runner(tag, 8192, inputs[prec_of(tag)])
        try:
            for _ in range(3):
                run.launch()
            run.sync()
            cu.cuProfilerStart(); run.launch(); run.sync(); cu.cuProfilerStop()
        finally:
            run.close()
    sys.exit(0)



def build(tag):
    kernel, extra = BUILDS[tag][:2]
    build_kernel(Path("kernels") / f"{kernel}.cu", kernel, "sm_90", tiling(tag).defines() + extra,
                 W / f"{tag}.cubin", W / f"{tag}.json", W / f"{tag}.sass", W / f"{tag}.log")


if len(sys.argv) > 1 and sys.argv[1] == "build":  # the builds only, into /tmp/w{prefix} (for `profile`)
    with ThreadPoolExecutor(10) as ex:
        list(ex.map(build, BUILDS))
    sys.exit(0)
OUT = Path(os.environ["OUT"])
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.sw_power_cap,"
                        "temperature.gpu", "--format=csv,nounits", "-lms", "50"], stdout=open(W / f"{PFX}_smi.csv", "w"),
                       stderr=subprocess.DEVNULL, start_new_session=True)
import atexit; atexit.register(smi.kill)


with ThreadPoolExecutor(10) as ex:
    futs = [ex.submit(build, t) for t in BUILDS]
    futs.append(ex.submit(build_kernel, Path("kernels/ceilings/wgmma_peak.cu"), "peak_wgmma_m64n256k16_f16_f32", "sm_90",
                          ["-arch=sm_90a"], W / "ceil.cubin", W / "ceil.json", W / "ceil.sass", W / "ceil.log"))
    for f in futs:
        f.result()
builds = {}
for t in BUILDS:
    sass = (W / f"{t}.sass").read_text()
    builds[t] = {"defines": BUILDS[t][1], "EPI_TMA": BUILDS[t][2], "packed_stages": (BUILDS[t][3:] or [None])[0],
                 "producer_warps": tiling(t).producer_warps, "smem_bytes": tiling(t).smem_bytes,
                 "resources": json.loads((W / f"{t}.json").read_text()),
                 **{op: sass.count(op) for op in ("IGMMA", "LDS.128", "STS.128", "FENCE.VIEW.ASYNC.S", "UTMASTG",
                                                  "BAR.SYNC 0x3", "BAR.ARV 0x3", "STL", "LDL")}}
(OUT / f"{PFX}_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["resources"]["registers"], b["resources"]["spill_store_bytes"], b["LDS.128"], b["STS.128"],
                  b["FENCE.VIEW.ASYNC.S"]) for t, b in builds.items()})

checks, rounds = [], []
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in ("int8", "int4")}
    runs = {t: runner(t, n, inputs[prec_of(t)]) for t in BUILDS}
    try:
        for t, run in runs.items():
            chk = run.check(None if n <= 2048 else sample_rows(n, 256, np.random.default_rng(3)))
            checks.append({"build": t, "n": n, "ctas": run.sms, "rows": "all" if n <= 2048 else 256,
                           "passed": bool(chk.passed), "max_abs_error": float(chk.max_abs_error)})
            if not chk.passed:
                log("CHECK FAILED", t, n, chk)
        if n == 1024:  # 2 CTAs: 16 blocks each, every group boundary and block change
            for t in BUILDS:
                run2 = runner(t, n, inputs[prec_of(t)], ctas=2)
                try:
                    chk = run2.check()
                finally:
                    run2.close()
                checks.append({"build": t, "n": n, "ctas": 2, "rows": "all", "passed": bool(chk.passed),
                               "max_abs_error": float(chk.max_abs_error)})
                if not chk.passed:
                    log("CHECK FAILED (2 CTAs)", t, n, chk)
        if n in TIME_NS:
            ops = gemm_ops(n, n, n)
            order = [t for t in BUILDS if all(c["passed"] for c in checks if c["build"] == t)]
            for r in range(5):
                k = r % len(order)
                for t in order[k:] + order[:k]:
                    time.sleep(0.5)
                    m = runs[t].time(10, 50).median_ns
                    rounds.append({"build": t, "n": n, "round": r, "median_ns": m, "rate": ops / m / 1e3,
                                   "t": round(time.time() - T0, 2)})
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
time.sleep(0.5)
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
        res.append({"build": tag, "tool": tool, "n": 1024, "ctas": 2, "rc": rc, "wall_s": round(time.time() - t0, 1),
                    "tail": txt[-600:]})
        log(tag, tool, rc, f"{time.time()-t0:.1f}s")
        (OUT / f"{PFX}_sanitize.json").write_text(json.dumps(res, indent=1))

ncu = str(find_tool("ncu"))
M = ("gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,"
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,"
     "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,"
     "smsp__inst_executed.sum,lts__t_sector_hit_rate.pct")
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
