"""Development call: do the tiles' addresses in shared memory matter, beyond where the tiles of
one stage lie relative to each other? (build parameters LAYOUT_PAD, LAYOUT_OFFSET and
LAYOUT_EPI_FIRST of kernels/int4_wgmma.cuh; STAGE_PAD and LAYOUT_OFFSET of kernels/wgmma_gemm.cuh)

Why: in ../2026-12-06_int4_ring/ every INT4 build that laid a stage's INT8 B tile apart from its own
packed tiles ran 0.88-0.90x the registered kernel, with the consumers' wgmma slower to complete,
and no shared-memory counter followed the loss. Those builds moved the tiles relative to each
other and to every address at once. Here the registered arrangement is kept within each slot and
only the addresses change: empty bytes after each slot (the slots further apart), before the
first stage (every tile moved by the same amount), or the C slots first. If the rate follows
the addresses, their bits are the cause and a better set of addresses may exist; if it does not,
what matters is which tiles lie together. The INT8 kernel gets the same two changes (no earlier
call moved its stages).

Builds (INT4: int4_wgmma_persistent; INT8: int8_wgmma_serpentine; tag: defines): i4
(registered), i4_tma4 (EPI_TMA=4, the best INT4 build so far), i4_tma4_epi1st (its C slots first,
so its stages start 64 KiB later), i4_tma2 (EPI_TMA=2, the base of the padded builds, which need
its room), i4_tma2_pad2/4/8 (2, 4, 8 KiB after each 40 KiB slot), i4_tma2_off16/32 (16, 32 KiB
before the first stage), i4_pad16 (16 KiB after each slot, no EPI_TMA); i8_serp (registered),
i8_lag (int8_wgmma_lag), i8_pad2/4/8 (after each 48 KiB stage), i8_off32. Each is checked at
N = 512-8192 (all rows up to 2048, 256 sampled rows above; exact) and on 2 CTAs at N = 1024, then
event-timed at N = 6144 and 8192 as the workflow times (10 warm-ups, 50 launches, 0.5 s idle
before each) in rotating order over 5 rounds while nvidia-smi samples every 50 ms; then the
wgmma ceilings of the same call; memcheck and racecheck of two builds at N = 1024 on 2 CTAs; one
ncu process (clock control none) taking one launch of each build at N = 8192 (counters); and
`--set full` of FULL for their PC samples.

DEV_SET=stages (the second call, files dev7_*): 4 stages ran faster than 5 for the persistent
INT4 kernel (docs/perf-notes.md, 2026-12-02), and deeper packed rings slower (2026-12-05); here 3
and 2 stages, with EPI_TMA=4, beside 5, and INT8 with 3 stages (with and without EPI_TMA=2).

DEV_SET=combo (the third call, files dev8_*): EPI_TMA=4 and EPI_TMA=2 with UNPACK_BASE_ADDR (which
gained 0.9-1.3 % alone in ../2026-12-05_int4_unpack/ and ../2026-12-06_int4_ring/ and was never
measured with the copy engine's C stores), with 7 rounds instead of 5.

DEV_SET=b_global (files dev9_*, prepared for ../2026-12-06_int4_b_global/, which says why): the INT4
producer's packed B read from global memory 1-3 K tiles ahead (B_GLOBAL), on int4_wgmma_epi_tma
(i4_g1_tma4 .. i4_g3_tma4 against i4_tma4, the registered kernel) and on int4_wgmma_persistent
(i4_g2 against i4), beside int8_wgmma_serpentine and int8_wgmma_lag.

DEV_SET=alternate (files dev10_*, for ../2026-12-07_int4_alternate/): the INT4 kernels with two producer
warpgroups taking alternate K tiles (PRODUCER_WARPS=8, PRODUCER_ALTERNATE=1): i4_alt_tma4 against
i4_tma4 (int4_wgmma_epi_tma) and i4_alt against i4 (int4_wgmma_persistent), beside
int8_wgmma_serpentine and int8_wgmma_lag.

DEV_SET=syncwarp (files dev11_*, prepared, not run): every producer warp rejoined at the start of each
K tile (PRODUCER_SYNCWARP=1): i4_sw_tma4 against i4_tma4 (int4_wgmma_epi_tma) and i4_sw against i4
(int4_wgmma_persistent); and the packed B read from global memory one K tile ahead (B_GLOBAL=1)
with the consumers' 224 registers, at which ptxas keeps their wgmma asynchronous (the builds of
DEV_SET=b_global and alternate had every wgmma serialized, C7512): i4_g1_tma4 and i4_g1_sw_tma4;
beside int8_wgmma_serpentine. Every build's ptxas advisories go into its builds.json entry.

DEV_SET=cluster (files dev12_*, for ../2026-12-07_int4_cluster/, which says why and what it
measured): clusters of two CTAs sharing each B tile, each producer unpacking half of it and copying
that half into the other CTA (CLUSTER_M=2, tiling cluster_m 2): i4_cl_tma4 against i4_tma4
(int4_wgmma_epi_tma) and i4_cl against i4 (int4_wgmma_persistent), beside int8_wgmma_serpentine.

Modes (run from the repository root): `python dev.py` (the whole call, files into $OUT),
`python dev.py build`, `python dev.py profile` (DEV_TAGS=a,b for some builds), `python dev.py
check TAG N CTAS`."""
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

PFX = {"stages": "dev7", "combo": "dev8", "b_global": "dev9", "alternate": "dev10", "syncwarp": "dev11",
       "cluster": "dev12"}.get(os.environ.get("DEV_SET", ""), "dev6")
W = Path(f"/tmp/w{PFX}"); W.mkdir(exist_ok=True)
CFG = yaml.safe_load(open("config/config.yaml"))
I4, SERP, LAG = "int4_wgmma_persistent", "int8_wgmma_serpentine", "int8_wgmma_lag"
I4T = "int4_wgmma_epi_tma"  # int4_wgmma_persistent with EPI_TMA=4, its C slots in the registry's smem_bytes


@dataclasses.dataclass(frozen=True)
class Build:
    kernel: str
    defines: tuple = ()
    slots: int = 0          # EPI_TMA slots per consumer warpgroup (8 KiB each)
    pad: int = 0            # bytes after each stage's slot (LAYOUT_PAD, STAGE_PAD)
    offset: int = 0         # bytes before the first stage (LAYOUT_OFFSET)
    stages: int | None = None  # stages (the registry's where None)
    producer_warps: int = 0  # producer warps (the registry's where 0)
    cluster_m: int = 0      # CTAs per cluster (the registry's where 0)


def b(kernel, *defines, slots=0, pad=0, offset=0, stages=None, producer_warps=0, cluster_m=0):
    pad_name = "LAYOUT_PAD" if kernel == I4 else "STAGE_PAD"
    return Build(kernel, tuple(defines) + ((f"-DEPI_TMA={slots}",) if slots else ())
                 + ((f"-D{pad_name}={pad}",) if pad else ()) + ((f"-DLAYOUT_OFFSET={offset}",) if offset else ()),
                 slots, pad, offset, stages, producer_warps, cluster_m)


KIB = 1024
BUILDS = {"i4": b(I4), "i4_tma4": b(I4, slots=4), "i4_tma4_epi1st": b(I4, "-DLAYOUT_EPI_FIRST=1", slots=4),
          "i4_tma2": b(I4, slots=2), **{f"i4_tma2_pad{p}": b(I4, slots=2, pad=p * KIB) for p in (2, 4, 8)},
          **{f"i4_tma2_off{x}": b(I4, slots=2, offset=x * KIB) for x in (16, 32)}, "i4_pad16": b(I4, pad=16 * KIB),
          "i8_serp": b(SERP), "i8_lag": b(LAG), **{f"i8_pad{p}": b(SERP, pad=p * KIB) for p in (2, 4, 8)},
          "i8_off32": b(SERP, offset=32 * KIB)}
SANITIZE = ("i4_tma4_epi1st", "i4_tma2_pad8")
FULL = ("i4_tma4", "i4_tma4_epi1st")
if PFX == "dev7":  # DEV_SET=stages: fewer stages (4 ran faster than 5 for the INT4 kernel on 2026-12-02)
    BUILDS = {"i4": b(I4), "i4_tma4": b(I4, slots=4), "i4_s5": b(I4, stages=5), "i4_s3": b(I4, stages=3),
              "i4_s3_tma4": b(I4, slots=4, stages=3), "i4_s2_tma4": b(I4, slots=4, stages=2),
              "i8_serp": b(SERP), "i8_tma2": b(SERP, slots=2), "i8_s3": b(SERP, stages=3),
              "i8_s3_tma2": b(SERP, slots=2, stages=3)}
    SANITIZE = ("i4_s3_tma4", "i8_s3")
    FULL = ("i4_tma4", "i4_s3_tma4")
if PFX == "dev8":  # DEV_SET=combo: C through the copy engine with the producer's base addresses
    B1 = "-DUNPACK_BASE_ADDR=1"
    BUILDS = {"i4": b(I4), "i4_b1": b(I4, B1), "i4_tma4": b(I4, slots=4), "i4_tma4_b1": b(I4, B1, slots=4),
              "i4_tma2_b1": b(I4, B1, slots=2), "i8_serp": b(SERP), "i8_lag": b(LAG)}
    SANITIZE = ("i4_tma4_b1",)
    FULL = ("i4_tma4", "i4_tma4_b1")
if PFX == "dev9":  # DEV_SET=b_global: packed B from global memory, D K tiles ahead
    BUILDS = {"i4": b(I4), "i4_tma4": b(I4T), **{f"i4_g{d}_tma4": b(I4T, f"-DB_GLOBAL={d}") for d in (1, 2, 3)},
              "i4_g2": b(I4, "-DB_GLOBAL=2"), "i8_serp": b(SERP), "i8_lag": b(LAG)}
    SANITIZE = ("i4_g2_tma4", "i4_g3_tma4")
    FULL = ("i4_tma4", "i4_g2_tma4")
if PFX == "dev10":  # DEV_SET=alternate: two producer warpgroups, each taking every other K tile whole
    ALT = "-DPRODUCER_ALTERNATE=1"
    BUILDS = {"i4": b(I4), "i4_tma4": b(I4T), "i4_alt": b(I4, ALT, producer_warps=8),
              "i4_alt_tma4": b(I4T, ALT, producer_warps=8), "i8_serp": b(SERP), "i8_lag": b(LAG)}
    SANITIZE = ("i4_alt_tma4",)
    FULL = ("i4_tma4", "i4_alt_tma4")
if PFX == "dev11":  # DEV_SET=syncwarp: the producer warps rejoined at each K tile
    SW, G1 = "-DPRODUCER_SYNCWARP=1", "-DB_GLOBAL=1"
    BUILDS = {"i4": b(I4), "i4_sw": b(I4, SW), "i4_tma4": b(I4T), "i4_sw_tma4": b(I4T, SW),
              "i4_g1_tma4": b(I4T, G1), "i4_g1_sw_tma4": b(I4T, G1, SW), "i8_serp": b(SERP)}
    SANITIZE = ("i4_sw_tma4", "i4_g1_tma4")
    FULL = ("i4_tma4", "i4_sw_tma4", "i4_g1_tma4")
if PFX == "dev12":  # DEV_SET=cluster: clusters of two CTAs sharing the unpacked B
    BUILDS = {"i4": b(I4), "i4_cl": b(I4, cluster_m=2), "i4_tma4": b(I4T), "i4_cl_tma4": b(I4T, cluster_m=2),
              "i8_serp": b(SERP)}
    SANITIZE = ("i4_cl_tma4", "i4_cl")
    FULL = ("i4_tma4", "i4_cl_tma4")
CHECK_NS = (512, 1024, 2048, 4096, 6144, 8192)
TIME_NS = (6144, 8192)
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def prec_of(tag):
    return CFG["kernels"][BUILDS[tag].kernel]["precision"]


def tiling(tag):
    """The registry's tiling of the build's kernel, with the shared memory its layout takes: the
    registered bytes per stage and pad, times its stages, + its offset and its EPI_TMA slots
    (two consumer warpgroups); and its producer warps and cluster size where the build names them."""
    bd = BUILDS[tag]
    t = tiling_from_config(CFG, bd.kernel)
    stages = bd.stages or t.stages
    stage_bytes = (t.smem_bytes - 1024) // t.stages  # the registered layout: stages x stage + 1024 of slack
    return dataclasses.replace(t, stages=stages, smem_bytes=stages * (stage_bytes + bd.pad) + 1024 + bd.offset
                               + 2 * bd.slots * 8192, producer_warps=bd.producer_warps or t.producer_warps,
                               cluster_m=bd.cluster_m or t.cluster_m)


def runner(tag, n, inputs, ctas=None):
    run = GemmRunner(W / f"{tag}.cubin", BUILDS[tag].kernel, prec_of(tag), tiling(tag), n, n, n, 7, tma=True,
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
    kernel, extra = BUILDS[tag].kernel, list(BUILDS[tag].defines)
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
    resources = json.loads((W / f"{t}.json").read_text())
    builds[t] = {**dataclasses.asdict(BUILDS[t]), "smem_bytes": tiling(t).smem_bytes, "resources": resources,
                 "ptxas_advisories": [a["code"] for a in resources["ptxas_advisories"]],
                 **{op: sass.count(op) for op in ("IGMMA", "LDS.128", "STS.128", "FENCE.VIEW.ASYNC.S", "UTMASTG",
                                                  "UTMALDG", "LDG.E.NA.128.CONSTANT", "STL", "LDL")}}
(OUT / f"{PFX}_builds.json").write_text(json.dumps(builds, indent=1))
log("built", {t: (b["resources"]["registers"], b["resources"]["spill_store_bytes"], b["LDS.128"], b["STS.128"],
                  b["FENCE.VIEW.ASYNC.S"], *b["ptxas_advisories"]) for t, b in builds.items()})

checks, rounds = [], []
for n in CHECK_NS:
    inputs = {p: inputs_for(p, n, 17) for p in ("int8", "int4")}
    runs = {t: runner(t, n, inputs[prec_of(t)]) for t in BUILDS}
    try:
        for t, run in runs.items():
            if n == CHECK_NS[0]:
                log("first check", t, n)  # a build that hangs is the last one named
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
            for r in range(7 if PFX == "dev8" else 5):
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
cmd = [ncu, "--set", "full", "--clock-control", "none", "--profile-from-start", "off", "--force-overwrite", "--export",
       str(W / f"{PFX}_full"), sys.executable, str(Path(__file__).resolve()), "profile"]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "DEV_TAGS": ",".join(FULL)})
(W / f"{PFX}_full.log").write_text(f"$ DEV_TAGS={','.join(FULL)} {' '.join(cmd)}\nrc={p.returncode}\n"
                                    f"{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
log("ncu --set full", p.returncode)
if (W / f"{PFX}_full.ncu-rep").exists():
    subprocess.run(["xz", "-6", "-k", "-f", str(W / f"{PFX}_full.ncu-rep")], check=False)
    subprocess.run(["cp", str(W / f"{PFX}_full.ncu-rep.xz"), str(OUT)], check=False)
subprocess.run(f"cd {W} && tar cJf {OUT}/{PFX}_extra.tar.xz {PFX}_full.log  {PFX}_smi.csv {PFX}_ncu.log $(ls {PFX}_ncu.ncu-rep 2>/dev/null) *.sass *.log",
               shell=True)
log("done")
